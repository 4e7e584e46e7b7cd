package server

import (
	"context"
	"fmt"
	"os"

	"benchmatrix/cache"
)

// The initialised datadir kept across runs: what mariadb-install-db (or
// mysqld --initialize-insecure) makes depends only on the binary and on
// whether the server runs as root, so the first sandbox of a binary in a
// process restores it from the data cache (checked like any entry) instead
// of running the tool, and a process that ran the tool saves the pristine
// copy it keeps anyway (golden.go).

// initKey is the cache key of the binary's initialised datadir.
func (s *Sandbox) initKey() cache.Key {
	k := cache.Key{Binary: s.bin.Path, Server: string(s.bin.Flavor) + " " + s.bin.Version,
		Shape: fmt.Sprintf("initialised datadir (no tables; user root=%v)", os.Geteuid() == 0)}
	if st, err := os.Stat(s.bin.Path); err == nil {
		k.Stamp = fmt.Sprintf("%d bytes, modified %s", st.Size(), st.ModTime().UTC().Format("2006-01-02T15:04:05.999999999Z"))
	}
	return k
}

// initFromCache fills the datadir from the cache; false when there is no
// cache, no entry, or a corrupt one (discarded).
func (s *Sandbox) initFromCache(ctx context.Context) bool {
	c := s.cfg.InitCache
	if c == nil {
		return false
	}
	id := s.initKey().ID()
	if !c.Has(id) {
		return false
	}
	if err := os.MkdirAll(s.tmpdir(), 0o700); err != nil {
		return false
	}
	if _, err := c.Restore(ctx, id, s.datadir()); err != nil {
		_ = os.RemoveAll(s.datadir())
		return false
	}
	return true
}

// saveInit keeps the pristine initialised datadir dir (never written
// again) in the cache; a failure only costs the next run the tool's time.
func (s *Sandbox) saveInit(ctx context.Context, dir string) {
	if c := s.cfg.InitCache; c != nil {
		_, _, _ = c.Put(ctx, s.initKey(), dir)
	}
}
