package results

import (
	"strings"
	"testing"
	"time"

	"benchmatrix/analysis"
	"benchmatrix/engine"
	"benchmatrix/experiment"
	"benchmatrix/observe"
	"benchmatrix/record"
)

// repeatsRun is a warmup.toml-like run: cells in interleaved rounds with
// the given tps per round; cold cells restart before every repeat;
// contended[k] marks round k+1 as measured beside other load.
func repeatsRun(tps map[string][]float64, order []string, cold map[string]bool, contended []bool) *record.Run {
	r := &record.Run{Experiment: "warmup", Order: "grouped"}
	for rep := 1; rep <= len(tps[order[0]]); rep++ {
		for _, name := range order {
			res := &engine.Result{Elapsed: 10 * time.Second, Events: int64(tps[name][rep-1] * 10)}
			ct := &observe.Contention{Intervals: 10, CPUOtherPct: 5}
			if rep-1 < len(contended) && contended[rep-1] {
				ct.CPU, ct.CPUOtherPct, ct.Contended, ct.Why = 8, 140, true, "other processes used 140% of a CPU"
			}
			// The run's first cell starts the server (Change.Start, not
			// Restarted): cold as well.
			first := len(r.Cells) == 0
			r.Cells = append(r.Cells, record.Cell{Name: name, Repeat: rep, Index: len(r.Cells), Status: record.CellOK, Result: res,
				Restarted: cold[name] && !first, Change: experiment.Change{Start: first, Cold: cold[name] && !first}, Contention: ct})
		}
	}
	return r
}

var warmupCells = []string{"cold/innodb", "warm/innodb", "prewarm/innodb", "cold/myisam", "warm/myisam", "prewarm/myisam"}

func TestJudgeRepeats(t *testing.T) {
	t.Parallel()
	cold := map[string]bool{"cold/innodb": true, "cold/myisam": true, "prewarm/innodb": true, "prewarm/myisam": true}
	rising := func(base float64) []float64 { return []float64{base * 0.80, base * 0.97, base * 1.02} }
	flat := func(base float64) []float64 { return []float64{base * 1.01, base * 0.99, base * 1.0} }
	cases := []struct {
		name      string
		tps       map[string][]float64
		contended []bool
		cause     string // "" for no judgement
		say       []string
	}{{
		name: "round 1 contended, cold cells rise too: host load",
		tps: map[string][]float64{
			"cold/innodb": rising(100), "warm/innodb": rising(130), "prewarm/innodb": rising(120),
			"cold/myisam": rising(90), "warm/myisam": rising(95), "prewarm/myisam": flat(92),
		},
		contended: []bool{true, false, false},
		cause:     "host load",
		say: []string{"tps rose over the repeats in 5 of 6 cells", "cold-restarted ones included (3 of 4)",
			"while round 1 was contended", "host load, not warm-up"},
	}, {
		name: "every cell rises, cold ones included, a quiet host: drift",
		tps: map[string][]float64{
			"cold/innodb": rising(100), "warm/innodb": rising(130), "prewarm/innodb": rising(120),
			"cold/myisam": rising(90), "warm/myisam": rising(95), "prewarm/myisam": rising(92),
		},
		cause: "drift",
		say:   []string{"cold-restarted ones included (4 of 4)", "not warm-up", "drift of another kind"},
	}, {
		name: "noise",
		tps: map[string][]float64{
			"cold/innodb": {100, 99, 101}, "warm/innodb": {130, 131, 129}, "prewarm/innodb": {120, 121, 122},
			"cold/myisam": {90, 89, 91}, "warm/myisam": {95, 94, 93}, "prewarm/myisam": {92, 93, 91},
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j, ok := analysis.JudgeRepeats(repeatsRun(tc.tps, warmupCells, cold, tc.contended))
			text := repeatsText(j)
			if ok != (tc.cause != "") || j.Cause != tc.cause {
				t.Fatalf("judged %v %q (%s), want %q", ok, j.Cause, text, tc.cause)
			}
			for _, s := range tc.say {
				if !strings.Contains(text, s) {
					t.Errorf("%q lacks %q", text, s)
				}
			}
		})
	}
	// Warm-up: over six repeats the warm cells climb (each significant on
	// its own), the cold-restarted ones stay flat, nothing contended.
	climb := []float64{100, 110, 118, 124, 128, 131}
	level := []float64{100, 101, 99, 100, 102, 98}
	scale := func(xs []float64, f float64) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = x * f
		}
		return out
	}
	r := repeatsRun(map[string][]float64{
		"cold/innodb": scale(level, 1), "warm/innodb": scale(climb, 1.3), "prewarm/innodb": scale(level, 1.2),
		"cold/myisam": scale(level, 0.9), "warm/myisam": scale(climb, 0.95), "prewarm/myisam": scale(level, 0.92),
	}, warmupCells, cold, nil)
	j, ok := analysis.JudgeRepeats(r)
	text := repeatsText(j)
	if !ok || j.Cause != "warm-up" || !strings.Contains(text, "none of the 4 cold-restarted") || !strings.Contains(text, "the cells that keep a warm server") {
		t.Errorf("warm-up: %v %q", ok, text)
	}
	// The Conclusion carries the judgement.
	w := strings.Join(Conclude(r).Warnings, "\n")
	if !strings.Contains(w, "repeats: tps rose over the repeats in 2 of 6 cells") || !strings.Contains(w, "warm/innodb: tps rose over the repeats in the order they ran") {
		t.Errorf("Conclusion warnings %q", w)
	}
}
