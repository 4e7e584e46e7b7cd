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
	}
	// compare skips a figure no cell of either run has (a capacity without
	// a latency target); its metrics stay aligned by position only when
	// such figures come after every figure of the engine's result.
	optional := ""
	for _, c := range Columns {
		if c.Compare == "" {
			continue
		}
		if !c.Result {
			optional = c.Name
		} else if optional != "" {
			t.Errorf("column %q: a result figure compare tests after %q, which cells may lack", c.Name, optional)
		}
	}
}
