package runner

import (
	"context"
	"database/sql"
	"fmt"

	"benchmatrix/experiment"
	"benchmatrix/record/parts"
	"benchmatrix/server"
)

// A cold start that really is cold. The restart comes once the cell's data
// is in place: a load (or a restart before it) leaves the buffer pool
// holding what the load wrote last, so a restart before the load was cold
// only in name. Then the datadir's files are dropped from the OS page cache
// (server.CacheDropper): InnoDB reads with O_DIRECT and bypasses it, but
// MyISAM reads its data through it, and a restarted MyISAM server would
// find its tables in memory still. What was done is recorded on the cell
// (parts.ColdStart).

// coldStart restarts the server for a cold start unless the data came in
// with a restart of its own (a snapshot restore or the data cache start the
// server on the restored files), drops the datadir's files from the page
// cache, sets the cell's globals again (a restart loses them) and records
// what the buffer pool held then.
func (r *Runner) coldStart(ctx context.Context, c *experiment.Cell, cr *cellRun) error {
	res := cr.res
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
		r.cfg.Progress.Phase("cold restart")
		why := "restart for a cold start, after the data was in place"
		if res.Data == "loaded" {
			why += " (the load had filled the buffer pool)"
		}
		fmt.Fprintf(r.log, "    %s\n", why)
		if err := r.restart(ctx, r.srv.Startup()); err != nil {
			return fmt.Errorf("cold restart: %w", err)
		}
		res.Restarted, cs.Restarted = true, true
		if err := r.configure(ctx, c, res); err != nil {
			return err
		}
	}
	if d, ok := r.srv.(server.CacheDropper); ok {
		dr, err := d.DropPageCache(ctx)
		if err != nil {
			return fmt.Errorf("cold start: drop the datadir from the page cache: %w", err)
		}
		cs.PageCache, cs.Files, cs.CachedBefore, cs.CachedAfter = true, dr.Files, dr.CachedBefore, dr.CachedAfter
		fmt.Fprintf(r.log, "    page cache: %d datadir files, %.1f MiB cached before the drop, %.1f MiB after\n",
			dr.Files, mib(dr.CachedBefore), mib(dr.CachedAfter))
	} else {
		cs.PageCache = false
		cs.PageCacheWhy = fmt.Sprintf("the %s provider cannot drop its server's files from the page cache", r.m.Server.Provider)
	}
	db := r.openDB("")
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
