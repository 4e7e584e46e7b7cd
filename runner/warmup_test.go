package runner

import "testing"

func TestSteady(t *testing.T) {
	t.Parallel()
	flat := []float64{100, 101, 99, 100, 100, 101, 100, 99, 100, 100}
	climbing := []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	slowClimb := []float64{100, 101, 102, 103, 104, 110, 111, 112, 113, 114}
	noisy := []float64{100, 50, 150, 100, 60, 140, 100, 40, 160, 100}
	for _, c := range []struct {
		name string
		tps  []float64
		want bool
	}{
		{"flat", flat, true},
		{"too short", flat[:9], false},
		{"climbing", climbing, false},
		{"slow climb between windows", slowClimb, false},
		{"noisy", noisy, false},
		{"zeros", make([]float64, 10), false},
		{"steady after ramp", append([]float64{5, 20, 60}, flat...), true},
	} {
		if got := Steady(c.tps, SteadyWindow, SteadyTolerance); got != c.want {
			t.Errorf("%s: Steady = %v, want %v", c.name, got, c.want)
		}
	}
}
