// Package stale finds what benchmatrix processes that no longer run left
// behind (killed with SIGKILL, say): directories, cgroups, containers and
// services carry their owner's process id, and a sweep removes those whose
// owner is gone.
package stale

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Alive reports whether a process pid runs (signal 0 reaches it, or it
// runs under another user).
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Gone reports whether pid is another process that no longer runs: what
// it left is stale.
func Gone(pid int) bool { return pid != os.Getpid() && !Alive(pid) }

// Owner is the process id of a name prefix<pid>-...; false when name does
// not begin with prefix and a number.
func Owner(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	pidText, _, _ := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(pidText)
	return pid, err == nil
}

// RemoveDirs removes the directories under dir named prefix<pid>-... whose
// owner is Gone, and returns their paths. before, when not nil, is called
// on each first (to end what still runs from it); report, when not nil,
// names each removed.
func RemoveDirs(dir, prefix string, before, report func(path string)) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		pid, ok := Owner(e.Name(), prefix)
		if !e.IsDir() || !ok || !Gone(pid) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if before != nil {
			before(p)
		}
		if os.RemoveAll(p) == nil {
			removed = append(removed, p)
			if report != nil {
				report(p)
			}
		}
	}
	return removed
}
