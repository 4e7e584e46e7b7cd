package oltp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseConfigFile(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  string
	}{
		{"threads=8\n", []string{"--threads=8"}, ""},
		{"no equals sign here\nmysql-host = db1 # the primary\n", []string{"--mysql-host=db1"}, ""},
		{"report-checkpoints=10, 20,'30'\n", []string{"--report-checkpoints=10,20,30"}, ""},
		{`mysql-password="a b,c"` + "\n", []string{"--mysql-password=a b,c"}, ""},
		{"histogram=\n", []string{"--histogram"}, ""},
		{"x=1\nmysql-db='unterminated\n", nil, "unexpected EOL on line 2"},
	}
	for _, c := range cases {
		got, err := parseConfigFile([]byte(c.in))
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// The file's options stand where --config-file stands: later options
// override them, earlier ones are overridden.
func TestConfigFileOrder(t *testing.T) {
	f := filepath.Join(t.TempDir(), "sb.cfg")
	if err := os.WriteFile(f, []byte("threads=3\ntime=7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inv, err := ParseCommandLine([]string{"--threads=2", "--config-file=" + f, "--time=9", "oltp_point_select", "run"})
	if err != nil {
		t.Fatal(err)
	}
	if inv.Options.Threads != 3 || inv.Options.Time.Seconds() != 9 {
		t.Errorf("threads %d, time %v; want 3 (the file's) and 9s (after it)", inv.Options.Threads, inv.Options.Time)
	}
	inv, err = ParseCommandLine([]string{"--config-file=" + f + ".missing", "oltp_point_select", "run"})
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Notices) == 0 || !strings.HasSuffix(inv.Notices[0].Text, ".missing: No such file or directory") {
		t.Errorf("notices %+v: want sysbench's perror line for the missing file", inv.Notices)
	}
}
