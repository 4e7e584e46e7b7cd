package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/cache"
	"benchmatrix/catalog"
	"benchmatrix/record"
	"benchmatrix/results"
	"benchmatrix/server"
)

var binary string

func TestMain(m *testing.M) {
	// The commands these tests run never reach the user's data cache.
	os.Setenv(cache.EnvVar, cache.Off)
	sweepTestDirs()
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", cliTestPrefix, os.Getpid()))
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "benchmatrix")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	server.Cleanup() // the golden datadirs of the sandboxes the tests started themselves
	os.Exit(code)
}

// cliTestPrefix begins the name of the directory the tests build the
// command into, followed by the test process's PID.
const cliTestPrefix = "benchmatrix-cli-test-"

// sweepTestDirs removes the build directories of test processes that no
// longer run (a test binary killed, or timed out, before its cleanup), and
// says so.
func sweepTestDirs() {
	paths, _ := filepath.Glob(filepath.Join(os.TempDir(), cliTestPrefix+"*"))
	for _, p := range paths {
		pid, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(p), cliTestPrefix), "-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || n == os.Getpid() {
			continue // an older name, without a PID: left alone
		}
		if _, err := os.Stat(filepath.Join("/proc", pid)); err == nil {
			continue
		}
		if os.RemoveAll(p) == nil {
			fmt.Fprintf(os.Stderr, "removed %s, left by test process %d that no longer runs\n", p, n)
		}
	}
}

func needServer(t *testing.T) {
	t.Helper()
	if _, err := server.FindBinary(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install a server: %v", err)
		}
		t.Skip(err)
	}
}

// serversOf lists server processes whose sandbox belongs to process pid.
func serversOf(pid int) []string {
	marker := server.SandboxDirPrefix + strconv.Itoa(pid) + "-"
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), marker) && strings.Contains(string(b), "--datadir") {
			found = append(found, e.Name())
		}
	}
	return found
}

func sandboxDirsOf(pid int) []string {
	m, _ := filepath.Glob(filepath.Join(os.TempDir(), server.SandboxDirPrefix+strconv.Itoa(pid)+"-*"))
	return m
}

const slowManifest = `
[experiment]
name = "slow"
duration = "20s"
warmup = "0s"
[workload]
name = "oltp_point_select"
table_size = 1000
[scenarios]
a = { sync_binlog = 0 }
b = { sync_binlog = 1 }
`

