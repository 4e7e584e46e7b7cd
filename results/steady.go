package results

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"benchmatrix/catalog"
	"benchmatrix/record"
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
// held Hold seconds (runner/warmup.go).

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
func (p SettleRule) Settle(xs []float64) record.Settled {
	var s record.Settled
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
func ObserveWarmth(c *Cell, columns []string, rule SettleRule) {
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
		st := &record.SteadyState{Settled: true, Rule: rule.String()}
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
	d := record.AssessData(strings.ToLower(storage), data, poolBytes(c.Effective["innodb_buffer_pool_size"]), memLimit,
		col("cg_reads_s", run), col("cg_read_kb_s", run), col("bp_disk_reads_s", run))
	if c.Binding == nil {
		c.Binding = &record.Binding{}
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

// steadyText is a cell's time to a steady state in words.
func steadyText(st *record.SteadyState) string {
	if st == nil {
		return ""
	}
	var what []string
	for _, s := range st.Series {
		t := fmt.Sprintf("%s %s", s.Series, settledText(s))
		what = append(what, t)
	}
	head := fmt.Sprintf("reached steady state after %.0f s", st.Seconds)
	if st.Seconds == 0 {
		head = "was steady from its first second"
	}
	if !st.Settled {
		head = "did not reach a steady state within its run"
	}
	if st.AutoWarmup {
		head += fmt.Sprintf(" (warmup = \"auto\" ended the warm-up after %.0f s by the same rule)", st.AutoSeconds)
	}
	return head + ": " + strings.Join(what, ", ")
}

func settledText(s record.Settled) string {
	level := func(v float64) string {
		if math.Abs(v) >= 10 {
			return fmt.Sprintf("%.0f", v)
		}
		return fmt.Sprintf("%.1f", v)
	}
	if !s.Settled {
		return fmt.Sprintf("still moving (%s/s at first, %s/s at the end)", level(s.First), level(s.Level))
	}
	if s.Seconds == 0 {
		return fmt.Sprintf("steady from the first second (%s/s ± %s)", level(s.Level), level(s.Band))
	}
	return fmt.Sprintf("settled at %.0f s (%s/s at first, %s/s ± %s from then)", s.Seconds, level(s.First), level(s.Level), level(s.Band))
}

// writeWarmthNote is the cell's line in "What happened in each cell": the
// cold start, the time to a steady state and the data against memory.
func writeWarmthNote(w io.Writer, c Cell) {
	if cs := c.ColdStart; cs != nil {
		fmt.Fprintf(w, "- cold start: %s\n", coldStartText(cs))
	}
	if t := steadyText(c.Steady); t != "" {
		fmt.Fprintf(w, "- %s\n", t)
	}
	if c.Binding != nil && c.Binding.Data != nil {
		fmt.Fprintf(w, "- data against memory: %s\n", c.Binding.Data.Text)
	}
}

func coldStartText(cs *record.ColdStart) string {
	var parts []string
	if cs.Restarted {
		parts = append(parts, "restarted once the data was in place")
	}
	if cs.Why != "" {
		parts = append(parts, cs.Why)
	}
	if cs.PageCache {
		parts = append(parts, fmt.Sprintf("%d datadir files dropped from the page cache (%.1f MiB cached before, %.1f MiB after)",
			cs.Files, float64(cs.CachedBefore)/(1<<20), float64(cs.CachedAfter)/(1<<20)))
	} else if cs.PageCacheWhy != "" {
		parts = append(parts, "page cache not dropped: "+cs.PageCacheWhy)
	}
	if cs.PoolDataBytes >= 0 {
		parts = append(parts, fmt.Sprintf("the buffer pool then held %.1f MiB of data", float64(cs.PoolDataBytes)/(1<<20)))
	}
	return strings.Join(parts, "; ")
}

// dataWarnings are the Conclusion's warnings for cells under a memory
// limit (a preset that stands for a small machine, there to create memory
// pressure) whose data fit what holds it in every repeat: the memory
// pressure of that machine was not created.
func dataWarnings(r *Run) []string {
	var order []string
	fits := map[string]bool{}
	first := map[string]*record.DataMemory{}
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Status != CellOK || c.Binding == nil || c.Binding.Data == nil || c.Limits == nil || c.Limits.Requested.Memory <= 0 {
			continue
		}
		d := c.Binding.Data
		if d.DataBytes <= 0 || d.Ratio <= 0 {
			continue
		}
		if _, ok := first[c.Name]; !ok {
			order = append(order, c.Name)
			first[c.Name], fits[c.Name] = d, true
		}
		fits[c.Name] = fits[c.Name] && d.Fits
	}
	var out []string
	for _, name := range order {
		if fits[name] {
			out = append(out, fmt.Sprintf("%s: %s: the memory pressure of a %s machine was not created",
				name, first[name].Text, catalog.FormatBytes(memoryOf(r, name))))
		}
	}
	return out
}

func memoryOf(r *Run, name string) int64 {
	for _, c := range r.Cells {
		if c.Name == name && c.Limits != nil {
			return c.Limits.Requested.Memory
		}
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
	if len(v) < 2 {
		return 0
	}
	return StdDev(v)
}

// readsPanel draws the server's reads from the disk per second (its
// cgroup's, else the buffer pool's misses) in runs that start cells cold
// or warm up until steady: the climb from cold is the pool filling.
func readsPanel(r *Run, runs []cellRun) ([]seriesPanel, string) {
	cold := false
	for _, c := range r.Cells {
		cold = cold || c.ColdStart != nil || (c.Steady != nil && c.Steady.AutoWarmup)
	}
	if !cold {
		return nil, ""
	}
	col := ""
	for _, name := range []string{"cg_reads_s", "bp_disk_reads_s"} {
		for _, cr := range runs {
			for _, p := range cr.points {
				if _, ok := p.Metrics[name]; ok && col == "" {
					col = name
				}
			}
		}
	}
	if col == "" {
		return nil, ""
	}
	label, caption := "server reads/s (cgroup)", " Last: the server's reads from the disk per second (its cgroup's): a cold start's climb is the buffer pool or the page cache filling."
	if col == "bp_disk_reads_s" {
		label, caption = "buffer pool misses/s", " Last: buffer-pool misses per second (pages read from the disk): a cold start's climb is the pool filling."
	}
	return []seriesPanel{{label: label, min0: true, value: func(p IntervalPoint) float64 {
		if v, ok := p.Metrics[col]; ok {
			return v
		}
		return math.NaN()
	}}}, caption
}
