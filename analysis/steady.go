package analysis

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"benchmatrix/catalog"
	"benchmatrix/record"
	"benchmatrix/record/parts"
)

// The time to a steady state, and the data against memory.
//
// A per-second series has settled at the first second from which its
// rolling mean (over SettleRule.Window seconds) stays within a band of its
// final level (the last window's mean) to the end. The band is
// SettleRule.Tolerance times the larger of the final level and the highest
// rolling mean, so that a series that falls to nothing (buffer-pool misses
// once the pool holds the data) settles when it is within a tenth of where
// it started, not of zero; and at least SettleRule.Noise standard errors
// of a window's mean, from the seconds' spread over the series' second
// half, so that on a busy host a climb smaller than the noise is not taken
// for one (the band is recorded). A series settled only if it then stayed there
// for at least SettleRule.Hold seconds: a climb still going at the end of
// the series is not steady. A cell's time to a steady state is the latest
// of its series' (tps and the reads from the disk).
//
// warmup = "auto" ends the warm-up by the same rule, applied to what it has
// seen so far: once tps and the buffer-pool misses have both settled and
// held Hold seconds (runner/warmup.go). results/steady.go writes what these
// decide.

// SettleRule says when a per-second series has settled.
type SettleRule struct {
	Window    int     // seconds in the rolling mean
	Tolerance float64 // the band around the final level, as a fraction
	Hold      int     // seconds the series must stay in the band past the settling second
	// Noise: the band is at least this many standard errors of a window's
	// mean (the per-second standard deviation over the series' second
	// half, over the square root of Window); 0 for none.
	Noise float64
}

// DefaultSettleRule: 5 s rolling means within 10 % of the final level (or
// two standard errors of the noise, when wider), held 10 s. Chosen for this shared 2-core machine, where one second's tps
// varies by 10-30 % under other tenants: a 5 s mean within 10 % tells a
// climb from that noise.
var DefaultSettleRule = SettleRule{Window: 5, Tolerance: 0.10, Hold: 10, Noise: 2}

// String says the rule in words, for the record.
func (p SettleRule) String() string {
	return fmt.Sprintf("the first second from which the %d s rolling mean stays within %.0f%% of the final level (the last %d s; of the highest rolling mean when that is larger; at least %.0f standard errors of the seconds' noise) to the end, held at least %d s",
		p.Window, 100*p.Tolerance, p.Window, p.Noise, p.Hold)
}

// Settle finds when xs (one value per second, NaN for none) settled: the
// index of the settling second, and whether it settled at all. A pure
// function of the series.
func (p SettleRule) Settle(xs []float64) parts.Settled {
	var s parts.Settled
	w := max(p.Window, 1)
	n := len(xs)
	if n < w+p.Hold || n < w {
		return s
	}
	roll := make([]float64, n-w+1) // roll[i]: mean of xs[i:i+w]
	for i := range roll {
		sum, k := 0.0, 0
		for _, x := range xs[i : i+w] {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				sum += x
				k++
			}
		}
		roll[i] = math.NaN()
		if k > 0 {
			roll[i] = sum / float64(k)
		}
	}
	level := roll[len(roll)-1]
	if math.IsNaN(level) {
		return s
	}
	peak := math.Abs(level)
	first := math.NaN()
	for _, m := range roll {
		if math.IsNaN(m) {
			continue
		}
		if math.IsNaN(first) {
			first = m
		}
		peak = max(peak, math.Abs(m))
	}
	band := p.Tolerance * peak
	if p.Noise > 0 {
		band = max(band, p.Noise*stdDevOf(xs[n/2:])/math.Sqrt(float64(w)))
	}
	at := 0
	for i := len(roll) - 1; i >= 0; i-- {
		if !math.IsNaN(roll[i]) && math.Abs(roll[i]-level) > band {
			at = i + 1
			break
		}
	}
	s.Seconds, s.Level, s.First, s.Band = float64(at), level, first, band
	s.Settled = n-at >= w+p.Hold
	return s
}

