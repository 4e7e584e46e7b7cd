package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// The golden datadir: the first sandbox of a binary in this process
// initialises its datadir with the flavor's tool and keeps a pristine copy;
// every later sandbox of that binary starts from a copy of it (a file copy
// instead of mariadb-install-db or --initialize-insecure: 0.3 s instead of
// 0.6 s and more, reference/servers.md §4.3). The copies live in the same
// temporary directory as the sandboxes, named after this process, so
// Cleanup removes them at exit and RemoveStale after a crash.
var golden struct {
	sync.Mutex
	dirs map[string]string // by binary and temporary directory
}

func goldenKey(bin, tempDir string) string { return bin + "\x00" + tempDir }

// datadirFromGolden fills s.datadir() from the golden copy, making it first
// when this process has none for the binary.
func (s *Sandbox) datadirFromGolden(ctx context.Context) error {
	golden.Lock()
	defer golden.Unlock()
	if golden.dirs == nil {
		golden.dirs = map[string]string{}
	}
	key := goldenKey(s.bin.Path, s.cfg.TempDir)
	if src, ok := golden.dirs[key]; ok {
		if _, err := os.Stat(src); err == nil {
			if err := os.MkdirAll(s.tmpdir(), 0o700); err != nil {
				return err
			}
			if err := copyTree(ctx, src, s.datadir()); err == nil {
				return nil
			}
		}
		delete(golden.dirs, key)
	}
	fresh := !s.initFromCache(ctx) // golden_cache.go
	if fresh {
		if err := s.initDatadir(ctx); err != nil {
			return err
		}
	}
	// Keep a pristine copy; a failure here only costs speed later.
	sum := sha256.Sum256([]byte(s.bin.Path))
	dir := filepath.Join(filepath.Dir(s.dir), SandboxDirPrefix+strconv.Itoa(os.Getpid())+"-golden-"+string(s.bin.Flavor)+"-"+hex.EncodeToString(sum[:4]))
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err == nil && copyTree(ctx, s.datadir(), dir) == nil {
		_ = os.Chmod(dir, 0o700)
		golden.dirs[key] = dir
		if fresh {
			s.saveInit(ctx, dir) // golden_cache.go
		}
	} else {
		_ = os.RemoveAll(dir) // a partial copy (a full disk) is not left behind
	}
	return nil
}

// Cleanup removes this process's golden datadirs. Call it once no sandbox
// will be started any more (at exit).
func Cleanup() {
	golden.Lock()
	defer golden.Unlock()
	for k, d := range golden.dirs {
		if strings.Contains(filepath.Base(d), "-golden-") {
			_ = os.RemoveAll(d)
		}
		delete(golden.dirs, k)
	}
}
