package history

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"benchmatrix/analysis"
	"benchmatrix/record"
)

// Metric is one figure a series is checked on.
type Metric struct {
	Name         string
	Unit         string
	HigherBetter bool
	// Value is the run's value and its interval (lo, hi; 0, 0 when there
	// is none); ok is false when the run has no value.
	Value func(Point) (v, lo, hi float64, ok bool)
	// Repeats are the run's repeats' values (per round for the ratio).
	Repeats func(Point) []float64
}

// Metrics are the figures every series is checked on: the cell's tps (the
// median of its repeats, the range of the repeats as its interval), its
// p99 latency, and its ratio to the baseline scenario's cell in the same
// run (the Conclusion's paired estimate and its 95 % interval).
var Metrics = []Metric{
	{Name: "tps", Unit: "tx/s", HigherBetter: true, Value: func(p Point) (float64, float64, float64, bool) {
		return p.TPS, p.TPSLo, p.TPSHi, p.TPS > 0
	}, Repeats: func(p Point) []float64 { return p.RepTPS }},
	{Name: "p99", Unit: "ms", HigherBetter: false, Value: func(p Point) (float64, float64, float64, bool) {
		return p.P99, p.P99Lo, p.P99Hi, p.P99 > 0
	}, Repeats: func(p Point) []float64 { return p.RepP99 }},
	{Name: "ratio", Unit: "x", HigherBetter: true, Value: func(p Point) (float64, float64, float64, bool) {
		return p.Ratio, p.RatioLo, p.RatioHi, p.Ratio > 0 && p.Baseline != ""
	}, Repeats: func(p Point) []float64 { return p.RepRatio }},
}

// Options are history check's settings.
type Options struct {
	Params
	// MinChange is the smallest relative change reported (0.05 = 5 %);
	// a significant change smaller than this is left out.
	MinChange float64
	// Metrics names the metrics checked (tps, p99, ratio); empty: all.
	Metrics []string
}

// DefaultOptions are `history check`'s defaults.
func DefaultOptions() Options { return Options{Params: DefaultParams()} }

// ChangePoint is a run where a series' level changed.
type ChangePoint struct {
	Metric string
	// Index is the first point of the new level (into the series' points).
	Index int
	// Method: "e-divisive" (a change with MinSize runs or more after it)
	// or "newest" (the newest runs against the level before them).
	Method string
	P      float64
	// Before and After are the geometric means of the levels either side
	// (up to the neighbouring change points); Change is After/Before - 1.
	Before, After, Change float64
	Regression            bool
	BeforeRun, AfterRun   Point
	// Differs is what else changed between those two runs: the server
	// version, variables read back, the tool version.
	Differs []string
}

// MetricCheck is one metric of one series checked.
type MetricCheck struct {
	Metric  Metric
	Points  []int // indexes into the series' points that have a value
	Values  []float64
	Changes []ChangePoint
	// NewRegression is the regression that begins among the newest runs
	// (fewer than MinSize runs follow its start), if any: the CI gate.
	NewRegression *ChangePoint
}

// SeriesCheck is one series checked on every metric it has.
type SeriesCheck struct {
	Series  Series
	Points  []Point
	Metrics []MetricCheck
}

// Regressed says whether a regression begins among the newest runs of any
// metric.
func (c SeriesCheck) Regressed() bool {
	for _, m := range c.Metrics {
		if m.NewRegression != nil {
			return true
		}
	}
	return false
}

// Check loads and checks the selected series.
func (s *Store) Check(ctx context.Context, filter []string, opt Options) ([]SeriesCheck, error) {
	list, err := s.ListSeries(ctx, filter)
	if err != nil {
		return nil, err
	}
	out := make([]SeriesCheck, 0, len(list))
	for _, x := range list {
		pts, err := s.Points(ctx, x.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, CheckSeries(x, pts, opt))
	}
	return out, nil
}

// CheckSeries finds the change points of one series on each metric (pure).
func CheckSeries(x Series, pts []Point, opt Options) SeriesCheck {
	sc := SeriesCheck{Series: x, Points: pts}
	for _, m := range Metrics {
		if len(opt.Metrics) > 0 && !slices.Contains(opt.Metrics, m.Name) {
			continue
		}
		var mc MetricCheck
		mc.Metric = m
		var reps [][]float64
		for i, p := range pts {
			if v, _, _, ok := m.Value(p); ok {
				mc.Points = append(mc.Points, i)
				mc.Values = append(mc.Values, v)
				reps = append(reps, m.Repeats(p))
			}
		}
		if len(mc.Values) == 0 {
			continue
		}
		p := opt.Params
		p.Seed = seedOf(x.ID, m.Name)
		for _, c := range Changes(mc.Values, reps, m.HigherBetter, Options{Params: p, MinChange: opt.MinChange}) {
			c.Metric = m.Name
			c.Index = mc.Points[c.Index]
			c.AfterRun = pts[c.Index]
			c.BeforeRun = pts[mc.Points[slices.Index(mc.Points, c.Index)-1]]
			c.Differs = envDiff(c.BeforeRun, c.AfterRun)
			mc.Changes = append(mc.Changes, c)
		}
		if n := len(mc.Changes); n > 0 {
			last := mc.Changes[n-1]
			// Its position among the metric's values.
			at := slices.Index(mc.Points, last.Index)
			if last.Regression && at > len(mc.Values)-opt.MinSize {
				mc.NewRegression = &mc.Changes[n-1]
			}
		}
		sc.Metrics = append(sc.Metrics, mc)
	}
	return sc
}

