package runner

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/record"
	"benchmatrix/server"
)

func needDockerImage(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	err := server.DockerAvailable(ctx)
	if err == nil {
		var ok bool
		ok, err = server.DockerImageExists(ctx, catalog.DefaultDockerImage)
		if err == nil && !ok {
			err = &server.ImageMissingError{Image: catalog.DefaultDockerImage}
		}
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI runs make test, which builds the image first: %v", err)
		}
		t.Skip(err)
	}
}

// The docker provider through the runner: SET GLOBAL per cell, a restart
// for a restart-only axis (a new container on the same datadir), results.
func TestDockerMatrix(t *testing.T) {
	needDockerImage(t)
	plan := planFrom(t, `
[experiment]
duration = "1s"
warmup = "0s"
order = "written"
[server]
provider = "docker"
[workload]
name = "oltp_point_select"
table_size = 1000
[axes]
innodb_doublewrite = ["ON", "OFF"]
sync_binlog = [0, 1]
`)
	// No Start: the manifest's provider (docker) opens the servers.
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if run.Server.Provider != "docker" || len(run.Cells) != 4 {
		t.Fatalf("provider %s, %d cells", run.Server.Provider, len(run.Cells))
	}
	for _, c := range run.Cells {
		if c.Status != "ok" || c.Result.Events == 0 {
			t.Fatalf("%s: %s %s", c.Name, c.Status, c.Error)
		}
		if c.Effective["innodb_doublewrite"] != c.Param("innodb_doublewrite") || c.Effective["sync_binlog"] != c.Param("sync_binlog") {
			t.Errorf("%s: effective %v", c.Name, c.Effective)
		}
	}
	if !run.Cells[2].Restarted || run.Cells[1].Restarted || run.Cells[3].Restarted {
		t.Errorf("restarts: %v %v %v", run.Cells[1].Restarted, run.Cells[2].Restarted, run.Cells[3].Restarted)
	}
	if run.Cells[2].Data != "reused" {
		t.Errorf("data after the restart: %s (the datadir should survive the new container)", run.Cells[2].Data)
	}
}

// image as an axis (version comparisons): each image is a new server, and
// its data is loaded on it.
func TestDockerImageAxis(t *testing.T) {
	needDockerImage(t)
	alt := "benchmatrix/mariadb:axis-test"
	if out, err := exec.Command("docker", "tag", catalog.DefaultDockerImage, alt).CombinedOutput(); err != nil {
		t.Fatalf("docker tag: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("docker", "rmi", alt).Run() })
	plan := planFrom(t, `
[experiment]
duration = "1s"
warmup = "0s"
order = "written"
[server]
provider = "docker"
[workload]
name = "oltp_point_select"
table_size = 1000
[axes]
image = ["benchmatrix/mariadb:10.11", "benchmatrix/mariadb:axis-test"]
`)
	// No Start: the manifest's provider (docker) opens the servers.
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Cells) != 2 || run.Cells[1].Data != "loaded" || !run.Cells[1].Restarted {
		t.Fatalf("second image: data %q, restarted %v", run.Cells[1].Data, run.Cells[1].Restarted)
	}
	if got := plan.Cells[1].Change.Cost(); got != "start+reload" {
		t.Errorf("plan cost of the second image: %s", got)
	}
}

// The container's mariadbd killed mid-cell: the cell fails as "the server
// died" with its log, the matrix goes on on a new container, and every
// cell's cpu_server_pct is filled from the container's host PID.
func TestDockerServerKilledMidCell(t *testing.T) {
	needDockerImage(t)
	plan := planFrom(t, `
[experiment]
duration = "4s"
warmup = "0s"
order = "written"
[server]
provider = "docker"
[workload]
name = "oltp_point_select"
table_size = 1000
[axes]
sync_binlog = [0, 1, 2]
`)
	var current atomic.Pointer[server.Docker]
	start := func(ctx context.Context, spec StartSpec) (server.Server, error) {
		d, err := server.StartDocker(ctx, server.DockerConfig{Image: spec.Image, Startup: spec.Startup})
		if err == nil {
			current.Store(d)
		}
		return d, err
	}
	pw := &phaseWatch{measuring: make(chan struct{}), done: make(chan struct{})}
	go func() {
		select {
		case <-pw.measuring:
		case <-time.After(3 * time.Minute):
			return
		}
		time.Sleep(1500 * time.Millisecond)
		if pid := current.Load().PID(); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: start, Log: testWriter{t}, Progress: pw})
	if !errors.Is(err, ErrCellsFailed) || len(run.Cells) != 3 {
		t.Fatalf("err %v, %d cells", err, len(run.Cells))
	}
	first := run.Cells[0]
	if first.Status != record.CellFailed || !strings.HasPrefix(first.Error, "the server died") {
		t.Fatalf("first cell: %s %q", first.Status, first.Error)
	}
	col := slices.Index(run.MetricColumns, "cpu_server_pct")
	for i, c := range run.Cells[1:] {
		if c.Status != record.CellOK || c.Result.Events == 0 {
			t.Fatalf("cell %d after the kill: %s %s", i+2, c.Status, c.Error)
		}
		filled := 0
		for _, row := range c.Metrics {
			if col >= 0 && col < len(row) && !math.IsNaN(row[col]) && row[col] > 0 {
				filled++
			}
		}
		if filled == 0 {
			t.Errorf("cell %d: cpu_server_pct empty in all %d rows (notes %v)", i+2, len(c.Metrics), c.ObserveNotes)
		}
	}
}
