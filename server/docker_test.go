package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"

	"benchmatrix/catalog"
)

// needDockerImage returns the image to test with, building it with the
// project's script when it is missing. Without a Docker engine it skips,
// except under CI, where the engine is part of the contract.
func needDockerImage(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	if err := DockerAvailable(ctx); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI needs a Docker engine: %v", err)
		}
		t.Skipf("skipping the docker provider tests: %v", err)
	}
	image := catalog.DefaultDockerImage
	ok, err := DockerImageExists(ctx, image)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		_, file, _, _ := runtime.Caller(0)
		script := filepath.Join(filepath.Dir(file), "..", "scripts", "build-mariadb-image.sh")
		bctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
		defer cancel()
		t.Logf("building %s with %s (cached after the first time)", image, script)
		out, err := exec.CommandContext(bctx, script, image).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
		t.Logf("%s", out)
	}
	return image
}

func ourContainers(t *testing.T) []dc.APIContainers {
	t.Helper()
	pool, err := dockertest.NewPool("")
	if err != nil {
		t.Fatal(err)
	}
	list, err := pool.Client.ListContainers(dc.ListContainersOptions{All: true,
		Filters: map[string][]string{"label": {dockerLabelOwnerPID + "=" + strconv.Itoa(os.Getpid())}}})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func TestDockerStartApplyRestartStop(t *testing.T) {
	image := needDockerImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const password = "Dock3r-S3cret!x"
	d, err := StartDocker(ctx, DockerConfig{Image: image, Password: password, Startup: []Setting{{"log_bin", "binlog"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop(context.Background()) })

	info := d.Info()
	if info.Provider != "docker" || info.Flavor != catalog.MariaDB || !strings.Contains(info.Version, "MariaDB") ||
		info.Binary != image || !strings.HasPrefix(info.Address, "127.0.0.1:") {
		t.Fatalf("info = %+v", info)
	}
	if b, _ := json.Marshal(info); strings.Contains(string(b), password) {
		t.Fatalf("password in info %s", b)
	}
	db := openDB(t, d)
	// The startup flag reached the server through the container's command.
	if v, err := ReadGlobal(ctx, db, "log_bin"); err != nil || v != "1" {
		t.Fatalf("log_bin = %q, %v", v, err)
	}
	eff, err := ApplyGlobals(ctx, db, []Setting{{"sync_binlog", "1"}, {"innodb_flush_log_at_trx_commit", "2"}})
	if err != nil || eff["sync_binlog"] != "1" || eff["innodb_flush_log_at_trx_commit"] != "2" {
		t.Fatalf("apply: %v %v", eff, err)
	}
	for _, q := range []string{"CREATE DATABASE bm", "CREATE TABLE bm.kept (id INT PRIMARY KEY) ENGINE=InnoDB",
		"INSERT INTO bm.kept VALUES (1), (2), (3)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	first := d.ContainerID()
	start := time.Now()
	if err := d.Restart(ctx, []Setting{{"log_bin", "binlog"}, {"innodb_doublewrite", "false"}}); err != nil {
		t.Fatal(err)
	}
	t.Logf("restart with a new container took %s", time.Since(start).Round(time.Millisecond))
	if d.ContainerID() == first || d.ContainerID() == "" {
		t.Fatal("restart kept the same container")
	}
	// The first container shut down cleanly (SIGTERM, not SIGKILL).
	if !strings.Contains(d.LogTail(1000), "ready for connections") {
		t.Errorf("log tail lacks the start message:\n%s", d.LogTail(20))
	}
	db2 := openDB(t, d)
	if v, err := ReadGlobal(ctx, db2, "innodb_doublewrite"); err != nil || v != "0" {
		t.Fatalf("innodb_doublewrite after restart = %q, %v; want OFF", v, err)
	}
	var n int
	if err := db2.QueryRowContext(ctx, "SELECT COUNT(*) FROM bm.kept").Scan(&n); err != nil || n != 3 {
		t.Fatalf("table after restart: %d rows, %v", n, err)
	}
	if s := d.Startup(); len(s) != 2 || s[1].Name != "innodb_doublewrite" {
		t.Fatalf("startup = %v", s)
	}
	db2.Close()

	dir := d.Dir()
	if err := d.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if cs := ourContainers(t); len(cs) != 0 {
		t.Fatalf("containers left after Stop: %+v", cs)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("datadir %s still there: %v", dir, err)
	}
	// The last container's log survives its removal, and it shut down cleanly.
	if tail := d.LogTail(5); !strings.Contains(tail, "Shutdown complete") {
		t.Errorf("log after Stop:\n%s", tail)
	}
	if strings.Contains(d.LogTail(10000), password) {
		t.Error("password in the server log")
	}
}

func TestDockerWrongPasswordAndKill(t *testing.T) {
	image := needDockerImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	d, err := StartDocker(ctx, DockerConfig{Image: image}) // random password
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop(context.Background()) })
	if d.Endpoint().Passwd == "" {
		t.Fatal("no password generated")
	}
	// root@'%' really needs the password.
	c := d.Endpoint()
	c.Passwd = "wrong"
	conn, _ := mysql.NewConnector(c)
	db := sql.OpenDB(conn)
	defer db.Close()
	var me *mysql.MySQLError
	if err := db.PingContext(ctx); !errors.As(err, &me) || me.Number != 1045 {
		t.Fatalf("wrong password: %v", err)
	}
	dir := d.Dir()
	killOthers() // what KillAll runs after the sandboxes
	if cs := ourContainers(t); len(cs) != 0 {
		t.Fatalf("containers left after the emergency kill: %+v", cs)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("datadir %s still there: %v", dir, err)
	}
}

func TestDockerRemoveStaleContainers(t *testing.T) {
	image := needDockerImage(t)
	ctx := context.Background()
	// A process id that is certainly dead: a child we already waited for.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	pool, err := dockertest.NewPool("")
	if err != nil {
		t.Fatal(err)
	}
	hostname, _ := os.Hostname()
	repo, tag := splitImage(image)
	// No password in the environment: the entrypoint exits at once, which
	// leaves a stopped container, as a killed run would.
	res, err := pool.RunWithOptions(&dockertest.RunOptions{Repository: repo, Tag: tag,
		Labels: map[string]string{dockerLabelOwnerPID: strconv.Itoa(dead), dockerLabelOwnerHost: hostname}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pool.Purge(res) })
	staleDir, err := os.MkdirTemp("", DockerDirPrefix+strconv.Itoa(dead)+"-")
	if err != nil {
		t.Fatal(err)
	}
	removed, err := RemoveStaleContainers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Another test process on this engine may have removed it first, so
	// what counts is that it is gone.
	if _, err := pool.Client.InspectContainer(res.Container.ID); err == nil {
		t.Fatalf("stale container %s kept (removed %v)", res.Container.Name, removed)
	}
	if !slices.Contains(removed, strings.TrimPrefix(res.Container.Name, "/")) {
		t.Logf("stale container removed by someone else; this call removed %v", removed)
	}
	if _, err := os.Stat(staleDir); !os.IsNotExist(err) {
		t.Fatalf("stale dir %s kept: %v", staleDir, err)
	}
}

func TestSplitImage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, repo, tag string }{
		{"benchmatrix/mariadb:10.11", "benchmatrix/mariadb", "10.11"},
		{"mariadb", "mariadb", "latest"},
		{"localhost:5000/mariadb", "localhost:5000/mariadb", "latest"},
		{"localhost:5000/mariadb:11", "localhost:5000/mariadb", "11"},
	} {
		if r, tg := splitImage(c.in); r != c.repo || tg != c.tag {
			t.Errorf("splitImage(%q) = %q, %q", c.in, r, tg)
		}
	}
}

