// Package coldstart is a cold start that really is cold, at the end of a
// cell's load phase. The restart comes once the cell's data is in place: a
// load (or a restart before it) leaves the buffer pool holding what the
// load wrote last, so a restart before the load was cold only in name.
// Then the datadir's files are dropped from the OS page cache
// (server.CacheDropper): InnoDB reads with O_DIRECT and bypasses it, but
// MyISAM reads its data through it, and a restarted MyISAM server would
// find its tables in memory still. What was done is recorded on the cell
// (parts.ColdStart).
package coldstart

import (
	"context"
	"database/sql"
	"fmt"

	"benchmatrix/lifecycle"
	"benchmatrix/record/parts"
	"benchmatrix/server"
)

// Hook is a cold start in one cell.
type Hook struct{}

// New is a cell's hook.
func New() lifecycle.Hook { return Hook{} }

// Feature implements lifecycle.Hook.
func (Hook) Feature() string { return "cold start" }

// Loaded restarts the server for a cold start unless the data came in
// with a restart of its own (a snapshot restore or the data cache start
// the server on the restored files), drops the datadir's files from the
// page cache, and records what the buffer pool held then. A cell is cold
// when its policy says so and the plan's change is a cold start or a new
// server: a new server that loaded its data is no colder than a reused
// one.
func (Hook) Loaded(ctx context.Context, cell lifecycle.Cell) error {
	c, res, log := cell.Planned(), cell.Record(), cell.Log()
	if !c.Policy.Cold || !(res.Change.Cold || res.Change.Start) {
		return nil
	}
	cs := &parts.ColdStart{PoolDataBytes: -1}
	res.ColdStart = cs
	switch res.Data {
	case "restored", "cached":
		cs.Why = "the data was restored with a restart of the server on the restored files: the buffer pool was empty"
	case "reused":
		if res.Restarted {
			cs.Why = "the server restarted for the cell's settings with its data in place: the buffer pool was empty"
			break
		}
		fallthrough
	default:
		cell.Progress("cold restart")
		why := "restart for a cold start, after the data was in place"
		if res.Data == "loaded" {
			why += " (the load had filled the buffer pool)"
		}
		fmt.Fprintf(log, "    %s\n", why)
		if err := cell.Restart(ctx); err != nil { // the cell's settings are set again
			return fmt.Errorf("cold restart: %w", err)
		}
		cs.Restarted = true
	}
	if d, ok := cell.Server().(server.CacheDropper); ok {
		dr, err := d.DropPageCache(ctx)
		if err != nil {
			return fmt.Errorf("cold start: drop the datadir from the page cache: %w", err)
		}
		cs.PageCache, cs.Files, cs.CachedBefore, cs.CachedAfter = true, dr.Files, dr.CachedBefore, dr.CachedAfter
		fmt.Fprintf(log, "    page cache: %d datadir files, %.1f MiB cached before the drop, %.1f MiB after\n",
			dr.Files, mib(dr.CachedBefore), mib(dr.CachedAfter))
	} else {
		cs.PageCache = false
		cs.PageCacheWhy = fmt.Sprintf("the %s provider cannot drop its server's files from the page cache", cell.Plan().Manifest.Server.Provider)
	}
	db := cell.OpenDB("")
	defer db.Close()
	if n, err := poolDataBytes(ctx, db); err == nil {
		cs.PoolDataBytes = n
	}
	return nil
}

// poolDataBytes is Innodb_buffer_pool_bytes_data: the bytes of data pages
// in the buffer pool.
func poolDataBytes(ctx context.Context, db *sql.DB) (int64, error) {
	var name string
	var v int64
	err := db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_bytes_data'").Scan(&name, &v)
	return v, err
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
