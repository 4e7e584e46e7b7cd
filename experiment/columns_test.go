package experiment

import (
	"slices"
	"testing"

	"benchmatrix/record"
)

// An expectation may compare exactly the columns marked Expect: the
// manifest's validation (ExpectColumns, which record cannot import) and
// the table agree.
func TestExpectColumnsAreTheTables(t *testing.T) {
	got := record.ColumnNames(func(c record.Column) bool { return c.Expect })
	if !slices.Equal(got, ExpectColumns) {
		t.Errorf("columns marked Expect %v, experiment.ExpectColumns %v", got, ExpectColumns)
	}
}
