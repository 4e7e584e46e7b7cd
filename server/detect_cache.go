package server

import (
	"os"
	"sync"
	"syscall"
	"time"
)

// The flavor and version of a server binary, found once per binary file:
// the plan asks before anything starts (TargetBeforeStart), and every
// sandbox of a run asks again when it starts. A binary replaced in place
// (another size, time or inode) is asked again. The memo holds facts about
// files, not configuration: two callers asking about one file get one
// answer either way, so it is not process-wide state in the sense that
// matters (nothing a caller sets changes another's result).
var detected sync.Map // binaryKey -> Binary

type binaryKey struct {
	path  string
	size  int64
	mtime time.Time
	ino   uint64
}

// keyOf is the memo's key for the file at path; false when it cannot be
// read (the --version run will say why).
func keyOf(path string) (binaryKey, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return binaryKey{}, false
	}
	k := binaryKey{path: path, size: st.Size(), mtime: st.ModTime()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		k.ino = sys.Ino
	}
	return k, true
}
