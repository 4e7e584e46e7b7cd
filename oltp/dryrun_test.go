package oltp

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var queriesPerformed = regexp.MustCompile(`(?s)queries performed:.*?total:\s+\d+\n|total number of events:\s+\d+\n`)

// TestDryRunMatchesSysbench: with --mysql-dry-run neither tool needs a
// server; the statements of a fixed number of events all count as
// "other", the same numbers for both (sysbench itself is the yardstick
// when installed; without it, the counts of oltp_read_write's 18
// statements and 2 transaction statements per event are checked).
func TestDryRunMatchesSysbench(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		"oltp_read_write --events=50 --time=0 run",
		"oltp_insert --events=50 --time=0 --threads=2 run",
		"--test=/src/tests/include/oltp_legacy/oltp.lua --events=50 --time=0 --oltp-point-selects=3 run",
	} {
		t.Run(line, func(t *testing.T) {
			args := append([]string{"--mysql-dry-run"}, cliFields(line)...)
			var stdout, stderr bytes.Buffer
			if code := Main(context.Background(), args, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
			}
			ours := strings.Join(queriesPerformed.FindAllString(stdout.String(), -1), "")
			if line == "oltp_read_write --events=50 --time=0 run" &&
				!strings.Contains(ours, "other:                           1000\n") {
				t.Errorf("oltp_read_write: want 1000 other statements:\n%s", ours)
			}
			if strings.HasPrefix(line, "--test") {
				// sysbench needs the script itself: only when its tree is here.
				dir := sysbenchLegacyDir(t)
				args = append([]string{"--mysql-dry-run", "--test=" + filepath.Join(dir, "oltp.lua")}, cliFields(line)[1:]...)
			}
			theirs := strings.Join(queriesPerformed.FindAllString(sysbenchDryRun(t, args...), -1), "")
			if ours != theirs {
				t.Errorf("ours:\n%s\nsysbench:\n%s", ours, theirs)
			}
		})
	}
}
