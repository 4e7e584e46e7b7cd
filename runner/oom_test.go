package runner

import (
	"context"
	"database/sql"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/catalog"
	"benchmatrix/record"
	"benchmatrix/server"
)

// A server killed by its memory limit mid-cell: the cell fails saying so,
// with the limit and the cgroup's OOM kill count, not as a server that
// merely died; the server comes back and the next cell runs. A side
// session pushes the server past the cell's memory limit (a MEMORY table
// growing past it), as a workload that needs more than the limit would.
func TestMemoryLimitKillNamed(t *testing.T) {
	needServer(t)
	needLimits(t, catalog.LimitSet{Memory: 1 << 30})
	plan := planFrom(t, oomManifest("15s", ""))
	var current atomic.Pointer[server.Sandbox]
	start := trackedSandboxes(&current)
	hogged := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			if sb := current.Load(); sb != nil && sb.Alive() && measuring(sb) {
				time.Sleep(time.Second)
				hogged <- hog(sb.Endpoint())
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		hogged <- nil
	}()
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: start, Log: testWriter{t}})
	herr := <-hogged
	if err == nil {
		t.Fatalf("want an error for the failed cell; the hog's statement ended with %v", herr)
	}
	if len(run.Cells) != 2 {
		t.Fatalf("%d cells: %v", len(run.Cells), err)
	}
	tight, roomy := run.Cells[0], run.Cells[1]
	want := "the server was killed by its memory limit (memory = 320M, 1 OOM kill in the cell)"
	if tight.Status != record.CellFailed || !strings.HasPrefix(tight.Error, want) || strings.Contains(tight.Error, "the server died") {
		t.Fatalf("tight: status %s, error %q; want it to begin %q", tight.Status, tight.Error, want)
	}
	if roomy.Status != record.CellOK || roomy.Result.Events == 0 {
		t.Fatalf("roomy: %s %s", roomy.Status, roomy.Error)
	}
}

// hog grows a MEMORY table in the server past any limit this test sets.
func hog(cfg *mysql.Config) error {
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(c)
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		return err
	}
	defer conn.Close()
	// One row of 4,000 bytes, doubled until the server dies (2^17 rows
	// are 512 MiB, past any limit here).
	for _, q := range []string{
		"SET SESSION max_heap_table_size = 4294967296",
		"CREATE TABLE sbtest.hog (c VARCHAR(4000)) ENGINE = MEMORY CHARACTER SET latin1",
		"INSERT INTO sbtest.hog VALUES (REPEAT('x', 4000))",
	} {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			return err
		}
	}
	for range 20 {
		if _, err := conn.ExecContext(context.Background(), "INSERT INTO sbtest.hog SELECT c FROM sbtest.hog"); err != nil {
			return err
		}
	}
	return nil
}

// The same with the docker provider: the engine's OOMKilled state names
// the memory limit; the next cell runs in a new container.
func TestDockerMemoryLimitKillNamed(t *testing.T) {
	needDockerImage(t)
	plan := planFrom(t, oomManifest("40s", "[server]\nprovider = \"docker\"\n"))
	var current atomic.Pointer[server.Docker]
	start := func(ctx context.Context, spec StartSpec) (server.Server, error) {
		d, err := server.StartDocker(ctx, server.DockerConfig{Image: spec.Image, Startup: spec.Startup})
		if err == nil {
			current.Store(d)
		}
		return d, err
	}
	pw := &phaseWatch{measuring: make(chan struct{}), done: make(chan struct{})}
	hogged := make(chan error, 1)
	go func() {
		select {
		case <-pw.measuring:
		case <-time.After(3 * time.Minute):
			hogged <- nil
			return
		}
		time.Sleep(time.Second)
		hogged <- hog(current.Load().Endpoint())
	}()
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: start, Log: testWriter{t}, Progress: pw})
	herr := <-hogged
	if err == nil || len(run.Cells) != 2 {
		t.Fatalf("err %v, %d cells; the hog's statement ended with %v", err, len(run.Cells), herr)
	}
	tight, roomy := run.Cells[0], run.Cells[1]
	want := "the server was killed by its memory limit (memory = 320M, 1 OOM kill in the cell)"
	if tight.Status != record.CellFailed || !strings.HasPrefix(tight.Error, want) {
		t.Fatalf("tight: status %s, error %q; want it to begin %q", tight.Status, tight.Error, want)
	}
	if roomy.Status != record.CellOK || roomy.Result.Events == 0 {
		t.Fatalf("roomy: %s %s", roomy.Status, roomy.Error)
	}
}

// oomManifest is the two-cell manifest of the memory-limit tests: a limit
// the server outgrows (tight) and one it does not (roomy), each cell the
// given duration, server holding any [server] section.
func oomManifest(duration, server string) string {
	return `
[experiment]
duration = "` + duration + `"
warmup = "0s"
order = "written"
` + server + `[server.config]
innodb_buffer_pool_size = "64M"
[workload]
name = "oltp_point_select"
table_size = 1000
[scenarios]
tight = { memory = "320M" }
roomy = { memory = "2G" }
`
}
