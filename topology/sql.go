package topology

import (
	"context"
	"database/sql"
)

// showRow runs a statement returning at most one row (SHOW SLAVE STATUS)
// and maps its columns to their text; no row gives an empty map.
func showRow(ctx context.Context, db *sql.DB, q string) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	if !rows.Next() {
		return out, rows.Err()
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	for i, c := range cols {
		if vals[i].Valid {
			out[c] = vals[i].String
		}
	}
	return out, rows.Err()
}