// TestDockerAliveAndPIDAfterCrash kills the container's server from the
// host, as a crash would, and brings it back the way the runner's recovery
// does.
func TestDockerAliveAndPIDAfterCrash(t *testing.T) {
	image := needDockerImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	d, err := StartDocker(ctx, DockerConfig{Image: image})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = d.Stop(context.Background())
		if cs := ourContainers(t); len(cs) != 0 {
			t.Errorf("containers left after Stop: %+v", cs)
		}
	})
	if !d.Alive() {
		t.Fatal("a started server is not alive")
	}
	pid := serverPID(t, d)
	t.Logf("container %.12s: server is host pid %d", d.ContainerID(), pid)

	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill %d: %v", pid, err)
	}
	start := time.Now()
	for d.Alive() {
		if time.Since(start) > time.Minute {
			t.Fatal("still alive a minute after SIGKILL")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("not alive %s after SIGKILL", time.Since(start).Round(time.Millisecond))
	if d.PID() != pid {
		t.Errorf("PID() = %d after the crash, want the cached %d until the container changes", d.PID(), pid)
	}

	if err := d.Restart(ctx, d.Startup()); err != nil {
		t.Fatalf("restart after the crash: %v", err)
	}
	if !d.Alive() {
		t.Fatal("not alive after the restart")
	}
	if again := serverPID(t, d); again == pid {
		t.Fatalf("PID %d did not change with the new container", again)
	}
	db := openDB(t, d)
	if err := db.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()

	if err := d.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if d.Alive() || d.PID() != 0 {
		t.Fatalf("after Stop: Alive %v, PID %d", d.Alive(), d.PID())
	}
}

// serverPID returns d.PID() after checking that the host sees it as the
// server: comm is mariadbd and /proc/PID/stat, which the CPU sampler
// reads, is readable from here.
func serverPID(t *testing.T, d *Docker) int {
	t.Helper()
	pid := d.PID()
	if pid <= 0 {
		t.Fatalf("PID() = %d: the engine's PID namespace is not ours?", pid)
	}
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil || strings.TrimSpace(string(comm)) != "mariadbd" {
		t.Fatalf("/proc/%d/comm = %q, %v; want mariadbd", pid, comm, err)
	}
	if _, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestContainerInit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status string
		want   bool
	}{
		{"Name:\tmariadbd\nPid:\t4242\nNSpid:\t4242\t1\nNSpgid:\t4242\t1\n", true},
		{"Name:\tmariadbd\nNSpid:\t4242\t77\t1\n", true}, // nested twice
		{"Name:\tmariadbd\nNSpid:\t4242\n", false},       // our own namespace
		{"Name:\tmariadbd\nNSpid:\t4242\t15\n", false},   // not the container's first process
		{"Name:\tmariadbd\nPid:\t4242\n", false},         // no NSpid line (old kernel)
		{"", false},
	} {
		if got := containerInit(c.status); got != c.want {
			t.Errorf("containerInit(%q) = %v, want %v", c.status, got, c.want)
		}
	}
	// This test process is no container's first process, and a process
	// that does not exist is not visible.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{os.Getpid(), cmd.Process.Pid} {
		if visible, isServer := hostServer(pid); visible || isServer {
			t.Errorf("hostServer(%d) = %v, %v; want false, false", pid, visible, isServer)
		}
	}
}

// A stale container another sweep is already removing, or has removed, is
// not an error of this sweep (TestDockerRemoveStaleContainers failed with
// "removal of container ... is already in progress" when two test
// processes swept one engine at once).
func TestRemovingElsewhere(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{&dc.NoSuchContainer{ID: "x"}, true},
		{fmt.Errorf("wrapped: %w", &dc.Error{Status: 409, Message: "removal of container x is already in progress"}), true},
		{&dc.Error{Status: 404, Message: "No such container: x"}, true},
		{&dc.Error{Status: 409, Message: "You cannot remove a running container"}, false},
		{&dc.Error{Status: 500, Message: "driver failed"}, false},
		{errors.New("connection refused"), false},
	} {
		if got := removingElsewhere(c.err); got != c.want {
			t.Errorf("removingElsewhere(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
