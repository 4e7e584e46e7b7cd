package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"benchmatrix/cache"
	"benchmatrix/catalog"
	"benchmatrix/engine"
	"benchmatrix/experiment"
	"benchmatrix/record"
	"benchmatrix/server"
)

// The data cache across runs: a loaded data shape's snapshot is kept in
// the cache directory ([server] cache) under the key of everything that
// determined the data, and a later run restores it instead of loading.
// Only providers whose snapshots can leave the run (server.DatadirSwapper:
// the sandbox) use it.

// dataCache is the runner's state of the cache.
type dataCache struct {
	opened bool
	c      *cache.Cache // nil: off, or could not be opened
	keys   map[string]cache.Key
}

// FormatVariables are the server variables that change the data's on-disk
// form or its definition: an entry is only restored on a server where all
// of them have the values they had when it was loaded. (The redo log's
// size is not among them: the servers resize the log at start.)
var FormatVariables = []string{"innodb_page_size", "innodb_data_file_path", "innodb_undo_tablespaces",
	"innodb_checksum_algorithm", "innodb_file_per_table", "innodb_default_row_format", "innodb_compression_default",
	"character_set_server", "collation_server", "lower_case_table_names", "default_storage_engine"}

// cacheHook is the data cache in a cell's lifecycle: a load phase restores
// a cached entry instead of loading, and keeps what it loaded.
type cacheHook struct{}

func (cacheHook) feature() string { return "data cache" }

func (cacheHook) restore(ctx context.Context, cr *cellRun, key string, o engine.Spec) (bool, error) {
	return cr.r.restoreCached(ctx, key, o, cr.res)
}

func (cacheHook) snapshotted(ctx context.Context, cr *cellRun, key string, o engine.Spec) {
	cr.r.storeCached(ctx, key, o, cr.res)
}

// cacheFor returns the open cache, or nil when it is off, the provider
// cannot use it, or it could not be opened (said once in the log).
func (r *Runner) cacheFor() (*cache.Cache, server.DatadirSwapper) {
	sw, ok := r.srv.(server.DatadirSwapper)
	if !ok {
		return nil, nil
	}
	if !r.dc.opened {
		r.dc.opened = true
		c, err := OpenCache(r.m.Server)
		if err != nil {
			fmt.Fprintf(r.log, "    data cache not used: %v\n", err)
		}
		r.dc.c = c
	}
	if r.dc.c == nil {
		return nil, nil
	}
	return r.dc.c, sw
}

// OpenCache opens the cache a manifest's [server] section names: its
// cache directory (default: cache.DefaultDir) and size limit. It returns
// nil, nil when the cache is off.
func OpenCache(spec experiment.ServerSpec) (*cache.Cache, error) {
	dir := spec.Cache
	if dir == experiment.CacheOff {
		return nil, nil
	}
	if dir == "" {
		d, err := cache.DefaultDir()
		if err != nil || d == cache.Off {
			return nil, err
		}
		dir = d
	}
	var limit int64
	if spec.CacheSize != "" {
		n, err := catalog.ParseBytes(spec.CacheSize)
		if err != nil {
			return nil, fmt.Errorf("[server] cache_size: %w", err)
		}
		limit = n
	}
	return cache.Open(dir, limit)
}

// cacheable: the data shapes worth a snapshot are worth caching.
func cacheable(o engine.Spec) bool {
	return o.Data().Rows() >= SnapshotMinRows
}

// dataKey is the part of a cache key known before the server runs: the
// binary, the schema and what the load does.
func dataKey(binary, schema string, o engine.Spec) cache.Key {
	k := cache.Key{Binary: binary, Schema: schema, Shape: o.Data().Shape, Seed: "clock", Format: map[string]string{}}
	if st, err := os.Stat(binary); err == nil {
		k.Stamp = fmt.Sprintf("%d bytes, modified %s", st.Size(), st.ModTime().UTC().Format("2006-01-02T15:04:05.999999999Z"))
	}
	if seed := o.Common().Seed; seed != 0 {
		k.Seed = strconv.FormatInt(seed, 10)
	}
	k.Dist = o.Data().Dist
	return k
}

// cacheKey is everything that determines o's data on this server.
func (r *Runner) cacheKey(ctx context.Context, o engine.Spec) (cache.Key, error) {
	info := r.srv.Info()
	k := dataKey(info.Binary, r.schema, o)
	k.Server = string(info.Flavor) + " " + info.Version
	db := r.openDB("")
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('"+strings.Join(FormatVariables, "','")+"')")
	if err != nil {
		return k, fmt.Errorf("read the format variables: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return k, err
		}
		k.Format[strings.ToLower(name)] = value
	}
	return k, rows.Err()
}

