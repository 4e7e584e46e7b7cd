package server

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Node is catalog.Topologies: a server that can be one node of a topology,
// whose process a timed event stops, kills, pauses, resumes and starts
// again in place (same directory, port and options).
type Node interface {
	// Halt shuts the server down cleanly (SIGTERM, then SIGKILL after
	// grace), keeping its directory.
	Halt(grace time.Duration) error
	// Crash kills the server process with SIGKILL, as a crash would.
	Crash()
	// Pause and Resume freeze and thaw the server process (SIGSTOP,
	// SIGCONT): a node that stops answering without closing anything.
	Pause() error
	Resume() error
	// Restart (Server's) starts a stopped or crashed node again, on the
	// same datadir and port.
}

var _ Node = (*Sandbox)(nil)

// Halt implements Node.
func (s *Sandbox) Halt(grace time.Duration) error {
	_ = s.Resume() // a paused server cannot act on SIGTERM
	return s.terminate(grace)
}

// Crash implements Node.
func (s *Sandbox) Crash() { s.Kill9() }

// Exit tells how the server process ended: "killed by signal 9 (killed)",
// "exited with status 1"; "" while it runs or before it started.
func (s *Sandbox) Exit() string {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done == nil {
		return ""
	}
	select {
	case <-done:
	default:
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return exitText(s.werr)
}

// exitText describes a process's exit from its Wait error.
func exitText(werr error) string {
	var ee *exec.ExitError
	if !errors.As(werr, &ee) {
		if werr == nil {
			return "exited with status 0"
		}
		return werr.Error()
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
	}
	return fmt.Sprintf("exited with status %d", ee.ExitCode())
}

// Pause implements Node.
func (s *Sandbox) Pause() error { return s.signal(syscall.SIGSTOP) }

// Resume implements Node.
func (s *Sandbox) Resume() error { return s.signal(syscall.SIGCONT) }

func (s *Sandbox) signal(sig syscall.Signal) error {
	pid := s.PID()
	if pid == 0 || !s.Alive() {
		return fmt.Errorf("the server is not running")
	}
	return syscall.Kill(pid, sig)
}

// env is the server's environment: a node whose directory has another
// owner gets its own TMPDIR (state-transfer scripts write there); nil
// means benchmatrix's own.
func (s *Sandbox) env() []string {
	if s.cfg.DirOwner == "" {
		return nil
	}
	return append(os.Environ(), "TMPDIR="+s.tmpdir())
}

// ownDirs gives the sandbox's directory to cfg.DirOwner when benchmatrix
// runs as root: a Galera node's rsync state transfer runs its daemon as
// nobody, which must reach the datadir. The server itself stays root: a
// server that changes its user (--user=mysql) loses its parent-death
// signal and would outlive a killed benchmatrix.
func (s *Sandbox) ownDirs() error {
	if s.cfg.DirOwner == "" || os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup(s.cfg.DirOwner)
	if err != nil {
		return fmt.Errorf("sandbox directory owner %q: %w", s.cfg.DirOwner, err)
	}
	for d := filepath.Dir(s.dir); ; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("the sandbox's files must be reachable by %s, which cannot enter %s (mode %v): give TMPDIR or [server] tmpdir a directory others may enter", s.cfg.DirOwner, d, st.Mode().Perm())
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return filepath.Walk(s.dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// killLeftovers kills the processes still working in a stale sandbox
// directory: a state-transfer daemon (rsync --config=DIR/data/...) that a
// killed server left running has no parent-death signal of its own.
func killLeftovers(dir string, report func(string)) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), dir+"/") {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil && report != nil {
			report(fmt.Sprintf("process %d (%s)", pid, strings.SplitN(string(b), "\x00", 2)[0]))
		}
	}
}