// The series a cell's steady state is judged on: throughput, the buffer
// pool's misses, and the server's reads from its cgroup.
var steadySeries = []string{"tps", "bp_disk_reads_s", "cg_reads_s"}

// ObserveWarmth records a cell's time to a steady state (over all its
// intervals, warm-up included, from the engine's first second) and the
// data against memory in its binding record. The runner calls it once the
// cell's table sizes are known; columns names the sampled metrics.
func ObserveWarmth(c *record.Cell, columns []string, rule SettleRule) {
	idx := map[string]int{}
	for i, n := range columns {
		idx[n] = i
	}
	var tps, starts []float64
	var rows [][]float64
	var run []int // positions of the measured seconds
	for i, iv := range c.Intervals {
		s := iv.Seconds()
		if s <= 0 {
			continue
		}
		if iv.Phase == "run" {
			run = append(run, len(tps))
		}
		tps = append(tps, float64(iv.Events)/s)
		starts = append(starts, iv.Start.Seconds())
		var row []float64
		if i < len(c.Metrics) {
			row = c.Metrics[i]
		}
		rows = append(rows, row)
	}
	col := func(name string, only []int) []float64 {
		j, ok := idx[name]
		pick := func(r []float64) float64 {
			if ok && j < len(r) {
				return r[j]
			}
			return math.NaN()
		}
		if only == nil {
			out := make([]float64, len(rows))
			for i, r := range rows {
				out[i] = pick(r)
			}
			return out
		}
		out := make([]float64, len(only))
		for i, k := range only {
			out[i] = pick(rows[k])
		}
		return out
	}
	if len(tps) > 0 {
		st := &parts.SteadyState{Settled: true, Rule: rule.String()}
		for _, name := range steadySeries {
			xs := tps
			if name != "tps" {
				xs = col(name, nil)
				if !hasNonZero(xs) {
					continue // nothing read (MyISAM's buffer-pool misses): nothing to settle
				}
			}
			s := rule.Settle(xs)
			s.Series = name
			if k := int(s.Seconds); k < len(starts) {
				s.Seconds = starts[k]
			}
			st.Series = append(st.Series, s)
			st.Settled = st.Settled && s.Settled
			st.Seconds = max(st.Seconds, s.Seconds)
		}
		if c.WarmupSteady && c.WarmupSeconds > 0 {
			st.AutoWarmup, st.AutoSeconds = true, c.WarmupSeconds
		}
		c.Steady = st
	}
	if c.Growth == nil || len(run) == 0 {
		return
	}
	data := max(c.Growth.BytesBefore, c.Growth.BytesAfter)
	var memLimit int64
	if c.Limits != nil {
		memLimit = c.Limits.Requested.Memory
	}
	storage := ""
	if e := c.Workload.Data().StorageEngines; len(e) > 0 {
		storage = e[0]
	}
	d := parts.AssessData(strings.ToLower(storage), data, poolBytes(c.Effective["innodb_buffer_pool_size"]), memLimit,
		col("cg_reads_s", run), col("cg_read_kb_s", run), col("bp_disk_reads_s", run))
	if c.Binding == nil {
		c.Binding = &parts.Binding{}
	}
	c.Binding.Data = &d
}

func hasNonZero(xs []float64) bool {
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) && x != 0 {
			return true
		}
	}
	return false
}

// poolBytes reads innodb_buffer_pool_size as the server reports it (bytes)
// or as a manifest writes it ("512M"); 0 when unknown.
func poolBytes(v string) int64 {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n
	}
	if n, err := catalog.ParseBytes(v); err == nil {
		return n
	}
	return 0
}

// stdDevOf is the sample standard deviation of the values that are numbers.
func stdDevOf(xs []float64) float64 {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	return sdOf(v)
}
