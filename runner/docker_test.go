package runner

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"benchmatrix/server"
)

func needDockerImage(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	err := server.DockerAvailable(ctx)
	if err == nil {
		var ok bool
		ok, err = server.DockerImageExists(ctx, server.DefaultDockerImage)
		if err == nil && !ok {
			err = &server.ImageMissingError{Image: server.DefaultDockerImage}
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
	start := func(ctx context.Context, spec StartSpec) (server.Server, error) {
		return server.StartDocker(ctx, server.DockerConfig{Image: spec.Image, Startup: spec.Startup})
	}
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: start, Log: testWriter{t}})
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
	if out, err := exec.Command("docker", "tag", server.DefaultDockerImage, alt).CombinedOutput(); err != nil {
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
	start := func(ctx context.Context, spec StartSpec) (server.Server, error) {
		return server.StartDocker(ctx, server.DockerConfig{Image: spec.Image, Startup: spec.Startup})
	}
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: start, Log: testWriter{t}})
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