func writeManifest(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.toml")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// startRun starts `benchmatrix run` and waits until its server is up.
func startRun(t *testing.T, manifest, out string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(binary, "run", manifest, "-o", out)
	var buf syncBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(buf.String(), "warm-up") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("run did not reach the first cell:\n%s", buf.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cmd, &buf
}

func exitStatus(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err == nil {
		return 0
	}
	return -1
}

func TestSIGINTOnceKeepsResults(t *testing.T) {
	needServer(t)
	out := filepath.Join(t.TempDir(), "r")
	cmd, buf := startRun(t, writeManifest(t, slowManifest), out)
	time.Sleep(time.Second)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if code := exitStatus(err); code != 130 {
		t.Fatalf("exit %d, want 130:\n%s", code, buf.String())
	}
	if left := serversOf(cmd.Process.Pid); len(left) > 0 {
		t.Fatalf("servers left: %v", left)
	}
	if d := sandboxDirsOf(cmd.Process.Pid); len(d) > 0 {
		t.Fatalf("sandbox directories left: %v", d)
	}
	run, err := results.ReadRun(out)
	if err != nil || run.Status != record.StatusInterrupted {
		t.Fatalf("run.json: %v %+v", err, run)
	}
}

func TestSIGINTTwiceExitsAtOnce(t *testing.T) {
	needServer(t)
	cmd, buf := startRun(t, writeManifest(t, slowManifest), filepath.Join(t.TempDir(), "r"))
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("a second SIGINT did not end the run")
	}
	if code := exitStatus(err); code != 130 {
		t.Fatalf("exit %d, want 130:\n%s", code, buf.String())
	}
	time.Sleep(200 * time.Millisecond)
	if left := serversOf(cmd.Process.Pid); len(left) > 0 {
		t.Fatalf("servers left: %v", left)
	}
}

func TestSIGKILLLeavesNoServer(t *testing.T) {
	needServer(t)
	cmd, _ := startRun(t, writeManifest(t, slowManifest), filepath.Join(t.TempDir(), "r"))
	pid := cmd.Process.Pid
	if len(serversOf(pid)) == 0 {
		t.Fatal("no server found for the running benchmatrix")
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for len(serversOf(pid)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := serversOf(pid); len(left) > 0 {
		t.Fatalf("servers outlived a SIGKILLed benchmatrix: %v", left)
	}
	if len(sandboxDirsOf(pid)) == 0 {
		t.Fatal("expected the killed run's sandbox directory to remain until the next run")
	}
	// The next run reports and removes what the killed one left.
	next := exec.Command(binary, "run", writeManifest(t, strings.Replace(slowManifest, `"20s"`, `"1s"`, 1)), "-o", filepath.Join(t.TempDir(), "r2"), "-q")
	outb, err := next.CombinedOutput()
	if err != nil {
		t.Fatalf("next run: %v\n%s", err, outb)
	}
	if !strings.Contains(string(outb), "left by a benchmatrix process that no longer runs") {
		t.Fatalf("the next run did not report the stale directory:\n%s", outb)
	}
	if d := sandboxDirsOf(pid); len(d) > 0 {
		t.Fatalf("stale directories remain: %v", d)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"run"}, "want exactly one manifest"},
		{[]string{"plan", "/nonexistent.toml"}, "no such file"},
		{[]string{"compare", "/nonexistent-a", "/nonexistent-b"}, "no such file"},
	} {
		cmd := exec.Command(binary, c.args...)
		out, err := cmd.CombinedOutput()
		if code := exitStatus(err); code != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: exit %d, output %q; want exit 2 mentioning %q", c.args, code, out, c.want)
		}
	}
	// benchmatrix oltp exits as sysbench does: 1 for a bad option.
	if out, err := exec.Command(binary, "oltp", "--tabels=2", "oltp_read_write", "run").CombinedOutput(); exitStatus(err) != 1 || !strings.Contains(string(out), "tabels") {
		t.Errorf("oltp --tabels: exit %d, output %q; want sysbench's exit 1 naming the option", exitStatus(err), out)
	}
	bad := writeManifest(t, "[experiment]\nnme = 1\n[workload]\nname = \"oltp_insert\"\n")
	out, err := exec.Command(binary, "run", bad).CombinedOutput()
	if code := exitStatus(err); code != 2 || !strings.Contains(string(out), "line 2: experiment.nme") {
		t.Errorf("bad manifest: exit %d, %s", code, out)
	}
	// Refused before anything is started or written.
	good := writeManifest(t, "[workload]\nname = \"oltp_insert\"\n")
	someones := t.TempDir()
	if err := os.WriteFile(filepath.Join(someones, "summary.md"), []byte("my notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", good, "-o", someones}, "is not a results directory and not empty (summary.md)"},
		{[]string{"run", writeManifest(t, "[experiment]\nname = \"../../x\"\n[workload]\nname = \"oltp_insert\"\n")}, "line 2: experiment.name"},
		{[]string{"run", good, "--provider", "external"}, "provider external needs a server"},
		{[]string{"run", good, "--observe", "maybe"}, "want on or off"},
		{[]string{"run", good, "--repeats", "-1"}, "--repeats: must be at least 1"},
		{[]string{"run", good, "--duration", "0s"}, "experiment.duration: must be more than 0"},
		{[]string{"run", writeManifest(t, "[server]\nbinary = \"/nonexistent/mysqld\"\n[workload]\nname = \"oltp_insert\"\n")}, `[server] binary "/nonexistent/mysqld"`},
	} {
		out, err := exec.Command(binary, c.args...).CombinedOutput()
		if code := exitStatus(err); code != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: exit %d, output %q; want exit 2 mentioning %q", c.args, code, out, c.want)
		}
	}
	// A TMPDIR that is not there: said before anything starts.
	noTmp := exec.Command(binary, "run", good, "-o", filepath.Join(t.TempDir(), "r"))
	noTmp.Env = append(os.Environ(), "TMPDIR=/nonexistent-tmp")
	if out, err := noTmp.CombinedOutput(); exitStatus(err) != 2 || !strings.Contains(string(out), "temporary directory /nonexistent-tmp is not usable") {
		t.Errorf("missing TMPDIR: exit %d, %s", exitStatus(err), out)
	}
	if b, _ := os.ReadFile(filepath.Join(someones, "summary.md")); string(b) != "my notes\n" {
		t.Errorf("someone's summary.md became %q", b)
	}
}

