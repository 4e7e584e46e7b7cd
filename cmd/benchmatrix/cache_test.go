package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchmatrix/cache"
	"benchmatrix/exitcode"
)

// cache ls, rm and prune on a cache with two small entries.
func TestCacheCommands(t *testing.T) {
	dir := t.TempDir()
	c, err := cache.Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, shape := range []string{"sbtest tables=1 size=100000", "sbtest tables=4 size=1000000"} {
		src := filepath.Join(t.TempDir(), "data")
		if err := os.MkdirAll(filepath.Join(src, "sbtest"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, "sbtest", "sbtest1.ibd"), bytes.Repeat([]byte("x"), 4096), 0o600); err != nil {
			t.Fatal(err)
		}
		id, _, err := c.Put(context.Background(), cache.Key{Server: "mariadb 10.11", Schema: "sbtest", Shape: shape, Seed: "clock"}, src)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := cmdCache(args, &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, _ := run("ls", "--dir", dir)
	if code != exitcode.OK || !strings.Contains(out, "2 entries") || !strings.Contains(out, ids[0]) || !strings.Contains(out, "tables=4 size=1000000") {
		t.Fatalf("ls: %d\n%s", code, out)
	}
	if code, _, errs := run("rm", "--dir", dir, "0000000000000000"); code != exitcode.Usage || !strings.Contains(errs, "no such cache entry") {
		t.Fatalf("rm of an unknown id: %d %s", code, errs)
	}
	if code, _, errs := run("rm", "--dir", dir, "../etc"); code != exitcode.Usage || !strings.Contains(errs, "not a cache entry id") {
		t.Fatalf("rm of a malformed id: %d %s", code, errs)
	}
	if code, out, _ := run("rm", "--dir", dir, ids[0]); code != exitcode.OK || !strings.Contains(out, "removed "+ids[0]) {
		t.Fatalf("rm: %d %s", code, out)
	}
	if code, _, errs := run("prune", "--dir", dir, "--max-size", "lots"); code != exitcode.Usage || !strings.Contains(errs, "--max-size") {
		t.Fatalf("prune with a bad size: %d %s", code, errs)
	}
	if code, out, _ := run("prune", "--dir", dir); code != exitcode.OK || !strings.Contains(out, "nothing to evict") {
		t.Fatalf("prune under the limit: %d %s", code, out)
	}
	if code, out, _ := run("prune", "--dir", dir, "--max-size", "0"); code != exitcode.OK || !strings.Contains(out, "evicted "+ids[1]) {
		t.Fatalf("prune to 0: %d %s", code, out)
	}
	if _, out, _ := run("ls", "--dir", dir); !strings.Contains(out, "0 entries") {
		t.Fatalf("ls after prune: %s", out)
	}
	if code, _, _ := run("frob"); code != exitcode.Usage {
		t.Fatalf("unknown subcommand: %d", code)
	}
	if code, _, errs := run("ls"); code != exitcode.Usage || !strings.Contains(errs, "off") {
		t.Fatalf("ls with the cache off in the environment: %d %s", code, errs)
	}
}
