package results

import (
	"math"
	"strings"
	"testing"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/engine"
	"benchmatrix/oltp"
	"benchmatrix/record"
)

func TestSettleRule(t *testing.T) {
	t.Parallel()
	rule := DefaultSettleRule
	climb := func(n, to int, level float64) []float64 { // linear climb to level at second `to`, then flat
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = level
			if i < to {
				xs[i] = level * float64(i+1) / float64(to)
			}
		}
		return xs
	}
	noisy := climb(60, 20, 400)
	for i := range noisy {
		if i >= 20 {
			noisy[i] += []float64{-30, 25, -10, 35, -20}[i%5]
		}
	}
	// A busy host: seconds swing ±60 around 100, and the first 10 s climb
	// from 80: a climb smaller than the noise is not a climb.
	busy := climb(40, 10, 100)
	for i := range busy {
		busy[i] = max(busy[i], 80) + []float64{60, -60, 30, -30}[i%4]
	}
	nan := climb(40, 10, 100)
	nan[25], nan[26] = math.NaN(), math.NaN()
	for _, c := range []struct {
		name    string
		xs      []float64
		settled bool
		lo, hi  float64 // the settling second within [lo, hi]
	}{
		{"flat from the start", climb(30, 0, 100), true, 0, 0},
		{"climb over 20 s, then flat", climb(60, 20, 400), true, 14, 20},
		{"climb with noise", noisy, true, 12, 22},
		{"still climbing at the end", climb(30, 40, 400), false, 0, 30},
		{"settled too late to hold", climb(30, 22, 400), false, 0, 30},
		{"too short", climb(10, 0, 100), false, 0, 0},
		{"gaps are skipped", nan, true, 4, 10},
		{"a climb within a busy host's noise", busy, true, 0, 3},
		{"reads falling to zero", []float64{3000, 2800, 2500, 2000, 1500, 1000, 600, 300, 100, 50, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, true, 4, 9},
	} {
		s := rule.Settle(c.xs)
		if s.Settled != c.settled {
			t.Errorf("%s: settled %v, want %v (%+v)", c.name, s.Settled, c.settled, s)
			continue
		}
		if s.Settled && (s.Seconds < c.lo || s.Seconds > c.hi) {
			t.Errorf("%s: settled at %.0f s, want %.0f-%.0f (%+v)", c.name, s.Seconds, c.lo, c.hi, s)
		}
	}
}

// ObserveWarmth: the time to a steady state from the engine's first
// second (warm-up included), the latest of the series; the data against
// the pool in the binding record; a warning under a memory limit when the
// data fits.
func TestObserveWarmth(t *testing.T) {
	t.Parallel()
	cols := []string{"bp_disk_reads_s", "cg_reads_s", "cg_read_kb_s"}
	c := Cell{Name: "cold", Status: CellOK, Workload: engine.Spec{Engine: "oltp", Options: oltp.Options{StorageEngine: "innodb", Tables: 4, TableSize: 25000}},
		Effective: map[string]string{"innodb_buffer_pool_size": "536870912"},
		Limits:    &record.LimitsInForce{Requested: catalog.LimitSet{Memory: 2 << 30, CPUs: 1}},
		Growth:    &record.Growth{BytesBefore: 95 << 20, BytesAfter: 95 << 20}}
	for i := 0; i < 60; i++ {
		tps := 400.0
		reads := 0.0
		if i < 30 {
			tps = 400 * float64(i+1) / 30
			reads = 2000 * float64(30-i) / 30
		}
		if i < 10 { // the buffer-pool misses settle later than tps would alone
			reads = 2000
		}
		phase := engine.PhaseRun
		c.Intervals = append(c.Intervals, engine.Interval{Phase: phase, Start: secs(i), End: secs(i + 1), Events: int64(tps)})
		c.Metrics = append(c.Metrics, []float64{reads, reads, reads * 16})
	}
	ObserveWarmth(&c, cols, DefaultSettleRule)
	if c.Steady == nil || !c.Steady.Settled {
		t.Fatalf("steady: %+v", c.Steady)
	}
	if c.Steady.Seconds < 20 || c.Steady.Seconds > 30 {
		t.Errorf("steady after %.0f s, want 20-30: %+v", c.Steady.Seconds, c.Steady.Series)
	}
	if len(c.Steady.Series) != 3 {
		t.Errorf("series: %+v", c.Steady.Series)
	}
	col, _ := record.ColumnNamed("steady_s")
	if v, ok := col.Value(&c); !ok || v != c.Steady.Seconds {
		t.Errorf("steady_s = %v, want %v", v, c.Steady.Seconds)
	}
	d := c.Binding.Data
	if d == nil || !d.Fits || d.PoolBytes != 512<<20 || math.Abs(d.Ratio-95.0/512) > 1e-9 {
		t.Fatalf("data: %+v", d)
	}
	r := &Run{Cells: []Cell{c}}
	w := dataWarnings(r)
	if len(w) != 1 || !strings.Contains(w[0], "the data (95 MiB) fits the 512M buffer pool") || !strings.Contains(w[0], "2G machine was not created") {
		t.Errorf("warnings: %q", w)
	}
	// The same data on a 64M pool: 1.5x the pool, no warning.
	c2 := c
	c2.Binding = nil
	c2.Effective = map[string]string{"innodb_buffer_pool_size": "64M"}
	ObserveWarmth(&c2, cols, DefaultSettleRule)
	if d := c2.Binding.Data; d.Fits || !strings.Contains(d.Text, "is 1.5x the 64M buffer pool") {
		t.Errorf("data: %+v", d)
	}
	if w := dataWarnings(&Run{Cells: []Cell{c2}}); len(w) != 0 {
		t.Errorf("warnings: %q", w)
	}
	// MyISAM: its data is held by the page cache, against the memory limit.
	c3 := c
	c3.Binding = nil
	c3.Workload = engine.Spec{Engine: "oltp", Options: oltp.Options{StorageEngine: "MyISAM", Tables: 4, TableSize: 25000}}
	ObserveWarmth(&c3, cols, DefaultSettleRule)
	if d := c3.Binding.Data; !d.Fits || !strings.Contains(d.Text, "page cache of the 2G memory limit") {
		t.Errorf("data: %+v", d)
	}
	// A cell that never settles has no steady_s.
	c4 := Cell{Name: "climb", Status: CellOK}
	for i := 0; i < 30; i++ {
		c4.Intervals = append(c4.Intervals, engine.Interval{Phase: engine.PhaseRun, Start: secs(i), End: secs(i + 1), Events: int64(10 * (i + 1))})
	}
	ObserveWarmth(&c4, nil, DefaultSettleRule)
	if _, ok := col.Value(&c4); c4.Steady == nil || c4.Steady.Settled || ok {
		t.Errorf("climb: %+v", c4.Steady)
	}
	if c4.Binding != nil {
		t.Errorf("no table sizes, no data record: %+v", c4.Binding)
	}
}

func secs(i int) time.Duration { return time.Duration(i) * time.Second }
