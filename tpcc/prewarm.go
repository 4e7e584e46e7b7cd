package tpcc

import (
	"context"
	"fmt"
	"io"
	"sync"

	"database/sql"

	"benchmatrix/sqlconn"

	"github.com/go-sql-driver/mysql"
)

// Prewarm reads every table of o once (CHECKSUM TABLE: a scan of its
// clustered index), on o.Threads connections, so that a run starts with
// the rows in the buffer pool. sysbench-tpcc has no prewarm.
func Prewarm(ctx context.Context, cfg *mysql.Config, o Options, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	db, err := sqlconn.OpenDB(cfg, o.Threads)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := checkTables(&o, maxOnDB(ctx, db)); err != nil {
		return err
	}
	tables := make(chan string)
	go func() {
		defer close(tables)
		for _, t := range TableNames(o) {
			select {
			case tables <- t:
			case <-ctx.Done():
				return
			}
		}
	}()
	var mu sync.Mutex
	return onConns(ctx, db, &o, o.Threads, func(ctx context.Context, c *sql.Conn) error {
		for t := range tables {
			mu.Lock()
			fmt.Fprintf(log, "Prewarming table %s\n", t)
			mu.Unlock()
			rows, err := c.QueryContext(ctx, "CHECKSUM TABLE "+t)
			if err != nil {
				return fmt.Errorf("prewarm %s: %w", t, err)
			}
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return fmt.Errorf("prewarm %s: %w", t, err)
			}
		}
		return nil
	})
}
