package results

import (
	"bytes"
	"strings"
	"testing"

	"benchmatrix/observe"
	"benchmatrix/record"
)

// contend marks the cells of the given repeats as measured beside other
// load (cpu: % of one CPU used by other processes) and slows them by
// factor: tps divided, latencies multiplied.
func contend(r *record.Run, repeats map[int]bool, cpu, factor float64) {
	for i := range r.Cells {
		c := &r.Cells[i]
		ct := observe.Contention{Intervals: 30, CPUOtherPct: 3, IOOtherKBs: 20}
		if repeats[c.Repeat] {
			ct.CPU, ct.CPUOtherPct, ct.Contended = 30, cpu, true
			ct.Why = "other processes used a lot of CPU"
			slowBy(c, factor)
		}
		c.Contention = &ct
	}
}

func slowBy(c *record.Cell, factor float64) {
	c.Result.Events = int64(float64(c.Result.Events) / factor)
	c.Result.Writes = c.Result.Events
	c.Result.Latency.P95 *= factor
	c.Result.Latency.P99 *= factor
}

// quietHost gives every cell a quiet contention record.
func quietHost(r *record.Run) { contend(r, nil, 0, 1) }

// syncBinlogOn changes scenario's cells to sync_binlog = 1 (as read back)
// and slows them by factor.
func syncBinlogOn(r *record.Run, scenario string, factor float64) {
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Scenario != scenario {
			continue
		}
		c.Params[0].Value = "1"
		c.Effective = copyMap(c.Effective)
		c.Effective["sync_binlog"] = "1"
		slowBy(c, factor)
	}
}

// twoRuns builds the flush matrix twice (6 repeats, other noise) and
// edits each run.
func twoRuns(editBase, editNew func(*record.Run)) func() (*record.Run, *record.Run) {
	return func() (*record.Run, *record.Run) {
		base, new := synthRun(1, 6, flushCells()), synthRun(2, 6, flushCells())
		for _, e := range []struct {
			r    *record.Run
			edit func(*record.Run)
		}{{base, editBase}, {new, editNew}} {
			if e.edit != nil {
				e.edit(e.r)
			}
		}
		return base, new
	}
}

func allRounds(n int) map[int]bool {
	m := map[int]bool{}
	for i := 1; i <= n; i++ {
		m[i] = true
	}
	return m
}

