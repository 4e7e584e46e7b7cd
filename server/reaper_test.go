package server

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const reaperHelperEnv = "BENCHMATRIX_TEST_REAPER_DIR"

// TestReaperHelperProcess is no test of its own: TestReaperSIGKILLLeavesNothing
// runs the test binary through it as a stand-in for benchmatrix that has
// started the reapers of a container and of a network.
func TestReaperHelperProcess(t *testing.T) {
	dir := os.Getenv(reaperHelperEnv)
	if dir == "" {
		t.Skip("run by TestReaperSIGKILLLeavesNothing only")
	}
	c := startReaper("benchmatrix-test-no-such-container", dir)
	n := startNetworkReaper("benchmatrix-test-no-such-network")
	if c == nil || n == nil {
		fmt.Println("no reaper")
		os.Exit(1)
	}
	fmt.Printf("reapers %d %d\n", c.proc.Pid, n.proc.Pid)
	time.Sleep(time.Hour) // until SIGKILLed
}

// processesInGroups lists the running processes whose process group is one
// of pgids (a reaper's group: the reaper's PID), with their command lines.
func processesInGroups(pgids ...int) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !running(pid) {
			continue
		}
		_, _, pgid, ok := procStat(pid)
		for _, g := range pgids {
			if ok && pgid == g {
				b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
				found = append(found, fmt.Sprintf("PID %d (group %d): %s", pid, pgid, strings.ReplaceAll(string(b), "\x00", " ")))
			}
		}
	}
	return found
}

// A benchmatrix killed with SIGKILL: its reapers remove what they guard
// and leave no process behind (they used to leave their `sleep 3600`,
// reparented to init, one per reaper).
func TestReaperSIGKILLLeavesNothing(t *testing.T) {
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("no docker CLI: no reapers")
	}
	dir := filepath.Join(t.TempDir(), "datadir")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReaperHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), reaperHelperEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	var c, n int
	if _, err := fmt.Sscanf(line, "reapers %d %d", &c, &n); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper: %q", line)
	}
	if !running(c) || !running(n) {
		t.Fatal("the reapers did not start")
	}
	// The network reaper retries `docker network rm` for about 10 s.
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	deadline := time.Now().Add(2 * time.Minute)
	for running(c) || running(n) {
		if time.Now().After(deadline) {
			t.Fatalf("the reapers did not end after benchmatrix was killed: %v", processesInGroups(c, n))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the container's reaper did not remove the datadir: %v", err)
	}
	if left := processesInGroups(c, n); len(left) > 0 {
		for _, p := range left {
			if pid, err := strconv.Atoi(strings.Fields(p)[1]); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		t.Fatalf("processes of the reapers outlived them: %v", left)
	}
}

// The sweep ends what reapers of earlier versions left (a `sleep 3600`
// whose reaper shell is gone), and nothing else: not a sleep whose group
// still has its leader.
func TestSweepEndsStaleReaperSleeps(t *testing.T) {
	// An earlier version's reaper, killed as it was: its shell exits on
	// SIGTERM and its sleep stays.
	old := exec.Command("/bin/sh", "-c", `trap 'exit 0' TERM
while :; do sleep 3600 & wait $!; done`)
	old.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := old.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := old.Process.Pid
	// Another user of sleep 3600, in a group whose leader runs: kept.
	keep := exec.Command("/bin/sh", "-c", "sleep 3600 & wait $!")
	keep.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := keep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-keep.Process.Pid, syscall.SIGKILL)
		_ = keep.Wait()
	})
	sleepIn := func(g int) int {
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			ents, _ := os.ReadDir("/proc")
			for _, e := range ents {
				pid, err := strconv.Atoi(e.Name())
				if err != nil || pid == g || !running(pid) {
					continue
				}
				if _, _, pg, ok := procStat(pid); ok && pg == g {
					return pid
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("no sleep in group %d", g)
		return 0
	}
	stale, kept := sleepIn(pgid), sleepIn(keep.Process.Pid)
	t.Cleanup(func() { _ = syscall.Kill(stale, syscall.SIGKILL) })
	_ = old.Process.Signal(syscall.SIGTERM)
	_ = old.Wait()
	if !running(stale) {
		t.Fatal("the old reaper's sleep did not outlive it")
	}
	// (Other stale sleeps on this host, left by killed runs of earlier
	// versions, are ended too.)
	ended := strings.Join(RemoveStaleReaperSleeps(), "\n")
	if !strings.Contains(ended, "(PID "+strconv.Itoa(stale)+")") || strings.Contains(ended, "(PID "+strconv.Itoa(kept)+")") {
		t.Fatalf("the sweep ended:\n%s\nwant the stale sleep %d, not %d", ended, stale, kept)
	}
	deadline := time.Now().Add(time.Minute)
	for running(stale) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if running(stale) {
		t.Error("the stale sleep still runs")
	}
	if !running(kept) {
		t.Error("the sweep ended a sleep that was no reaper's")
	}
}