func seedOf(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// Changes finds the change points of one metric's values (in run order):
// E-divisive means over the logarithms (a 10 % change is the same distance
// at any level), then the newest runs, too few for E-divisive to place a
// change before them, against the level since the last change. reps holds
// each run's repeats (nil, or fewer than 2, where there are none). Index is
// into values. Pure.
func Changes(values []float64, reps [][]float64, higherBetter bool, opt Options) []ChangePoint {
	z := make([]float64, len(values))
	for i, v := range values {
		z[i] = math.Log(v)
	}
	var idx []int
	ps := map[int]float64{}
	for _, s := range EDivisive(z, opt.Params) {
		idx = append(idx, s.Index)
		ps[s.Index] = s.P
	}
	newest := -1
	if k, p, ok := newestChange(z, reps, idx, opt.Params); ok {
		newest = k
		idx = append(idx, k)
		ps[k] = p
	}
	// Levels between consecutive change points.
	bounds := append([]int{0}, idx...)
	bounds = append(bounds, len(z))
	var out []ChangePoint
	for i := 1; i+1 < len(bounds); i++ {
		before := math.Exp(mean(z[bounds[i-1]:bounds[i]]))
		after := math.Exp(mean(z[bounds[i]:bounds[i+1]]))
		c := ChangePoint{Index: bounds[i], Method: "e-divisive", P: ps[bounds[i]], Before: before, After: after, Change: after/before - 1}
		if bounds[i] == newest {
			c.Method = "newest"
		}
		if math.Abs(c.Change) < opt.MinChange {
			continue
		}
		c.Regression = (c.Change < 0) == higherBetter
		out = append(out, c)
	}
	return out
}

// newestChange tests whether the newest k runs (k < MinSize: too few for
// E-divisive to put a change before them) depart from the level since the
// last change point, two-sided, with Bonferroni over the k tried. When
// every run involved has 2 or more repeats, the test is a Mann-Whitney U
// test of the newest runs' repeats against the level's (ranks: a stalled
// repeat counts as one low value, not as a huge one); otherwise a t test
// of the newest runs' mean log value against the level's, pooled on the
// level's spread, df = its runs - 1. It returns the first index of the
// newest level and its p-value.
func newestChange(z []float64, reps [][]float64, changes []int, p Params) (int, float64, bool) {
	n := len(z)
	start := 0
	if len(changes) > 0 {
		start = changes[len(changes)-1]
	}
	tries := p.MinSize - 1
	bestK, bestP := -1, 1.0
	for k := 1; k <= tries; k++ {
		if n-k-start < 3 {
			break
		}
		a, b := z[start:n-k], z[n-k:]
		pv, ok := repeatsTest(reps, start, n-k, n)
		if !ok {
			ma, mb := mean(a), mean(b)
			sd := stddev(a, ma)
			switch {
			case sd == 0 && ma == mb:
				continue
			case sd == 0:
				pv = 0
			default:
				t := (mb - ma) / (sd * math.Sqrt(1/float64(len(a))+1/float64(k)))
				st := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(a) - 1)}
				pv = 2 * st.CDF(-math.Abs(t))
			}
		}
		pv = math.Min(1, pv*float64(tries))
		if pv < bestP {
			bestK, bestP = k, pv
		}
	}
	if bestK < 0 || bestP > p.Significance {
		return 0, 0, false
	}
	return n - bestK, bestP, true
}

// repeatsTest is the Mann-Whitney U test of the repeats of runs [mid, end)
// against those of runs [start, mid); ok is false unless every run has 2
// or more repeats.
func repeatsTest(reps [][]float64, start, mid, end int) (float64, bool) {
	if len(reps) < end {
		return 0, false
	}
	var a, b []float64
	for i := start; i < end; i++ {
		if len(reps[i]) < 2 {
			return 0, false
		}
		if i < mid {
			a = append(a, reps[i]...)
		} else {
			b = append(b, reps[i]...)
		}
	}
	u, err := analysis.MannWhitneyU(a, b)
	if err != nil {
		return 0, false
	}
	return u.P, true
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func stddev(xs []float64, m float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(xs)-1))
}

// envDiff is what else changed between two runs: server version, variables
// read back, tool version.
func envDiff(a, b Point) []string {
	var out []string
	if a.ServerVersion != b.ServerVersion {
		out = append(out, fmt.Sprintf("server %s -> %s", a.ServerVersion, b.ServerVersion))
	}
	if a.ToolVersion != b.ToolVersion {
		out = append(out, fmt.Sprintf("benchmatrix %s -> %s", a.ToolVersion, b.ToolVersion))
	}
	if len(a.Effective) > 0 && len(b.Effective) > 0 {
		for _, k := range record.UnionKeys(a.Effective, b.Effective) {
			if x, y := setting(a, k), setting(b, k); x != y {
				out = append(out, fmt.Sprintf("@@%s %s -> %s", k, x, y))
			}
		}
	}
	return out
}

// setting is a variable's value in a run's cell: read back for the cell
// when the cell set it, else the server's global at the run's start.
func setting(p Point, k string) string {
	if v, ok := p.Effective[k]; ok {
		return v
	}
	if v, ok := p.Variables[k]; ok {
		return v
	}
	return "(unset)"
}
