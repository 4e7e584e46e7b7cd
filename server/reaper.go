package server

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// A container is not a child of benchmatrix: killed with SIGKILL,
// benchmatrix cannot remove it, and the next run's sweep is too late for a
// server that keeps running (and listening) meanwhile. So every container
// gets a reaper: a small shell child of benchmatrix that the kernel sends
// SIGTERM when benchmatrix dies (the parent-death signal), and that then
// force-removes the container and its host datadir. On a normal stop the
// reaper is killed first, silently. Without a docker CLI on PATH there is
// no reaper, and the next run's sweep removes what is left, as before.

// reaperScript waits; on SIGTERM (its parent died) it removes the
// container ($1) and the datadir ($2).
const reaperScript = `trap 'docker rm -f -v "$1" >/dev/null 2>&1; rm -rf "$2"; exit 0' TERM
while :; do sleep 3600 & wait $!; done`

// reaper is the running reaper of one container.
type reaper struct {
	proc *os.Process
	done chan struct{}
}

// startReaper starts the reaper of container id with host datadir dir; nil
// when it cannot (no docker CLI, no shell).
func startReaper(id, dir string) *reaper {
	if _, err := exec.LookPath("docker"); err != nil {
		return nil
	}
	return launchReaper(exec.Command("/bin/sh", "-c", reaperScript, "benchmatrix-reaper", id, dir))
}

// launchReaper starts a reaper's shell: in its own process group (a
// terminal's Ctrl-C goes to benchmatrix, which removes what it made
// itself), with the parent-death signal; nil when it cannot start.
func launchReaper(cmd *exec.Cmd) *reaper {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	r := &reaper{done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// The parent-death signal fires when the forking thread exits:
		// keep it until the reaper is gone (as for the sandbox's server).
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			close(r.done)
			return
		}
		r.proc = cmd.Process
		started <- nil
		_ = cmd.Wait()
		close(r.done)
	}()
	if err := <-started; err != nil {
		return nil
	}
	return r
}

// stop ends the reaper without its removing anything (SIGKILL skips the
// trap), and waits for it.
func (r *reaper) stop() {
	if r == nil || r.proc == nil {
		return
	}
	_ = syscall.Kill(-r.proc.Pid, syscall.SIGKILL) // the shell and its sleep
	<-r.done
}
