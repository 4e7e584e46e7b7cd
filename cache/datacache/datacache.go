// Package datacache is the data cache in a cell's lifecycle: a loaded data
// shape's snapshot is kept in the cache directory ([server] cache) under
// the key of everything that determined the data, and a later run restores
// it instead of loading. Only providers whose snapshots can leave the run
// (server.DatadirSwapper: the sandbox) use it.
package datacache

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
	"benchmatrix/lifecycle"
	"benchmatrix/server"
)

// FormatVariables are the server variables that change the data's on-disk
// form or its definition: an entry is only restored on a server where all
// of them have the values they had when it was loaded. (The redo log's
// size is not among them: the servers resize the log at start.)
var FormatVariables = []string{"innodb_page_size", "innodb_data_file_path", "innodb_undo_tablespaces",
	"innodb_checksum_algorithm", "innodb_file_per_table", "innodb_default_row_format", "innodb_compression_default",
	"character_set_server", "collation_server", "lower_case_table_names", "default_storage_engine"}

// Hook is the data cache of one run: the load phase restores a cached
// entry instead of loading, and keeps what it loaded. It lives as long as
// the run (New): the cache is opened once.
type Hook struct {
	spec   experiment.ServerSpec
	opened bool
	c      *cache.Cache // nil: off, or could not be opened
	keys   map[string]cache.Key
}

// New is the data cache of a run on the server spec names.
func New(spec experiment.ServerSpec) *Hook { return &Hook{spec: spec} }

// Feature implements lifecycle.Hook.
func (*Hook) Feature() string { return "data cache" }

// cacheFor returns the open cache, or nil when it is off, the provider
// cannot use it, or it could not be opened (said once in the log).
func (h *Hook) cacheFor(cell lifecycle.Cell) (*cache.Cache, server.DatadirSwapper) {
	sw, ok := cell.Server().(server.DatadirSwapper)
	if !ok {
		return nil, nil
	}
	if !h.opened {
		h.opened = true
		c, err := Open(h.spec)
		if err != nil {
			fmt.Fprintf(cell.Log(), "    data cache not used: %v\n", err)
		}
		h.c = c
	}
	if h.c == nil {
		return nil, nil
	}
	return h.c, sw
}

// Open opens the cache a manifest's [server] section names: its cache
// directory (default: cache.DefaultDir) and size limit. It returns nil,
// nil when the cache is off.
func Open(spec experiment.ServerSpec) (*cache.Cache, error) {
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
	return o.Data().Rows() >= lifecycle.SnapshotMinRows
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
func cacheKey(ctx context.Context, cell lifecycle.Cell, o engine.Spec) (cache.Key, error) {
	info := cell.Server().Info()
	k := dataKey(info.Binary, cell.Schema(), o)
	k.Server = string(info.Flavor) + " " + info.Version
	db := cell.OpenDB("")
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

// Restore restores o's data (shape key) from the cache when an entry for
// it exists and is sound, restarting the server on it. It reports whether
// it did; a corrupt entry is discarded (noted on the cell) and the data
// loaded instead.
func (h *Hook) Restore(ctx context.Context, cell lifecycle.Cell, key string, o engine.Spec) (bool, error) {
	c, sw := h.cacheFor(cell)
	if c == nil || !cacheable(o) {
		return false, nil
	}
	res, log := cell.Record(), cell.Log()
	k, err := cacheKey(ctx, cell, o)
	if err != nil {
		fmt.Fprintf(log, "    data cache not used: %v\n", err)
		return false, nil
	}
	if h.keys == nil {
		h.keys = map[string]cache.Key{}
	}
	h.keys[key] = k
	id := k.ID()
	if !c.Has(id) {
		return false, nil
	}
	stage, err := sw.StagingDir()
	if err != nil {
		return false, err
	}
	cell.Progress("restore from the data cache")
	fmt.Fprintf(log, "    restore the %s data from the data cache (entry %s)\n", o.Workload(), id)
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
		fmt.Fprintf(log, "    %v; loading instead\n", err)
		return false, nil
	}
	copied := time.Since(start)
	if err := sw.SwapDatadir(ctx, stage, cell.Server().Startup()); err != nil {
		return true, fmt.Errorf("restore from the data cache: %w", err)
	}
	fmt.Fprintf(log, "    copied and checked %s in %.1fs; server restarted on it in %.1fs\n",
		cache.Bytes(e.Size), copied.Seconds(), (time.Since(start) - copied).Seconds())
	res.Data, res.DataCache = "cached", id
	return true, nil
}

// Snapshotted keeps the snapshot of o's just-loaded data (shape key) in
// the cache. A failure is the cache's problem, not the cell's: it is
// logged and noted.
func (h *Hook) Snapshotted(ctx context.Context, cell lifecycle.Cell, key string, o engine.Spec) {
	c, sw := h.cacheFor(cell)
	k, ok := h.keys[key]
	if c == nil || !ok || !cacheable(o) {
		return
	}
	res := cell.Record()
	cell.Progress("save in the data cache")
	id, stored, err := c.Put(ctx, k, sw.SnapshotPath(key))
	if err != nil {
		res.DataCacheNote = err.Error()
		fmt.Fprintf(cell.Log(), "    data cache: %v\n", err)
		return
	}
	res.DataCache = id
	if stored {
		fmt.Fprintf(cell.Log(), "    saved in the data cache as entry %s (%s)\n", id, c.Dir())
	}
}

// InitCache is the cache in which the sandbox keeps initialised datadirs:
// the data cache of the manifest, or nil when it is off or cannot be
// opened (the run then says so when it first needs the cache).
func InitCache(spec experiment.ServerSpec) *cache.Cache {
	if !catalog.Provider(spec.Provider).Reads("cache") {
		return nil // the provider's descriptor: no cache
	}
	c, err := Open(spec)
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
	c, err := Open(spec)
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
