package observe

import (
	"strings"
	"testing"
)

func TestTablesSource(t *testing.T) {
	if _, ok := tablesSource(Tables{Schema: "sbtest"}); ok {
		t.Error("a source for no tables")
	}
	src, ok := tablesSource(Tables{Schema: "sb`x", Names: []string{"sbtest1", "o'k"}})
	if !ok {
		t.Fatal("no source")
	}
	for _, want := range []string{"SELECT MAX(id) AS m FROM `sb``x`.`sbtest1`", "`sb``x`.`o'k`", "TABLE_SCHEMA = 'sb`x'", "IN ('sbtest1', 'o''k')", "'table.max_id'", "'table.rows_est'"} {
		if !strings.Contains(src.query, want) {
			t.Errorf("query %q lacks %q", src.query, want)
		}
	}
}
