package record

import "testing"

func TestColumnsAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Columns {
		if c.Name == "" || seen[c.Name] {
			t.Errorf("column %q: empty or twice", c.Name)
		}
		seen[c.Name] = true
		if (c.Value == nil) == (c.Text == nil) {
			t.Errorf("column %q: wants exactly one of Value and Text", c.Name)
		}
		if c.Mechanism && (c.Heading == "" || c.Figure == "") {
			t.Errorf("mechanism column %q: no summary heading or figure", c.Name)
		}
		if c.Compare != "" && !c.Result {
			t.Errorf("column %q: compare tests figures of the engine's result only", c.Name)
		}
	}
}
