package runner

import (
	"context"
	"strings"
	"testing"
)

// A scenario that names no variable runs with the server's own values, not
// with what the scenario before SET: "plain" after "tuned" must run plain.
// On the sandbox and on an external server (whose globals benchmatrix puts
// back at the end as well).
func TestUnnamedVariablePutBack(t *testing.T) {
	const src = `
[experiment]
duration = "1s"
warmup = "0s"
order = "written"
%s
[workload]
name = "oltp_point_select"
table_size = 1000
[scenarios]
tuned = { sync_binlog = 7, innodb_io_capacity = 1234 }
plain = {}
half = { sync_binlog = 9 }
`
	t.Run("sandbox", func(t *testing.T) {
		needServer(t)
		plan := planFrom(t, strings.Replace(src, "%s", "", 1))
		if r := plan.Cells[1].Change.Reset; len(r) != 2 {
			t.Fatalf("the plan puts back %v before plain, want sync_binlog and innodb_io_capacity", r)
		}
		run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: sandboxStart, Log: testWriter{t}})
		if err != nil {
			t.Fatal(err)
		}
		tuned, plain, half := run.Cells[0], run.Cells[1], run.Cells[2]
		if tuned.Effective["sync_binlog"] != "7" || tuned.Effective["innodb_io_capacity"] != "1234" {
			t.Fatalf("tuned ran with %v", tuned.Effective)
		}
		if plain.Effective["sync_binlog"] == "7" || plain.Effective["innodb_io_capacity"] == "1234" || len(plain.Change.Reset) != 2 {
			t.Fatalf("plain ran with tuned's values: %v (put back %v)", plain.Effective, plain.Change.Reset)
		}
		if half.Effective["sync_binlog"] != "9" || len(half.Change.Reset) != 0 {
			t.Fatalf("half: %v (put back %v)", half.Effective, half.Change.Reset)
		}
	})
	t.Run("external", func(t *testing.T) {
		root, dsn := externalTarget(t)
		before := map[string]string{"sync_binlog": global(t, root, "sync_binlog"), "innodb_io_capacity": global(t, root, "innodb_io_capacity")}
		plan := planExternal(t, dsn, strings.Replace(src, "%s", "[server]\nprovider = \"external\"\nschema = \"sbtest\"", 1))
		run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: externalStart(dsn), Log: testWriter{t}})
		if err != nil {
			t.Fatal(err)
		}
		plain := run.Cells[1]
		for n, v := range before {
			if plain.Effective[n] != v {
				t.Errorf("plain ran with %s = %q, the server's own is %q", n, plain.Effective[n], v)
			}
			if got := global(t, root, n); got != v {
				t.Errorf("after the run %s = %q, was %q", n, got, v)
			}
		}
	})
}
