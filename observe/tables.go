package observe

import "strings"

// The workload tables as a per-second series: their largest id and their
// row estimate, one cheap query per tick (MAX(id) reads the primary key's
// last entry; TABLE_ROWS is a statistic, no scan). They show a table that
// grows without bound while it grows, where the before/after table sizes
// (growth.go) only show that it did.

// Tables names the tables the sampler reads each second; empty: none.
type Tables struct {
	Schema string
	// Names are tables with an integer id primary key (a table without
	// one would fail the query at every tick).
	Names []string
}

// tablesSource is the query for t, or false when t names no table.
func tablesSource(t Tables) (source, bool) {
	if t.Schema == "" || len(t.Names) == 0 {
		return source{}, false
	}
	var maxes, names []string
	for _, n := range t.Names {
		maxes = append(maxes, "SELECT MAX(id) AS m FROM "+quoteIdent(t.Schema)+"."+quoteIdent(n))
		names = append(names, quoteString(n))
	}
	q := "SELECT 'table.max_id', MAX(m) FROM (" + strings.Join(maxes, " UNION ALL ") + ") AS ids" +
		" UNION ALL SELECT 'table.rows_est', SUM(TABLE_ROWS) FROM information_schema.TABLES" +
		" WHERE TABLE_SCHEMA = " + quoteString(t.Schema) + " AND TABLE_NAME IN (" + strings.Join(names, ", ") + ")"
	return source{name: "tables", query: q}, true
}

// quoteString quotes a MySQL string literal.
func quoteString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}