// The gate and the host: table cases of the two rules of compare_host.go.
func TestCompareKnowsTheHost(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// build makes the base and new runs (6 repeats each).
		build func() (base, new *record.Run)
		// regressed are the cells whose regressions count, discounted
		// those whose worsening is reported and not counted.
		regressed, discounted string
		// say must appear in the output.
		say []string
	}{{
		name:       "identical settings, the new run beside a CPU hog: not counted",
		build:      twoRuns(quietHost, func(new *record.Run) { contend(new, allRounds(6), 160, 1.8) }),
		discounted: "b1e1/threads=1 b1e1/threads=8 b0e1/threads=1 b0e1/threads=8 b0e0/threads=1 b0e0/threads=8",
		say: []string{"No regressions", "Not counted: 18 worse figures in b1e1/threads=1, b1e1/threads=8, b0e1/threads=1, b0e1/threads=8, b0e0/threads=1, b0e0/threads=8, measured under contention (more in the new run)",
			"new contended in 6 of 6 repeats (other CPU 160%", "no uncontended repeat is left on one side to check it",
			"the cell's settings did not change", "worse, contended new"},
	}, {
		name: "the base run contended, the new one quiet: better, and a worsening there cannot be checked",
		build: func() (*record.Run, *record.Run) {
			cells := flushCells()
			base := synthRun(1, 6, cells)
			cells[0].tps *= 0.4 // b1e1/threads=1 slower than even the contended base
			new := synthRun(2, 6, cells)
			contend(base, allRounds(6), 160, 1.5)
			quietHost(new)
			return base, new
		},
		discounted: "b1e1/threads=1",
		say:        []string{"under contention in the base run only", "b0e0/threads=8 │ tps    │ 16276", "better"},
	}, {
		name: "a real slowdown that persists in the uncontended rounds counts",
		build: func() (*record.Run, *record.Run) {
			cells := flushCells()
			base := synthRun(1, 6, cells)
			cells[3].tps *= 0.6 // b0e1/threads=8, settings unchanged (a tool change, say)
			new := synthRun(2, 6, cells)
			quietHost(base)
			contend(new, map[int]bool{1: true, 2: true}, 120, 1.5)
			return base, new
		},
		regressed: "b0e1/threads=8",
		say:       []string{"survives it: persists in the uncontended repeats (6 vs 4"},
	}, {
		name:       "changed settings, all contended, lost far more than the unchanged cells: counts",
		build:      twoRuns(quietHost, func(new *record.Run) { syncBinlogOn(new, "b0e0", 4); contend(new, allRounds(6), 160, 1.5) }),
		regressed:  "b0e0/threads=1 b0e0/threads=8",
		discounted: "b1e1/threads=1 b1e1/threads=8 b0e1/threads=1 b0e1/threads=8",
		say: []string{"b0e0/threads=1 tps -83", "sync_binlog 0 -> 1", "survives it: against",
			"(unchanged, the cell the contention hurt most), measured in the same rounds"},
	}, {
		name:       "changed settings, all contended, lost no more than the unchanged cells: not counted",
		build:      twoRuns(quietHost, func(new *record.Run) { syncBinlogOn(new, "b0e0", 1); contend(new, allRounds(6), 160, 1.5) }),
		discounted: "b1e1/threads=1 b1e1/threads=8 b0e1/threads=1 b0e1/threads=8 b0e0/threads=1 b0e0/threads=8",
		say:        []string{"does not survive it: no uncontended repeat", "sync_binlog 0 -> 1"},
	}, {
		name:      "changed settings on a quiet host: a regression naming the change",
		build:     twoRuns(quietHost, func(new *record.Run) { quietHost(new); syncBinlogOn(new, "b0e0", 3) }),
		regressed: "b0e0/threads=1 b0e0/threads=8",
		say: []string{"6 regressions", "b0e0/threads=8 tps -66", "What changed there: b0e0/threads=1, b0e0/threads=8: sync_binlog 0 -> 1.",
			"- b0e0/threads=1\n  - changed: sync_binlog 0 -> 1\n  - host: base quiet"},
	}, {
		name:       "both runs contended in every repeat, the new one heavier (a hog on a busy host): not counted",
		build:      twoRuns(func(base *record.Run) { contend(base, allRounds(6), 140, 1.2) }, func(new *record.Run) { contend(new, allRounds(6), 190, 2) }),
		discounted: "b1e1/threads=1 b1e1/threads=8 b0e1/threads=1 b0e1/threads=8 b0e0/threads=1 b0e0/threads=8",
		say:        []string{"that was heavier in the new run (other CPU 190% vs 140% of a CPU, steal 0% vs 0%)", "No regressions"},
	}, {
		name: "both runs contended alike: an unchanged cell's worsening does not count",
		build: func() (*record.Run, *record.Run) {
			cells := flushCells()
			base := synthRun(1, 6, cells)
			cells[0].tps *= 0.5
			new := synthRun(2, 6, cells)
			contend(base, allRounds(6), 120, 1.2)
			contend(new, allRounds(6), 120, 1.2)
			return base, new
		},
		discounted: "b1e1/threads=1",
		say:        []string{"  - measured under contention in both runs, alike\n  - tps does not survive it", "Contended alike in both runs in b1e1/threads=1"},
	}, {
		name:      "both runs contended alike, a changed cell that lost more than the others: counts",
		build:     twoRuns(func(base *record.Run) { contend(base, allRounds(6), 120, 1.2) }, func(new *record.Run) { syncBinlogOn(new, "b0e1", 2); contend(new, allRounds(6), 120, 1.2) }),
		regressed: "b0e1/threads=1 b0e1/threads=8",
		say:       []string{"What changed there: b0e1/threads=1, b0e1/threads=8: sync_binlog 0 -> 1."},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base, new := tc.build()
			c := mustCompare(t, base, new, DefaultCompareOptions())
			var reg, disc []string
			for _, cc := range c.Cells {
				r, d := false, false
				for _, mc := range cc.Metrics {
					r, d = r || mc.Regression, d || mc.Discounted
				}
				if r {
					reg = append(reg, cc.Name)
				}
				if d && !r {
					disc = append(disc, cc.Name)
				}
			}
			var out bytes.Buffer
			if err := WriteComparison(&out, c, false); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(reg, " "); got != tc.regressed {
				t.Errorf("regressed %q, want %q\n%s", got, tc.regressed, out.String())
			}
			if got := strings.Join(disc, " "); got != tc.discounted {
				t.Errorf("discounted %q, want %q\n%s", got, tc.discounted, out.String())
			}
			for _, s := range tc.say {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, out.String())
				}
			}
		})
	}
}
