package record

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
)

// The shapes a Cell does not have today but a feature's record may bring:
// a float in an interface, a map of structs, an embedded struct, a field
// JSON leaves out (which Finite must leave alone).
func TestFiniteShapes(t *testing.T) {
	type inner struct {
		X float64 `json:"x"`
	}
	type Embedded struct {
		E float64 `json:"e"`
	}
	type shape struct {
		Embedded
		Any    any              `json:"any"`
		ByName map[string]inner `json:"by_name"`
		Floats map[string]float64
		Skip   float64 `json:"-"`
		keep   float64
	}
	nan := math.NaN()
	s := &shape{Embedded: Embedded{E: math.Inf(1)}, Any: nan,
		ByName: map[string]inner{"a": {X: nan}, "b": {X: 1}},
		Floats: map[string]float64{"gone": math.Inf(-1), "kept": 2}, Skip: nan, keep: nan}
	got := Finite(s)
	want := []string{"e: +Inf written as 0", "any: NaN written as 0", "by_name[a].x: NaN written as 0", "Floats[gone]: -Inf left out"}
	if !slices.Equal(got, want) {
		t.Errorf("Finite said\n%q\nwant\n%q", got, want)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Fatalf("still not writable: %v", err)
	}
	if s.ByName["b"].X != 1 || s.Floats["kept"] != 2 || len(s.Floats) != 1 {
		t.Errorf("finite values changed: %+v", s)
	}
	if !math.IsNaN(s.Skip) || !math.IsNaN(s.keep) {
		t.Errorf("fields JSON does not write were changed")
	}
	if again := Finite(s); len(again) != 0 {
		t.Errorf("a second pass found %q", again)
	}
}
