package tpcc_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"benchmatrix/exitcode"
	"benchmatrix/experiment"
)

// A manifest's bad tpcc options are refused before anything runs (exit 2),
// naming the key and its line: an option no engine reads, one only another
// engine reads, and scale = 0 (docs/bad-input.md). The command line's are
// in TestParseCommandLine, a table set missing at run time in
// TestPrepareRunCheck.
func TestManifestRefusesBadTPCCOptions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ line, want string }{
		{`tabels = 1`, "line 8: workload.tabels: unknown workload option"},
		{`scale = 0`, "line 8: workload.scale: scale = 0: from 1 to 32767 warehouses"},
		{`warehouses = -1`, "line 8: workload.warehouses:"},
		{`table_size = 10`, "line 8: workload.table_size: tpcc does not read table_size (only oltp_read_write,"},
		{`trx_level = "XX"`, "line 8: workload.trx_level:"},
	} {
		src := fmt.Sprintf("[experiment]\nname = \"x\"\nduration = \"5s\"\n[server]\nprovider = \"sandbox\"\n[workload]\nname = \"tpcc\"\n%s\n", c.line)
		m, err := experiment.Parse("bad.toml", src)
		if err == nil {
			_, err = experiment.Resolve(m, experiment.Flags{Flavor: "mariadb"})
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.line, err, c.want)
			continue
		}
		var coder exitcode.Coder
		if !errors.As(err, &coder) || coder.ExitCode() != exitcode.Usage {
			t.Errorf("%s: %v does not exit 2", c.line, err)
		}
	}
}
