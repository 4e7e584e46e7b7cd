package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeDatadir writes a small tree shaped like a datadir.
func fakeDatadir(t *testing.T, seed string, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	files := map[string][]byte{
		"ibdata1":            bytes.Repeat([]byte(seed), size),
		"ib_logfile0":        bytes.Repeat([]byte("L"+seed), size/2),
		"sbtest/sbtest1.ibd": bytes.Repeat([]byte("row"+seed), size/4),
		"sbtest/db.opt":      []byte("default-character-set=utf8mb4\n"),
		"mysql/user.MAI":     []byte(seed),
	}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o660); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func key(shape string) Key {
	return Key{Binary: "/usr/sbin/mariadbd", Server: "mariadb 10.11", Schema: "sbtest", Shape: shape, Seed: "clock",
		Format: map[string]string{"innodb_page_size": "16384"}}
}

func sameTree(t *testing.T, a, b string) {
	t.Helper()
	fa, _, err := copyTree(context.Background(), a, filepath.Join(t.TempDir(), "x"), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	fb, _, err := copyTree(context.Background(), b, filepath.Join(t.TempDir(), "y"), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if why := compareFiles(fa, fb); why != "" {
		t.Fatalf("trees differ: %s", why)
	}
}

func TestPutRestoreRoundTrip(t *testing.T) {
	t.Parallel()
	c, err := Open(t.TempDir(), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	src := fakeDatadir(t, "a", 100000)
	// What a writer killed with SIGKILL left (its pid no longer exists).
	dead := filepath.Join(c.Dir(), "tmp", "put-2147483646-123")
	if err := os.MkdirAll(filepath.Join(dead, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	id, stored, err := c.Put(context.Background(), key("s1"), src)
	if err != nil || !stored {
		t.Fatalf("put: stored=%v err=%v", stored, err)
	}
	if id2, stored2, err := c.Put(context.Background(), key("s1"), src); err != nil || stored2 || id2 != id {
		t.Fatalf("second put of the same key: %s %v %v", id2, stored2, err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Fatalf("a dead writer's directory is left: %v", err)
	}
	dst := filepath.Join(t.TempDir(), "restored")
	e, err := c.Restore(context.Background(), id, dst)
	if err != nil {
		t.Fatal(err)
	}
	if e.Key.Shape != "s1" || e.Size == 0 {
		t.Fatalf("entry: %+v", e)
	}
	sameTree(t, src, dst)
	// A restore stopped by its context leaves no copy and keeps the entry.
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	half := filepath.Join(t.TempDir(), "half")
	if _, err := c.Restore(stopped, id, half); !errors.Is(err, context.Canceled) || !c.Has(id) {
		t.Fatalf("cancelled restore: %v, entry kept %v", err, c.Has(id))
	}
	if _, err := os.Stat(half); !os.IsNotExist(err) {
		t.Fatalf("a cancelled restore left its copy: %v", err)
	}
	if _, err := c.Restore(context.Background(), "0123456789abcdef", filepath.Join(t.TempDir(), "n")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing entry: %v", err)
	}
	if key("s1").ID() == key("s2").ID() {
		t.Fatal("different shapes share an id")
	}
	k := key("s1")
	k.Format = map[string]string{"innodb_page_size": "4096"}
	if k.ID() == id {
		t.Fatal("a different page size shares an id")
	}
}

// Every kind of damage is detected on restore, the entry discarded and
// the half-restored directory removed.
func TestCorruptEntryDiscarded(t *testing.T) {
	t.Parallel()
	damage := map[string]func(data string) error{
		"truncated": func(d string) error { return os.Truncate(filepath.Join(d, "sbtest/sbtest1.ibd"), 100) },
		"byte altered": func(d string) error {
			f, err := os.OpenFile(filepath.Join(d, "ibdata1"), os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt([]byte("Z"), 5000)
			return err
		},
		"file missing": func(d string) error { return os.Remove(filepath.Join(d, "mysql/user.MAI")) },
		"file added":   func(d string) error { return os.WriteFile(filepath.Join(d, "sbtest/extra.ibd"), []byte("x"), 0o600) },
		"grown": func(d string) error {
			return os.WriteFile(filepath.Join(d, "sbtest/db.opt"), bytes.Repeat([]byte("y"), 1000), 0o600)
		},
		"entry.json": func(d string) error {
			return os.WriteFile(filepath.Join(filepath.Dir(d), "entry.json"), []byte("{not json"), 0o600)
		},
	}
	for name, hurt := range damage {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := Open(t.TempDir(), 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			id, _, err := c.Put(context.Background(), key("s"), fakeDatadir(t, "b", 50000))
			if err != nil {
				t.Fatal(err)
			}
			// Damage a copy of the file, not the source it may be linked to.
			data := filepath.Join(c.entryDir(id), "data")
			if err := unlinkCopies(data); err != nil {
				t.Fatal(err)
			}
			if err := hurt(data); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "restored")
			_, err = c.Restore(context.Background(), id, dst)
			var bad *CorruptError
			if !errors.As(err, &bad) {
				t.Fatalf("restore of a damaged entry: %v", err)
			}
			t.Log(err)
			if c.Has(id) {
				t.Fatal("the corrupt entry is still there")
			}
			if _, err := os.Stat(dst); !os.IsNotExist(err) {
				t.Fatalf("the half-restored directory is left: %v", err)
			}
		})
	}
}

// unlinkCopies replaces every file under dir by a private copy.
func unlinkCopies(dir string) error {
	return filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.Remove(p); err != nil {
			return err
		}
		return os.WriteFile(p, b, info.Mode())
	})
}

func TestVictims(t *testing.T) {
	t.Parallel()
	at := func(h int) time.Time { return time.Date(2026, 1, 1, h, 0, 0, 0, time.UTC) }
	all := []*Entry{{ID: "a", Size: 10, LastUse: at(3)}, {ID: "b", Size: 10, LastUse: at(1)},
		{ID: "c", Size: 10, LastUse: at(2)}, {ID: "d", Size: 10, LastUse: at(4)}}
	for _, tc := range []struct {
		limit int64
		keep  string
		want  string
	}{
		{40, "", ""}, {39, "", "b"}, {20, "", "b c"}, {15, "", "b c a"}, {20, "b", "c a"}, {-1, "", "b c a d"}, {-1, "d", "b c a"},
	} {
		var got []string
		for _, v := range Victims(all, tc.limit, tc.keep) {
			got = append(got, v.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(splitIDs(tc.want)) {
			t.Errorf("limit %d keep %q: evicted %v, want %v", tc.limit, tc.keep, got, tc.want)
		}
	}
}

func splitIDs(s string) []string {
	var out []string
	for _, f := range bytes.Fields([]byte(s)) {
		out = append(out, string(f))
	}
	return out
}

// Putting entries beyond the limit evicts the least recently used ones; a
// restore counts as a use.
func TestEvictionRespectsLimit(t *testing.T) {
	t.Parallel()
	src := fakeDatadir(t, "e", 40000) // ~70 KB per entry
	size, err := treeSize(src)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Open(t.TempDir(), 3*size)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	past := time.Now().Add(-time.Hour)
	for i, s := range []string{"s1", "s2", "s3"} {
		id, _, err := c.Put(context.Background(), key(s), src)
		if err != nil {
			t.Fatal(err)
		}
		ids[s] = id
		u := past.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(filepath.Join(c.entryDir(id), "used"), u, u); err != nil {
			t.Fatal(err)
		}
	}
	// s1 is the oldest; using it makes s2 the least recently used.
	if _, err := c.Restore(context.Background(), ids["s1"], filepath.Join(t.TempDir(), "r")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Put(context.Background(), key("s4"), src); err != nil {
		t.Fatal(err)
	}
	left, err := c.List()
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	have := map[string]bool{}
	for _, e := range left {
		total += e.Size
		have[e.ID] = true
	}
	if total > c.Limit() {
		t.Fatalf("the cache holds %d bytes, limit %d", total, c.Limit())
	}
	if have[ids["s2"]] || !have[ids["s1"]] || !have[ids["s3"]] || !have[key("s4").ID()] {
		t.Fatalf("after eviction: %v (s2 %s should be the one evicted)", have, ids["s2"])
	}
	// An entry bigger than the whole limit is not stored.
	small, err := Open(t.TempDir(), size/2)
	if err != nil {
		t.Fatal(err)
	}
	var big *TooBigError
	if _, _, err := small.Put(context.Background(), key("s"), src); !errors.As(err, &big) {
		t.Fatalf("put beyond the limit: %v", err)
	}
}

// An entry being read is neither removed nor evicted.
func TestEntryInUseIsKept(t *testing.T) {
	t.Parallel()
	c, err := Open(t.TempDir(), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := c.Put(context.Background(), key("s"), fakeDatadir(t, "u", 1000))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(c.entryDir(id), "entry.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	var busy *BusyError
	if err := c.Remove(id); !errors.As(err, &busy) {
		t.Fatalf("remove while in use: %v", err)
	}
	if ev, err := c.Prune(-1, ""); err != nil || len(ev) != 0 {
		t.Fatalf("prune while in use: %v %v", ev, err)
	}
	f.Close()
	if err := c.Remove(id); err != nil {
		t.Fatal(err)
	}
	if c.Has(id) {
		t.Fatal("removed entry still there")
	}
	if err := c.Remove("../../etc"); err == nil {
		t.Fatal("rm took a path")
	}
}

// Writers racing on one key and readers beside them leave one sound
// entry; every restore that succeeds restores the whole data.
func TestConcurrentPutsAndRestores(t *testing.T) {
	t.Parallel()
	c, err := Open(t.TempDir(), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	src := fakeDatadir(t, "c", 200000)
	var wg sync.WaitGroup
	stored := make(chan bool, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each writer opens the cache itself, as separate runs do.
			c2, err := Open(c.Dir(), 1<<30)
			if err != nil {
				t.Error(err)
				return
			}
			_, s, err := c2.Put(context.Background(), key("same"), src)
			if err != nil {
				t.Error(err)
			}
			stored <- s
			dst := filepath.Join(t.TempDir(), "r")
			if _, err := c2.Restore(context.Background(), key("same").ID(), dst); err != nil {
				t.Error(err)
				return
			}
			sameTree(t, src, dst)
		}()
	}
	wg.Wait()
	close(stored)
	n := 0
	for s := range stored {
		if s {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d writers stored the entry, want 1", n)
	}
	all, err := c.List()
	if err != nil || len(all) != 1 {
		t.Fatalf("entries: %v %v", all, err)
	}
	ents, _ := os.ReadDir(filepath.Join(c.Dir(), "tmp"))
	if len(ents) != 0 {
		t.Fatalf("left in tmp: %v", ents)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv(EnvVar, "")
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	if d, _ := DefaultDir(); d != "/x/cache/benchmatrix" {
		t.Errorf("with XDG_CACHE_HOME: %s", d)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if d, _ := DefaultDir(); d != "/home/u/.cache/benchmatrix" {
		t.Errorf("with HOME: %s", d)
	}
	t.Setenv(EnvVar, "OFF")
	if d, _ := DefaultDir(); d != Off {
		t.Errorf("with %s=OFF: %s", EnvVar, d)
	}
}
