package runner

import (
	"testing"

	"benchmatrix/analysis"
)

func TestSteady(t *testing.T) {
	t.Parallel()
	rule := analysis.DefaultSettleRule
	flat := make([]float64, 20)
	for i := range flat {
		flat[i] = 100 + float64(i%3) - 1
	}
	climbing := make([]float64, 20)
	for i := range climbing {
		climbing[i] = float64(10 * (i + 1))
	}
	ramp := append([]float64{5, 20, 60}, flat...)
	readsFalling := []float64{900, 800, 700, 600, 500, 400, 300, 200, 100, 50, 20, 10, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5}
	readsStillFalling := []float64{900, 880, 860, 840, 820, 800, 780, 760, 740, 720, 700, 680, 660, 640, 620, 600, 580, 560, 540, 520}
	for _, c := range []struct {
		name   string
		series [][]float64
		want   bool
	}{
		{"flat", [][]float64{flat}, true},
		{"too short for window and hold", [][]float64{flat[:14]}, false},
		{"climbing", [][]float64{climbing}, false},
		{"steady after a ramp", [][]float64{ramp}, true},
		{"zeros", [][]float64{make([]float64, 20)}, true},
		{"nothing", nil, false},
		{"tps steady, reads still falling", [][]float64{flat, readsStillFalling}, false},
		{"tps steady, reads fell to a level", [][]float64{ramp, readsFalling}, true},
		{"an empty reads series is left out", [][]float64{ramp, nil}, true},
	} {
		if got := Steady(rule, c.series...); got != c.want {
			t.Errorf("%s: Steady = %v, want %v", c.name, got, c.want)
		}
	}
}
