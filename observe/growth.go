package observe

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// ExactCountLimit is the largest estimated row count for which TableStats
// runs an exact COUNT(*) on an InnoDB table. InnoDB counts by scanning an
// index: about 10-50 ms per 100,000 rows here, but seconds for 10 M, which
// would delay the cell and disturb the buffer pool it measures. MyISAM and
// Aria keep an exact count, so their TABLE_ROWS is used as exact.
const ExactCountLimit = 100_000

// TableInfo is one table's size.
type TableInfo struct {
	Name   string
	Engine string
	// RowsEstimate is information_schema.TABLES.TABLE_ROWS: InnoDB's
	// sampled statistic, refreshed in the background after about 10 % of
	// the rows change, so it can be off by tens of percent.
	RowsEstimate int64
	// ExactRows is COUNT(*) (or the engine's exact count); -1 when not
	// counted because the table is larger than ExactCountLimit.
	ExactRows int64
	// DataBytes and IndexBytes are DATA_LENGTH and INDEX_LENGTH (allocated
	// pages, statistics-based for InnoDB).
	DataBytes, IndexBytes int64
	// MaxID is SELECT MAX(id), read from the primary key's end: exact and
	// cheap. -1 when the table has no id column; 0 when it is empty.
	MaxID int64
}

// Rows is the exact count when there is one, else the estimate.
func (t TableInfo) Rows() int64 {
	if t.ExactRows >= 0 {
		return t.ExactRows
	}
	return t.RowsEstimate
}

// TableStat sums a set of tables.
type TableStat struct {
	Schema string
	Tables []TableInfo
	// Rows sums TableInfo.Rows(); RowsExact says every table was counted
	// exactly.
	Rows      int64
	RowsExact bool
	// Bytes is data + index of every table.
	DataBytes, IndexBytes int64
	// MaxID is the largest MaxID of the tables (-1 if none has an id).
	MaxID int64
}

// TableGrowth is after − before for one cell.
type TableGrowth struct {
	Rows      int64 // rows_delta
	RowsExact bool  // both sides exact
	Bytes     int64 // data + index
	MaxID     int64 // how far the ids advanced (AUTO_INCREMENT growth shows here first)
}

// Growth returns the change from before to after.
func Growth(before, after TableStat) TableGrowth {
	g := TableGrowth{
		Rows:      after.Rows - before.Rows,
		RowsExact: before.RowsExact && after.RowsExact,
		Bytes:     after.DataBytes + after.IndexBytes - before.DataBytes - before.IndexBytes,
	}
	if after.MaxID >= 0 && before.MaxID >= 0 {
		g.MaxID = after.MaxID - before.MaxID
	}
	return g
}

// TableStats reads the size of each table in schema. Tables that do not
// exist are an error. It uses one connection and, on MySQL 8, asks for fresh
// information_schema statistics (information_schema_stats_expiry=0) rather
// than a day-old cache.
func TableStats(ctx context.Context, db *sql.DB, schema string, tables []string) (TableStat, error) {
	st := TableStat{Schema: schema, RowsExact: true, MaxID: -1}
	conn, err := db.Conn(ctx)
	if err != nil {
		return st, fmt.Errorf("table stats: %w", err)
	}
	defer conn.Close()
	// MySQL 8 only; MariaDB has no such variable and says so: ignore.
	_, _ = conn.ExecContext(ctx, "SET SESSION information_schema_stats_expiry = 0")
	for _, name := range tables {
		ti, err := tableInfo(ctx, conn, schema, name)
		if err != nil {
			return st, fmt.Errorf("table stats %s.%s: %w", schema, name, err)
		}
		st.Tables = append(st.Tables, ti)
		st.Rows += ti.Rows()
		st.RowsExact = st.RowsExact && ti.ExactRows >= 0
		st.DataBytes += ti.DataBytes
		st.IndexBytes += ti.IndexBytes
		st.MaxID = max(st.MaxID, ti.MaxID)
	}
	return st, nil
}

func tableInfo(ctx context.Context, conn *sql.Conn, schema, name string) (TableInfo, error) {
	ti := TableInfo{Name: name, ExactRows: -1, MaxID: -1}
	var engine sql.NullString
	var rows, data, index sql.NullInt64
	err := conn.QueryRowContext(ctx, "SELECT ENGINE, TABLE_ROWS, DATA_LENGTH, INDEX_LENGTH FROM information_schema.TABLES "+
		"WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", schema, name).Scan(&engine, &rows, &data, &index)
	if errors.Is(err, sql.ErrNoRows) {
		return ti, errors.New("no such table")
	}
	if err != nil {
		return ti, err
	}
	ti.Engine, ti.RowsEstimate, ti.DataBytes, ti.IndexBytes = engine.String, rows.Int64, data.Int64, index.Int64
	qname := quoteIdent(schema) + "." + quoteIdent(name)
	switch eng := strings.ToLower(ti.Engine); {
	case eng == "myisam" || eng == "aria":
		ti.ExactRows = ti.RowsEstimate // kept exact by the engine
	case ti.RowsEstimate <= ExactCountLimit:
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+qname).Scan(&ti.ExactRows); err != nil {
			return ti, fmt.Errorf("count: %w", err)
		}
	}
	var maxID sql.NullInt64
	err = conn.QueryRowContext(ctx, "SELECT MAX(id) FROM "+qname).Scan(&maxID)
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &me) && me.Number == 1054: // unknown column 'id'
	case err != nil:
		return ti, fmt.Errorf("max(id): %w", err)
	default:
		ti.MaxID = maxID.Int64 // 0 for an empty table
	}
	return ti, nil
}

// quoteIdent quotes a MySQL identifier.
func quoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}
