package results

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"benchmatrix/exitcode"
)

// LockFile is held (flock) by the run writing a results directory, so that
// two runs (or two --resume) never write one directory at once. The kernel
// drops the lock when its process dies, even by SIGKILL: no stale locks.
const LockFile = ".lock"

// BusyError says another process is writing the results directory.
type BusyError struct {
	Dir string
	PID string
}

func (e *BusyError) Error() string {
	who := "another benchmatrix run"
	if e.PID != "" {
		who += " (pid " + e.PID + ")"
	}
	return fmt.Sprintf("%s is writing %s; wait for it, or give another -o", who, e.Dir)
}

// ExitCode implements exitcode.Coder: 2, nothing was started.
func (e *BusyError) ExitCode() int { return exitcode.Usage }

// lockDir takes the directory's lock without waiting.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("results directory lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		return nil, &BusyError{Dir: dir, PID: strings.TrimSpace(string(b))}
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}

// Close releases the results directory for other runs.
func (w *Writer) Close() error {
	if w.lock == nil {
		return nil
	}
	err := w.lock.Close()
	w.lock = nil
	return err
}
