package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchmatrix/cache"
)

// The initialised datadir is saved in the cache by the first sandbox of a
// binary, restored by the first sandbox of another process (here: another
// temporary directory, which has no golden copy of its own), and a damaged
// entry is discarded, the datadir initialised by the tool again and saved
// again.
func TestInitDatadirFromCache(t *testing.T) {
	if _, err := FindBinary(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install a server: %v", err)
		}
		t.Skip(err)
	}
	c, err := cache.Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	start := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		sb, err := StartSandbox(ctx, SandboxConfig{TempDir: t.TempDir(), InitCache: c})
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := openDB(t, sb).QueryRow("SELECT COUNT(*) FROM mysql.user").Scan(&n); err != nil || n == 0 {
			t.Fatalf("the sandbox's system tables: %d users, %v", n, err)
		}
		if err := sb.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	entry := func() *cache.Entry {
		t.Helper()
		all, err := c.List()
		if err != nil || len(all) != 1 || !strings.HasPrefix(all[0].Key.Shape, "initialised datadir") {
			t.Fatalf("cache after a start: %d entries, %v", len(all), err)
		}
		return all[0]
	}
	start()
	e := entry()
	past := time.Now().Add(-time.Hour)
	used := filepath.Join(c.Dir(), "entries", e.ID, "used")
	if err := os.Chtimes(used, past, past); err != nil {
		t.Fatal(err)
	}
	start()
	if e2 := entry(); !e2.LastUse.After(past.Add(time.Minute)) || !e2.Created.Equal(e.Created) {
		t.Fatalf("the second sandbox did not start from the cached datadir (last use %s, created %s/%s)", e2.LastUse, e2.Created, e.Created)
	}
	// Damage one system file (a private copy: the entry's files may be
	// links to the first sandbox's golden copy).
	var victim string
	for _, f := range e.Files {
		if !f.IsDir && f.Size > 0 && strings.HasPrefix(f.Path, "mysql/") {
			victim = filepath.Join(c.Dir(), "entries", e.ID, "data", f.Path)
			break
		}
	}
	b, err := os.ReadFile(victim)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(victim); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(victim, b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	start()
	if e3 := entry(); !e3.Created.After(e.Created) {
		t.Fatal("the damaged entry was not replaced by a fresh one")
	}
}