func TestUnreachableServerFailsFast(t *testing.T) {
	t.Parallel()
	m := writeManifest(t, "[server]\nprovider = \"external\"\n[workload]\nname = \"oltp_point_select\"\n")
	start := time.Now()
	out, err := exec.Command(binary, "run", m, "--dsn", "bench:hunter2-secret@tcp(127.0.0.1:1)/", "-o", filepath.Join(t.TempDir(), "r")).CombinedOutput()
	if exitStatus(err) == 0 || !strings.Contains(string(out), "127.0.0.1:1") {
		t.Fatalf("exit %d:\n%s", exitStatus(err), out)
	}
	if strings.Contains(string(out), "hunter2") {
		t.Fatalf("the password is in the output:\n%s", out)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("took %s to give up", d)
	}
}

// A --rate far above capacity measures the overload (late and dropped
// events, latency from the intended start) instead of aborting.
func TestRateAboveCapacity(t *testing.T) {
	needServer(t)
	ctx := context.Background()
	sb, err := server.StartSandbox(ctx, server.SandboxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Stop(ctx)
	_, port, _ := strings.Cut(sb.Endpoint().Addr, ":")
	conn := []string{"--mysql-host=127.0.0.1", "--mysql-port=" + port, "--mysql-user=root", "--mysql-db=sbtest", "--tables=1", "--table-size=1000"}
	if out, err := exec.Command(binary, append(append([]string{"oltp"}, conn...), "oltp_point_select", "prepare")...).CombinedOutput(); err != nil {
		t.Fatalf("prepare: %v\n%s", err, out)
	}
	args := append(append([]string{"oltp"}, conn...), "--rate=1000000", "--time=3", "--threads=2", "--format=json", "oltp_point_select", "run")
	out, err := exec.Command(binary, args...).Output()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	var doc struct {
		Result struct {
			Events  int64 `json:"events"`
			Late    int64 `json:"late"`
			Dropped int64 `json:"dropped"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Result.Events == 0 || doc.Result.Late+doc.Result.Dropped == 0 {
		t.Fatalf("overload not measured: %+v\n%s", doc.Result, out)
	}
}

const compareManifest = `
[experiment]
name = "cmp"
duration = "1s"
warmup = "0s"
repeats = 4
[workload]
name = "oltp_point_select"
table_size = 1000
rand_type = "uniform"
[scenarios]
a = { sync_binlog = 0 }
b = { sync_binlog = 1 }
`

// compare on real runs: an unchanged run passes the gate; a cell made slow
// fails it (exit 3, named); a changed workload option is refused (exit 2,
// named).
func TestCompareGate(t *testing.T) {
	needServer(t)
	tmp := t.TempDir()
	m := writeManifest(t, compareManifest)
	if out, err := exec.Command(binary, "run", m, "-o", filepath.Join(tmp, "base"), "-q").CombinedOutput(); err != nil {
		t.Fatalf("run base: %v\n%s", err, out)
	}
	compare := func(args ...string) (int, string) {
		out, err := exec.Command(binary, append([]string{"compare"}, args...)...).CombinedOutput()
		return exitStatus(err), string(out)
	}
	// This test is about the gate, not the host: the copies below share the
	// base run's contention records, and a worsening measured under
	// contention counts only when it survives it (compare_host_test.go
	// tests that with real runs). Drop the records: a quiet host.
	editRun(t, filepath.Join(tmp, "base"), func(r *record.Run) {
		for i := range r.Cells {
			r.Cells[i].Contention = nil
		}
	})
	// A run against an unchanged copy of itself passes the gate. (Two real
	// runs of 1 s cells on a shared 2-core machine differ by more than any
	// sensible threshold at p95/p99 now and then: a test of the gate, not of
	// the machine's noise.)
	same := filepath.Join(tmp, "same")
	if out, err := exec.Command("cp", "-r", filepath.Join(tmp, "base"), same).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if code, out := compare(filepath.Join(tmp, "base"), same); code != 0 || !strings.Contains(out, "tps") {
		t.Fatalf("same run: exit %d\n%s", code, out)
	}
	// Make scenario b ten times slower in another copy.
	slow := filepath.Join(tmp, "slow")
	if out, err := exec.Command("cp", "-r", filepath.Join(tmp, "base"), slow).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	editRun(t, slow, func(run *record.Run) {
		for i := range run.Cells {
			if c := &run.Cells[i]; c.Scenario == "b" && c.Result != nil {
				c.Result.Elapsed *= 10
			}
		}
	})
	code, out := compare(filepath.Join(tmp, "base"), slow, "--threshold", "50")
	if code != 3 || !strings.Contains(out, "b ") || !strings.Contains(out, "REGRESSION") {
		t.Fatalf("slowed cell: exit %d, want 3 naming b\n%s", code, out)
	}
	// A different workload definition is refused, naming the option.
	other := writeManifest(t, strings.Replace(strings.Replace(compareManifest, `"uniform"`, `"special"`, 1), "repeats = 4", "repeats = 1", 1))
	if out, err := exec.Command(binary, "run", other, "-o", filepath.Join(tmp, "other"), "-q").CombinedOutput(); err != nil {
		t.Fatalf("run other: %v\n%s", err, out)
	}
	code, out = compare(filepath.Join(tmp, "base"), filepath.Join(tmp, "other"))
	if code != 2 || !strings.Contains(out, "rand_type") || !strings.Contains(out, "uniform") || !strings.Contains(out, "special") {
		t.Fatalf("different workload: exit %d, want 2 naming rand_type\n%s", code, out)
	}
}

// editRun rewrites dir's run.json after edit.
func editRun(t *testing.T, dir string, edit func(*record.Run)) {
	t.Helper()
	run, err := results.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	edit(run)
	b, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.RunFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// benchmatrix killed (SIGKILL) during an external run leaves the globals it
// changed; the next connection to that server puts them back and says so
// (`benchmatrix restore DSN`, or the next run).
func TestSIGKILLExternalGlobalsPutBack(t *testing.T) {
	needServer(t)
	sb, err := server.StartSandbox(context.Background(), server.SandboxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Stop(context.Background()) })
	conn, _ := mysql.NewConnector(sb.Endpoint())
	root := sql.OpenDB(conn)
	defer root.Close()
	for _, q := range []string{"CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY 'k1ll-pw'", "GRANT ALL ON *.* TO 'bench'@'127.0.0.1'",
		"SET GLOBAL sync_binlog = 5"} {
		if _, err := root.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	dsn := "bench@tcp(" + sb.Endpoint().Addr + ")/"
	src := strings.Replace(slowManifest, "[workload]", "[server]\nprovider = \"external\"\n[workload]", 1)
	cmd := exec.Command(binary, "run", writeManifest(t, src), "-o", filepath.Join(t.TempDir(), "r"), "--dsn", dsn)
	cmd.Env = append(os.Environ(), "BENCHMATRIX_PASSWORD=k1ll-pw")
	var buf syncBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	global := func() string {
		var v string
		_ = root.QueryRow("SELECT @@GLOBAL.sync_binlog").Scan(&v)
		return v
	}
	deadline := time.Now().Add(time.Minute)
	for global() != "0" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if got := global(); got != "0" {
		t.Fatalf("the run did not change sync_binlog before it was killed (%s):\n%s", got, buf.String())
	}
	restore := exec.Command(binary, "restore", dsn)
	restore.Env = cmd.Env
	out, err := restore.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "put back sync_binlog=5") || !strings.Contains(string(out), "no longer runs") {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	if got := global(); got != "5" {
		t.Fatalf("sync_binlog %s after restore, want 5", got)
	}
	if strings.Contains(string(out), "k1ll-pw") {
		t.Fatal("password in the output")
	}
	again := exec.Command(binary, "restore", dsn)
	again.Env = cmd.Env
	out, _ = again.CombinedOutput()
	if !strings.Contains(string(out), "nothing to put back") {
		t.Fatalf("second restore: %s", out)
	}

	// Void journals (issue 40: one named a test sandbox gone for good and
	// stayed): one from before the server's last start, whose value the
	// restart already took, and one for a loopback address nothing listens
	// at any more. Both go, and nothing is changed.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := l.Addr().String()
	l.Close()
	void := map[string]string{
		"restarted": fmt.Sprintf(`{"pid": %d, "address": %q, "user": "bench", "server_started": 1000, "originals": [{"name": "sync_binlog", "value": "7"}]}`, dead.Process.Pid, sb.Endpoint().Addr),
		"stopped":   fmt.Sprintf(`{"pid": %d, "address": %q, "user": "bench", "originals": [{"name": "sync_binlog", "value": "7"}]}`, dead.Process.Pid, gone),
	}
	for k, body := range void {
		p := filepath.Join(os.TempDir(), fmt.Sprintf("%s%d-%s.json", server.JournalPrefix, dead.Process.Pid, k))
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(p)
	}
	third := exec.Command(binary, "restore", dsn)
	third.Env = cmd.Env
	out, _ = third.CombinedOutput()
	for _, want := range []string{"left sync_binlog as it is on " + sb.Endpoint().Addr + ": the server restarted after benchmatrix process",
		"removed the journal of benchmatrix process " + strconv.Itoa(dead.Process.Pid) + " for " + gone + ": nothing listens there any more"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("restore with void journals lacks %q:\n%s", want, out)
		}
	}
	if got := global(); got != "5" {
		t.Errorf("sync_binlog %s after a void journal, want 5 left as it was", got)
	}
	for k := range void {
		if _, err := os.Stat(filepath.Join(os.TempDir(), fmt.Sprintf("%s%d-%s.json", server.JournalPrefix, dead.Process.Pid, k))); err == nil {
			t.Errorf("the %s journal is still there", k)
		}
	}
}

// needDockerImage skips (fails under CI) without a Docker engine and the
// project's image.
func needDockerImage(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := server.DockerAvailable(ctx); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	if ok, err := server.DockerImageExists(ctx, catalog.DefaultDockerImage); err != nil || !ok {
		if os.Getenv("CI") != "" {
			t.Fatalf("image %s: %v", catalog.DefaultDockerImage, err)
		}
		t.Skip("no image ", catalog.DefaultDockerImage)
	}
}

// benchmatrix killed (SIGKILL) with the docker provider: its container does
// not outlive it (the reaper removes it), without waiting for a next run.
func TestSIGKILLLeavesNoContainer(t *testing.T) {
	needDockerImage(t)
	src := strings.Replace(slowManifest, "[workload]", "[server]\nprovider = \"docker\"\n[workload]", 1)
	cmd, _ := startRun(t, writeManifest(t, src), filepath.Join(t.TempDir(), "r"))
	pid := cmd.Process.Pid
	containers := func() string {
		out, _ := exec.Command("docker", "ps", "-aq", "--filter", "label=benchmatrix.owner-pid="+strconv.Itoa(pid)).Output()
		return strings.TrimSpace(string(out))
	}
	if containers() == "" {
		t.Fatal("no container found for the running benchmatrix")
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for containers() != "" && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if left := containers(); left != "" {
		exec.Command("docker", "rm", "-f", left).Run()
		t.Fatalf("container %s outlived a SIGKILLed benchmatrix", left)
	}
}

// The first interrupt says what the command will do: only a run has cells.
func TestInterruptNoteNamesWhatStops(t *testing.T) {
	for args, want := range map[string]string{
		"run":     "current cell",
		"oltp":    "reporting what it measured",
		"slap":    "stopping the benchmark",
		"compare": "stopping",
		"":        "stopping",
	} {
		got := interruptNote(strings.Fields(args))
		if !strings.Contains(got, want) || (args != "run" && strings.Contains(got, "cell")) {
			t.Errorf("%q: %q, want %q", args, got, want)
		}
	}
}
