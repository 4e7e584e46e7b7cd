package oltp

import (
	"context"
	"database/sql"
	"fmt"
	"io"

	"github.com/go-sql-driver/mysql"
)

// prewarmChunk is how many index entries one prewarm query walks. Every
// query is a bounded range scan, so a small server never has to
// materialise a table (sysbench's prewarm reads each table in one derived
// table and can lose the connection on a small server).
const prewarmChunk = 10000

func prewarm(ctx context.Context, cfg *mysql.Config, o Options, w io.Writer) error {
	log := &logger{w: w}
	threads := max(o.Threads, 1)
	db, err := openDB(cfg, threads)
	if err != nil {
		return err
	}
	defer db.Close()
	nums := tableNumbers(&o)
	return perTable(ctx, db, threads, nums, func(ctx context.Context, c *sql.Conn, n int) error {
		log.printf("Prewarming table %s", tableName(n))
		if err := prewarmTable(ctx, c, n); err != nil {
			return fmt.Errorf("prewarm %s: %w", tableName(n), err)
		}
		return nil
	})
}

// prewarmTable reads the clustered index (every row, in primary-key
// chunks) and then the k_N index, if the table has one, in k chunks.
func prewarmTable(ctx context.Context, c *sql.Conn, n int) error {
	t := tableName(n)
	if _, err := c.ExecContext(ctx, "ANALYZE TABLE "+t); err != nil {
		return err
	}
	// Clustered index: find the chunk's upper id by walking prewarmChunk
	// entries, then read the rows' columns in that id range.
	if err := walkChunks(ctx, c,
		"SELECT id FROM "+t+" WHERE id > ? ORDER BY id LIMIT 1 OFFSET ?",
		"SELECT COUNT(pad), SUM(LENGTH(c)) FROM "+t+" WHERE id > ? AND id <= ?",
		"SELECT COUNT(pad), SUM(LENGTH(c)) FROM "+t+" WHERE id > ?"); err != nil {
		return err
	}
	var idx int
	if err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? AND index_name = ?",
		t, fmt.Sprintf("k_%d", n)).Scan(&idx); err != nil {
		return err
	}
	if idx == 0 {
		return nil
	}
	k := fmt.Sprintf("%s FORCE INDEX (k_%d)", t, n)
	return walkChunks(ctx, c,
		"SELECT k FROM "+k+" WHERE k > ? ORDER BY k LIMIT 1 OFFSET ?",
		"SELECT COUNT(k) FROM "+k+" WHERE k > ? AND k <= ?",
		"SELECT COUNT(k) FROM "+k+" WHERE k > ?")
}

// walkChunks scans a column's index in chunks of about prewarmChunk
// entries: boundary finds the chunk's last key, scan reads (prev, last],
// and tail reads what is left after the last full chunk.
func walkChunks(ctx context.Context, c *sql.Conn, boundary, scan, tail string) error {
	prev := int64(-1 << 62)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var last int64
		err := c.QueryRowContext(ctx, boundary, prev, prewarmChunk-1).Scan(&last)
		if err == sql.ErrNoRows {
			return drainQuery(ctx, c, tail, prev)
		}
		if err != nil {
			return err
		}
		if err := drainQuery(ctx, c, scan, prev, last); err != nil {
			return err
		}
		prev = last
	}
}

func drainQuery(ctx context.Context, c *sql.Conn, q string, args ...any) error {
	rows, err := c.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	rows.Close()
	return rows.Err()
}