// restoreCached restores o's data (shape key) from the cache when an
// entry for it exists and is sound. It reports whether it did; a corrupt
// entry is discarded (noted on the cell) and the data loaded instead.
func (r *Runner) restoreCached(ctx context.Context, key string, o engine.Spec, res *record.Cell) (bool, error) {
	c, sw := r.cacheFor()
	if c == nil || !cacheable(o) {
		return false, nil
	}
	k, err := r.cacheKey(ctx, o)
	if err != nil {
		fmt.Fprintf(r.log, "    data cache not used: %v\n", err)
		return false, nil
	}
	if r.dc.keys == nil {
		r.dc.keys = map[string]cache.Key{}
	}
	r.dc.keys[key] = k
	id := k.ID()
	if !c.Has(id) {
		return false, nil
	}
	stage, err := sw.StagingDir()
	if err != nil {
		return false, err
	}
	r.cfg.Progress.Phase("restore from the data cache")
	fmt.Fprintf(r.log, "    restore the %s data from the data cache (entry %s)\n", o.Workload(), id)
	start := time.Now()
	e, err := c.Restore(ctx, id, stage)
	if err != nil {
		_ = os.RemoveAll(stage)
		var bad *cache.CorruptError
		if errors.As(err, &bad) {
			res.DataCacheNote = err.Error()
		}
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		fmt.Fprintf(r.log, "    %v; loading instead\n", err)
		return false, nil
	}
	copied := time.Since(start)
	if err := sw.SwapDatadir(ctx, stage, r.srv.Startup()); err != nil {
		r.loaded, r.loadedOpts = "", nil
		return true, fmt.Errorf("restore from the data cache: %w", err)
	}
	fmt.Fprintf(r.log, "    copied and checked %s in %.1fs; server restarted on it in %.1fs\n",
		cache.Bytes(e.Size), copied.Seconds(), (time.Since(start) - copied).Seconds())
	res.Data, res.DataCache = "cached", id
	r.setLoaded(key, o)
	return true, nil
}

// storeCached keeps the snapshot of o's just-loaded data (shape key) in
// the cache. A failure is the cache's problem, not the cell's: it is
// logged and noted.
func (r *Runner) storeCached(ctx context.Context, key string, o engine.Spec, res *record.Cell) {
	c, sw := r.cacheFor()
	k, ok := r.dc.keys[key]
	if c == nil || !ok || !cacheable(o) {
		return
	}
	r.cfg.Progress.Phase("save in the data cache")
	id, stored, err := c.Put(ctx, k, sw.SnapshotPath(key))
	if err != nil {
		res.DataCacheNote = err.Error()
		fmt.Fprintf(r.log, "    data cache: %v\n", err)
		return
	}
	res.DataCache = id
	if stored {
		fmt.Fprintf(r.log, "    saved in the data cache as entry %s (%s)\n", id, c.Dir())
	}
}

// initCache is the cache in which the sandbox keeps initialised datadirs:
// the data cache of the manifest, or nil when it is off or cannot be
// opened (the run then says so when it first needs the cache).
func initCache(spec experiment.ServerSpec) *cache.Cache {
	if !catalog.Provider(spec.Provider).Reads("cache") {
		return nil // the provider's descriptor: no cache
	}
	c, err := OpenCache(spec)
	if err != nil {
		return nil
	}
	return c
}

// MarkCached notes in the plan the loads the data cache already holds for
// the sandbox's binary (plan.Cached): `plan` then says so and estimates a
// restore. The server's on-disk format variables are not known before it
// starts, so a load marked here may still be a load. It never creates the
// cache directory.
func MarkCached(p *experiment.Plan) {
	spec := p.Manifest.Server
	if spec.Provider != catalog.Sandbox || spec.Cache == experiment.CacheOff {
		return
	}
	dir := spec.Cache
	if dir == "" {
		d, err := cache.DefaultDir()
		if err != nil || d == cache.Off {
			return
		}
		dir = d
	}
	if _, err := os.Stat(dir); err != nil {
		return
	}
	c, err := OpenCache(spec)
	if err != nil || c == nil {
		return
	}
	bin, err := server.FindBinary(spec.Binary)
	if err != nil {
		return
	}
	entries, err := c.List() // the most recently used first
	if err != nil {
		return
	}
	for _, cell := range p.Cells {
		o := cell.Workload
		if !cell.Change.Reload || !cacheable(o) {
			continue
		}
		want := dataKey(bin, spec.Schema, o)
		for _, e := range entries {
			k := e.Key
			if k.Binary == want.Binary && k.Stamp == want.Stamp && k.Schema == want.Schema && k.Shape == want.Shape &&
				k.Seed == want.Seed && k.Dist == want.Dist {
				if p.Cached == nil {
					p.Cached = map[string]experiment.CachedData{}
				}
				p.Cached[want.Shape] = experiment.CachedData{Entry: e.ID, Bytes: e.Size}
				break
			}
		}
	}
}
