package server

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// A container is not a child of benchmatrix: killed with SIGKILL,
// benchmatrix cannot remove it, and the next run's sweep is too late for a
// server that keeps running (and listening) meanwhile. So every container
// gets a reaper: a small shell child of benchmatrix that waits for
// benchmatrix to die and then force-removes the container and its host
// datadir. On a normal stop the reaper is killed first, silently. Without
// a docker CLI on PATH there is no reaper, and the next run's sweep removes
// what is left, as before.
//
// The reaper waits by reading its stdin, a pipe whose only writer is
// benchmatrix: when benchmatrix dies, however it dies, the kernel closes
// the writer and the read ends. Waiting so needs no child process (an
// earlier reaper waited on `sleep 3600` children, which a SIGKILL of
// benchmatrix left behind, one per reaper) and no parent-death signal
// (which fires when the forking thread exits, not the process).

// reaperScript removes the container ($1) and the datadir ($2).
const reaperScript = `docker rm -f -v "$1" >/dev/null 2>&1; rm -rf "$2"`

// reaperEnv marks a reaper's environment with its benchmatrix's PID, so
// that the sweep and the tests can tell a reaper (and anything it runs)
// from other processes.
const reaperEnv = "BENCHMATRIX_REAPER_OF"

// reaper is the running reaper of one container.
type reaper struct {
	proc *os.Process
	// alive is the pipe's write end: the reaper runs its script once every
	// copy of it is closed. A bare descriptor, not an *os.File, which would
	// close when collected: it stays open until stop or until benchmatrix
	// dies.
	alive int
	done  chan struct{}
}

// startReaper starts the reaper of container id with host datadir dir; nil
// when it cannot (no docker CLI, no shell).
func startReaper(id, dir string) *reaper {
	if _, err := exec.LookPath("docker"); err != nil {
		return nil
	}
	return launchReaper(reaperScript, id, dir)
}

// launchReaper starts a reaper's shell, which runs script (its arguments
// $1... are args) once benchmatrix has died: in its own process group (a
// terminal's Ctrl-C goes to benchmatrix, which removes what it made
// itself); nil when it cannot start.
func launchReaper(script string, args ...string) *reaper {
	var p [2]int
	// Both ends close-on-exec: no other child of benchmatrix holds the
	// writer (exec dup2s the reader onto the reaper's stdin).
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return nil
	}
	r, w := os.NewFile(uintptr(p[0]), "reaper pipe"), p[1]
	defer r.Close()
	// read returns at end of file: when benchmatrix, the writer, is gone.
	cmd := exec.Command("/bin/sh", append([]string{"-c", "read -r _; " + script, "benchmatrix-reaper"}, args...)...)
	cmd.Stdin = r
	cmd.Env = append(os.Environ(), reaperEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		syscall.Close(w)
		return nil
	}
	rp := &reaper{proc: cmd.Process, alive: w, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(rp.done)
	}()
	return rp
}

// stop ends the reaper without its removing anything, and waits for it.
func (r *reaper) stop() {
	if r == nil || r.proc == nil {
		return
	}
	_ = syscall.Kill(-r.proc.Pid, syscall.SIGKILL) // before the pipe closes
	<-r.done
	syscall.Close(r.alive)
}

// RemoveStaleReaperSleeps ends the `sleep 3600` processes that reapers of
// benchmatrix versions before the pipe left when benchmatrix was killed
// (SIGKILL): a sleep of this user whose process group (its reaper's) has
// lost its leader and whose parent is outside that group. It returns what
// it ended, for the sweep to name.
func RemoveStaleReaperSleeps() []string {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var ended []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !staleReaperSleep(pid) {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			ended = append(ended, "process `sleep 3600` (PID "+strconv.Itoa(pid)+") of a killed run's reaper")
		}
	}
	return ended
}

// staleReaperSleep tells whether pid looks like an orphaned reaper's sleep.
func staleReaperSleep(pid int) bool {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil || !bytes.Equal(cmdline, []byte("sleep\x003600\x00")) {
		return false
	}
	var st syscall.Stat_t
	if syscall.Stat(dir, &st) != nil || int(st.Uid) != os.Getuid() {
		return false
	}
	_, ppid, pgid, ok := procStat(pid)
	if !ok || pgid == pid || running(pgid) {
		return false
	}
	_, _, parentGroup, ok := procStat(ppid)
	return !ok || parentGroup != pgid
}

// running tells whether pid is a process that has not exited (a zombie
// has: where init does not reap, an exited reaper stays one).
func running(pid int) bool {
	state, _, _, ok := procStat(pid)
	return ok && state != "Z" && state != "X"
}

// procStat reads a process's state, parent and process group from
// /proc/PID/stat (after the command name, which may hold spaces).
func procStat(pid int) (state string, ppid, pgid int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", 0, 0, false
	}
	f := strings.Fields(string(b[i+1:])) // state ppid pgrp ...
	if len(f) < 3 {
		return "", 0, 0, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	return f[0], ppid, pgid, err1 == nil && err2 == nil
}
