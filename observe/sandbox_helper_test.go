package observe

import (
	"context"
	"os"
	"testing"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/server"
)

// limitedSandbox starts a real sandbox in a temporary directory of its own
// (TMPDIR, so that the datadir is on this machine's disk) with the startup
// settings, and puts it under lim when lim is not zero; it skips when this
// machine has no MariaDB or cannot apply the limits. The sandbox stops and
// the directory goes when the test ends. The context bounds the test.
func limitedSandbox(t *testing.T, lim catalog.LimitSet, startup ...server.Setting) (context.Context, *server.Sandbox, string) {
	t.Helper()
	if _, err := server.FindBinary(""); err != nil {
		t.Skip(err)
	}
	if !lim.IsZero() {
		if err := server.CheckLimitSupport(lim); err != nil {
			t.Skipf("this machine cannot apply limits: %v", err)
		}
	}
	tmp, err := os.MkdirTemp("", "obs-sb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	sb, err := server.StartSandbox(ctx, server.SandboxConfig{Limits: lim, Startup: startup})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Stop(context.Background()) })
	if !lim.IsZero() {
		if _, err := sb.SetLimits(ctx, lim); err != nil {
			t.Fatal(err)
		}
	}
	return ctx, sb, tmp
}

// samplerOn starts the sampler on sb as the runner does: its own
// connection, the server's PID, datadir and cgroup (when it has one). The
// connection closes when the test ends; the caller stops the sampler.
func samplerOn(t *testing.T, ctx context.Context, sb *server.Sandbox) *Sampler {
	t.Helper()
	paths, _ := sb.Cgroup()
	sdb, err := OpenDB(sb.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sdb.Close() })
	info := sb.Info()
	s, err := Start(ctx, Config{DB: sdb, Flavor: info.Flavor, Datadir: info.Datadir, ServerPID: sb.PID(), Cgroup: paths})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
