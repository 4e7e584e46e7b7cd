package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/engine"
	"benchmatrix/oltp"
	"benchmatrix/record"
	"benchmatrix/server"
)

// A full disk under the datadir fails the cell naming "no space"; the run
// goes on to the next cell and the sandbox directory is removed at the end.
func TestFullDisk(t *testing.T) {
	needServer(t)
	if os.Geteuid() != 0 {
		t.Skip("mounting a small filesystem needs root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=400m,mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("mount tmpfs: %v %s", err, out)
		}
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	var dir string
	start := func(ctx context.Context, spec StartSpec) (server.Server, error) {
		sb, err := server.StartSandbox(ctx, server.SandboxConfig{TempDir: mnt, Startup: spec.Startup})
		if err == nil {
			dir = sb.Dir()
		}
		return sb, err
	}
	// The disk fills up after the preflight checks (which would refuse a
	// full one): just before the first load, leave the server about 2 MiB.
	fill := func() {
		var st syscall.Statfs_t
		syscall.Statfs(mnt, &st)
		free := int64(st.Bavail)*int64(st.Bsize) - 2<<20
		f, err := os.Create(filepath.Join(mnt, "filler"))
		if err == nil {
			err = syscall.Fallocate(int(f.Fd()), 0, 0, free)
			f.Close()
		}
		if err != nil {
			t.Errorf("fill the filesystem: %v", err)
		}
	}
	plan := planFrom(t, `
[experiment]
duration = "2s"
warmup = "0s"
order = "written"
[workload]
name = "oltp_point_select"
table_size = 50000
[axes]
sync_binlog = [0, 1]
`)
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: start, Log: testWriter{t},
		Workload: fillingWorkload{oltp.Workload{}, fill}})
	if err == nil {
		t.Fatal("the run succeeded on a full disk")
	}
	if run == nil || len(run.Cells) != 2 {
		t.Fatalf("cells recorded: %v (err %v); want both (the run goes on)", run, err)
	}
	for _, c := range run.Cells {
		if c.Status != record.CellFailed || !strings.Contains(c.Error, "no space") {
			t.Errorf("%s: status %s, error %q; want a failure naming no space", c.Name, c.Status, c.Error)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("sandbox directory %s remains: %v", dir, err)
	}
}

// fillingWorkload fills the disk before its first prepare.
type fillingWorkload struct {
	oltp.Workload
	fill func()
}

func (w fillingWorkload) Prepare(ctx context.Context, cfg *mysql.Config, o engine.Options) error {
	if w.fill != nil {
		w.fill()
	}
	return w.Workload.Prepare(ctx, cfg, o)
}
