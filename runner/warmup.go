package runner

import (
	"math"

	"benchmatrix/results"
)

// SteadyWindow is how many consecutive one-second intervals automatic
// warm-up looks at, and SteadyTolerance how much they may vary.
const (
	SteadyWindow    = 5
	SteadyTolerance = 0.05
)

// Steady reports whether a per-second tps series has become steady: the
// last window intervals vary by less than tol (coefficient of variation),
// and their mean is within tol of the window before it, so a slow climb
// (a buffer pool still filling) does not pass for steady. A pure function
// of the series, for automatic warm-up.
func Steady(tps []float64, window int, tol float64) bool {
	if window < 2 || len(tps) < 2*window {
		return false
	}
	last := tps[len(tps)-window:]
	prev := tps[len(tps)-2*window : len(tps)-window]
	m, sd := results.Mean(last), results.StdDev(last)
	pm := results.Mean(prev)
	if m <= 0 {
		return false
	}
	return sd/m < tol && math.Abs(m-pm)/m < tol
}
