package runner

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"benchmatrix/cache"
	"benchmatrix/experiment"
	"benchmatrix/record"
	"benchmatrix/results"
)

// cacheManifest is a one-cell read-only manifest on a shape large enough
// to be cached, with its cache in dir.
func cacheManifest(dir, extra string) string {
	return `
[experiment]
duration = "1s"
warmup = "0s"
[server]
cache = "` + dir + `"
` + extra + `
[workload]
name = "oltp_read_only"
table_size = 100000
`
}

func runOnce(t *testing.T, src string) *record.Run {
	t.Helper()
	run, err := Run(context.Background(), planFrom(t, src), Config{OutDir: t.TempDir(), Start: sandboxStart, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range run.Cells {
		if c.Status != record.CellOK || c.Result == nil || c.Result.Events == 0 || c.Result.Errors > 0 {
			t.Fatalf("cell %s: %s %s", c.Name, c.Status, c.Error)
		}
	}
	return run
}

// A second run restores the first one's data from the cache instead of
// loading it, and says from which entry.
func TestDataCacheSecondRunRestores(t *testing.T) {
	needServer(t)
	dir := t.TempDir()
	first := runOnce(t, cacheManifest(dir, ""))
	c0 := first.Cells[0]
	if c0.Data != "loaded" || c0.DataCache == "" {
		t.Fatalf("first run: data %q, cache entry %q", c0.Data, c0.DataCache)
	}
	// Before the second run, its plan says the load will be a restore.
	m, err := experiment.Parse("m.toml", cacheManifest(dir, ""))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(context.Background(), m, experiment.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "in the data cache: entry "+c0.DataCache) {
		t.Fatalf("the plan does not name the cache entry %s:\n%s", c0.DataCache, text.String())
	}
	uncached := *p
	uncached.Cached = nil
	if p.Estimate() >= uncached.Estimate() {
		t.Fatalf("estimate with the entry %s, without %s: a restore is estimated as a load", p.Estimate(), uncached.Estimate())
	}
	second := runOnce(t, cacheManifest(dir, ""))
	c1 := second.Cells[0]
	if c1.Data != "cached" || c1.DataCache != c0.DataCache {
		t.Fatalf("second run: data %q from entry %q, want cached from %q", c1.Data, c1.DataCache, c0.DataCache)
	}
	if !c1.Change.Reload {
		t.Fatal("a cache restore is a data reload in the plan's terms")
	}
	var md strings.Builder
	if err := results.WriteMarkdown(&md, second); err != nil {
		t.Fatal(err)
	}
	if want := "| data | restored from the data cache 1 ("; !strings.Contains(md.String(), want) || !strings.Contains(md.String(), "entry "+c0.DataCache) {
		t.Fatalf("summary.md does not say the data came from cache entry %s:\n%s", c0.DataCache, md.String())
	}
	// A different data shape is not served the cached one.
	third := runOnce(t, strings.Replace(cacheManifest(dir, ""), "table_size = 100000", "table_size = 100001", 1))
	if c := third.Cells[0]; c.Data != "loaded" || c.DataCache == c0.DataCache {
		t.Fatalf("another shape: data %q from %q", c.Data, c.DataCache)
	}
	// cache = "off" neither reads nor writes it.
	off := runOnce(t, strings.Replace(cacheManifest(dir, ""), `cache = "`+dir+`"`, `cache = "off"`, 1))
	if c := off.Cells[0]; c.Data != "loaded" || c.DataCache != "" {
		t.Fatalf("cache off: data %q, entry %q", c.Data, c.DataCache)
	}
}

// A corrupted entry is detected on restore, discarded and the data loaded
// again (and cached again); it is never used.
func TestDataCacheCorruptEntryReloaded(t *testing.T) {
	needServer(t)
	dir := t.TempDir()
	first := runOnce(t, cacheManifest(dir, ""))
	id := first.Cells[0].DataCache
	if id == "" {
		t.Fatal("nothing cached")
	}
	// Flip one byte in the middle of the table's tablespace: same size,
	// so only the checksum can tell.
	ibd := filepath.Join(dir, "entries", id, "data", "sbtest", "sbtest1.ibd")
	st, err := os.Stat(ibd)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(ibd, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	second := runOnce(t, cacheManifest(dir, ""))
	c := second.Cells[0]
	if c.Data != "loaded" || !strings.Contains(c.DataCacheNote, "corrupt") || !strings.Contains(c.DataCacheNote, "sbtest1.ibd") {
		t.Fatalf("after damage: data %q, note %q", c.Data, c.DataCacheNote)
	}
	if c.DataCache != id {
		t.Fatalf("the reloaded data was not cached again under %s: %q", id, c.DataCache)
	}
	third := runOnce(t, cacheManifest(dir, ""))
	if c := third.Cells[0]; c.Data != "cached" || c.DataCacheNote != "" {
		t.Fatalf("third run: data %q, note %q", c.Data, c.DataCacheNote)
	}
}

// Two runs filling one cache at once leave one sound entry, which a third
// run restores.
func TestDataCacheConcurrentRuns(t *testing.T) {
	needServer(t)
	dir := t.TempDir()
	src := cacheManifest(dir, "")
	var wg sync.WaitGroup
	runs := make([]*record.Run, 2)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run, err := Run(context.Background(), planFrom(t, src), Config{OutDir: t.TempDir(), Start: sandboxStart, Log: testWriter{t}})
			if err != nil {
				t.Error(err)
				return
			}
			runs[i] = run
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, r := range runs {
		if c := r.Cells[0]; c.Status != record.CellOK || c.DataCache == "" {
			t.Fatalf("concurrent run: %s, data %q entry %q note %q", c.Status, c.Data, c.DataCache, c.DataCacheNote)
		}
	}
	c, err := cache.Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	all, err := c.List()
	if err != nil || len(all) != 1 {
		t.Fatalf("entries after two concurrent runs: %d (%v)", len(all), err)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(left) != 0 {
		t.Fatalf("left in the cache's tmp: %v", left)
	}
	third := runOnce(t, src)
	if c := third.Cells[0]; c.Data != "cached" || c.DataCache != all[0].ID {
		t.Fatalf("after concurrent runs: data %q entry %q", c.Data, c.DataCache)
	}
}

// With room for one real entry, caching a second shape evicts the first.
func TestDataCacheEvictionRespectsLimit(t *testing.T) {
	needServer(t)
	dir := t.TempDir()
	first := runOnce(t, cacheManifest(dir, ""))
	c, err := cache.Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	all, err := c.List()
	if err != nil || len(all) != 1 {
		t.Fatalf("entries: %d %v", len(all), err)
	}
	limit := all[0].Size * 3 / 2
	extra := "cache_size = " + strconv.FormatInt(limit, 10)
	second := runOnce(t, strings.Replace(cacheManifest(dir, extra), "table_size = 100000", "table_size = 100001", 1))
	all, err = c.List()
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, e := range all {
		total += e.Size
	}
	if len(all) != 1 || all[0].ID != second.Cells[0].DataCache || total > limit {
		t.Fatalf("after a second shape with room for one: %d entries, %d bytes (limit %d); first %s second %s",
			len(all), total, limit, first.Cells[0].DataCache, second.Cells[0].DataCache)
	}
}
