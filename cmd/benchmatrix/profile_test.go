package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"benchmatrix/profile"
)

func needPerf(t *testing.T) {
	t.Helper()
	if err := profile.Check(profile.OnCPU, profile.OffCPU); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install perf and run as root: %v", err)
		}
		t.Skip(err)
	}
}

const profiledManifest = `
[experiment]
name = "profiled"
duration = "30s"
warmup = "1s"
profile = "both"
[server.config]
log_bin = "binlog"
[workload]
name = "oltp_insert"
table_size = 1000
[scenarios]
b1e1 = { sync_binlog = 1, innodb_flush_log_at_trx_commit = 1 }
`

// perfOf lists perf processes recording into a directory of process pid.
func perfOf(pid int) []string {
	marker := profile.DirPrefix + strconv.Itoa(pid) + "-"
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(b), "perf\x00") && strings.Contains(string(b), marker) {
			found = append(found, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

func perfDirsOf(pid int) []string {
	m, _ := filepath.Glob(filepath.Join(os.TempDir(), profile.DirPrefix+strconv.Itoa(pid)+"-*"))
	return m
}

// startProfiledRun starts a profiled run and waits until perf records.
func startProfiledRun(t *testing.T) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd, buf := startRun(t, writeManifest(t, profiledManifest), filepath.Join(t.TempDir(), "r"))
	deadline := time.Now().Add(time.Minute)
	for len(perfOf(cmd.Process.Pid)) < 2 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("perf did not start:\n%s", buf.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(perfDirsOf(cmd.Process.Pid)) == 0 {
		t.Fatal("perf runs but its directory is not in TMPDIR")
	}
	return cmd, buf
}

// SIGINT mid-profile: perf is stopped with the cell and its files go.
func TestProfileSIGINTLeavesNoPerf(t *testing.T) {
	needServer(t)
	needPerf(t)
	cmd, buf := startProfiledRun(t)
	time.Sleep(time.Second)
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitStatus(cmd.Wait()); code != 130 {
		t.Fatalf("exit %d, want 130:\n%s", code, buf.String())
	}
	pid := cmd.Process.Pid
	if left := perfOf(pid); len(left) > 0 {
		t.Fatalf("perf outlived the run: %v", left)
	}
	if d := perfDirsOf(pid); len(d) > 0 {
		t.Fatalf("perf files left in TMPDIR: %v", d)
	}
	if left := serversOf(pid); len(left) > 0 {
		t.Fatalf("servers left: %v", left)
	}
}

// SIGKILL mid-profile: perf dies with benchmatrix (parent-death signal);
// its directory stays until the next run, which removes it and says so.
func TestProfileSIGKILLLeavesNoPerf(t *testing.T) {
	needServer(t)
	needPerf(t)
	cmd, _ := startProfiledRun(t)
	pid := cmd.Process.Pid
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for len(perfOf(pid)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := perfOf(pid); len(left) > 0 {
		t.Fatalf("perf outlived a SIGKILLed benchmatrix: %v", left)
	}
	if len(perfDirsOf(pid)) == 0 {
		t.Fatal("expected the killed run's perf directory to remain until the next run")
	}
	next := exec.Command(binary, "run", writeManifest(t, strings.Replace(slowManifest, `"20s"`, `"1s"`, 1)), "-o", filepath.Join(t.TempDir(), "r2"), "-q")
	outb, err := next.CombinedOutput()
	if err != nil {
		t.Fatalf("next run: %v\n%s", err, outb)
	}
	if !strings.Contains(string(outb), "perf data left by a benchmatrix process that no longer runs") {
		t.Fatalf("the next run did not report the stale perf directory:\n%s", outb)
	}
	if d := perfDirsOf(pid); len(d) > 0 {
		t.Fatalf("stale perf directories remain: %v", d)
	}
}

// Without perf on PATH a profiled run stops before its first cell, exit 2,
// saying what to install.
func TestProfileWithoutPerfExits2(t *testing.T) {
	needServer(t)
	bin, err := exec.LookPath("mariadbd")
	if err != nil {
		if bin, err = exec.LookPath("mysqld"); err != nil {
			t.Skip("no server binary on PATH")
		}
	}
	m := strings.Replace(profiledManifest, "[server.config]", "[server]\nbinary = \""+bin+"\"\n[server.config]", 1)
	cmd := exec.Command(binary, "run", writeManifest(t, m), "-o", filepath.Join(t.TempDir(), "r"))
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if code := exitStatus(err); code != 2 {
		t.Fatalf("exit %d, want 2:\n%s", code, out)
	}
	if !strings.Contains(string(out), "perf is not installed") || !strings.Contains(string(out), "linux-perf") {
		t.Fatalf("the error does not say what to install:\n%s", out)
	}
	if strings.Contains(string(out), "warm-up") {
		t.Fatalf("a cell ran:\n%s", out)
	}
}
