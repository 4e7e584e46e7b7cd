package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Problems only the server or the machine can show are refused before the
// first cell, with the numbers that decide them.
func TestPreflightRefusals(t *testing.T) {
	needServer(t)
	for _, c := range []struct{ name, src, want string }{
		{"threads above max_connections", `
[workload]
name = "oltp_point_select"
[axes]
threads = [1, 200]
`, "max_connections is 151"},
		{"data beyond the free disk", `
[workload]
name = "oltp_point_select"
table_size = 2000000000
tables = 4
`, "free"},
		{"unknown server variable", `
[workload]
name = "oltp_point_select"
[scenarios]
a = { sync_binlogg = 1 }
`, "unknown server variable(s) sync_binlogg"},
		{"[inject] SQL the server refuses", `
[workload]
name = "oltp_point_select"
[inject]
every = "5s"
hold = "1s"
sql = "FLUSH TABLEZ WITH READ LOCK"
`, `[inject] sql "FLUSH TABLEZ WITH READ LOCK": Error 1064`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r")
			_, err := Run(context.Background(), planFrom(t, c.src), Config{OutDir: out, Start: sandboxStart})
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a UsageError mentioning %q", err, c.want)
			}
			// Refused before the first cell: no results directory that would
			// block the corrected run on the same -o.
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatalf("the refused run left %s (%v)", out, err)
			}
			if left := ourServers(t); len(left) > 0 {
				t.Fatalf("servers left: %v", left)
			}
		})
	}
}

func TestEstimateAndHumanBytes(t *testing.T) {
	t.Parallel()
	if got := humanBytes(3 << 30); got != "3.0 GiB" {
		t.Errorf("humanBytes = %s", got)
	}
	if got := humanBytes(512); got != "512 B" {
		t.Errorf("humanBytes = %s", got)
	}
}

// 1,000 threads on a small server: with max_connections raised it runs;
// every worker has its own connection.
func TestThousandThreads(t *testing.T) {
	needServer(t)
	plan := planFrom(t, `
[experiment]
duration = "3s"
warmup = "0s"
[server.config]
max_connections = 1100
[workload]
name = "oltp_point_select"
table_size = 1000
threads = 1000
`)
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: sandboxStart})
	if err != nil {
		if run != nil && len(run.Cells) > 0 {
			t.Fatalf("%v: %s", err, run.Cells[0].Error)
		}
		t.Fatal(err)
	}
	c := run.Cells[0]
	if c.Result == nil || c.Result.Events == 0 {
		t.Fatalf("no events: %+v", c)
	}
	if c.Result.Fairness.EventsAvg <= 0 {
		t.Fatalf("fairness: %+v", c.Result.Fairness)
	}
}
