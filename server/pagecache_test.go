package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// dropPageCache writes back and drops a directory's files from the page
// cache, counting what was cached before and after: a file just written
// is cached; after the drop it is not (on a filesystem with a page cache
// to drop from: tmpfs keeps its pages, and the test says so).
func TestDropPageCache(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 4<<20)
	for i := range data {
		data[i] = byte(i)
	}
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.ibd", "sub/b.MYD", "empty"} {
		d := data
		if name == "empty" {
			d = nil
		}
		if err := os.WriteFile(filepath.Join(dir, name), d, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	res, err := dropPageCache(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 3 {
		t.Errorf("files: %d, want 3", res.Files)
	}
	if res.CachedBefore < 4<<20 {
		t.Fatalf("cached before the drop: %d bytes of 8 MiB just written", res.CachedBefore)
	}
	if res.CachedAfter > 0 {
		if isTmpfs(dir) {
			t.Skipf("%s is on tmpfs, whose pages cannot be dropped", dir)
		}
		t.Errorf("cached after the drop: %d bytes", res.CachedAfter)
	}
	if _, err := dropPageCache(context.Background(), filepath.Join(dir, "missing")); err != nil {
		t.Errorf("a missing directory: %v", err)
	}
}

func isTmpfs(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.TMPFS_MAGIC
}
