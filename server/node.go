package server

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
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

// env is the server's environment: a node running as another user gets
// its own TMPDIR (state-transfer scripts write there); nil means
// benchmatrix's own.
func (s *Sandbox) env() []string {
	if s.cfg.User == "" {
		return nil
	}
	return append(os.Environ(), "TMPDIR="+s.tmpdir())
}

// ownDirs gives the sandbox's directory to cfg.User, when the server runs
// as another user than benchmatrix (a Galera node: its rsync state
// transfer drops root's privileges and must still reach the datadir).
func (s *Sandbox) ownDirs() error {
	if s.cfg.User == "" || os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup(s.cfg.User)
	if err != nil {
		return fmt.Errorf("sandbox user %q: %w", s.cfg.User, err)
	}
	for d := filepath.Dir(s.dir); ; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("the server runs as %s, which cannot enter %s (mode %v): give TMPDIR or [server] tmpdir a directory others may enter", s.cfg.User, d, st.Mode().Perm())
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

// userArgs is the --user the server runs as: cfg.User, else the default.
func (s *Sandbox) userArgs() []string {
	if s.cfg.User != "" && os.Geteuid() == 0 {
		return []string{"--user=" + s.cfg.User}
	}
	return userArgs()
}
