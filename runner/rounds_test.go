package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/analysis"
	"benchmatrix/catalog"
	"benchmatrix/engine"
	"benchmatrix/experiment"
	"benchmatrix/oltp"
	"benchmatrix/record"
	"benchmatrix/results"
)

// until = "conclusive" on fakes: the loop's stops (decided, max_repeats,
// budget, shard), resume mid-way; and on a real sandbox: a 1-thread load
// against the same load held to 100 tps is decided after the first
// decisive round, with the record and the Conclusion's sentence.

const roundsHead = `
[experiment]
duration = "1s"
warmup = "0s"
observe = false
baseline = "a"
until = "conclusive"
`

// levelWorkload reports tps of level(threads) times a random factor
// exp(noise·N(0,1)), after sleeping pause.
type levelWorkload struct {
	fakeWorkload
	mu    sync.Mutex
	rng   *rand.Rand
	noise float64
	level func(o oltp.Options) float64
	pause time.Duration
}

func (w *levelWorkload) Run(ctx context.Context, _ *mysql.Config, eo engine.Options, report func(engine.Interval)) (*engine.Result, error) {
	o := asOLTP(eo)
	time.Sleep(w.pause)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w.mu.Lock()
	f := math.Exp(w.noise * w.rng.NormFloat64())
	w.mu.Unlock()
	ev := int64(w.level(o) * f * o.Time.Seconds())
	report(engine.Interval{Phase: engine.PhaseRun, End: o.Time, Threads: o.Threads, Events: ev, Writes: ev})
	return &engine.Result{Elapsed: o.Time, Events: ev, Writes: ev}, nil
}

func roundsRig(noise float64, pause time.Duration, seed uint64) (*fakeRig, *levelWorkload) {
	rig := newFakeRig()
	wl := &levelWorkload{rng: rand.New(rand.NewPCG(seed, 1)), noise: noise, pause: pause,
		level: func(o oltp.Options) float64 { return 1000 * float64(o.Threads) }}
	rig.cfg.Workload = wl
	return rig, wl
}

const twoScenarios = "[workload]\nname = \"oltp_point_select\"\ntable_size = 1000\n[scenarios]\na = { threads = 1 }\nb = { threads = 2 }\n"
const sameScenarios = "[workload]\nname = \"oltp_point_select\"\ntable_size = 1000\n[scenarios]\na = { sync_binlog = 0 }\nb = { sync_binlog = 0 }\n"

func runRoundsFake(t *testing.T, rig *fakeRig, src string, f experiment.Flags) (*record.Run, error) {
	t.Helper()
	f.Flavor = catalog.MariaDB
	return Run(context.Background(), planWith(t, src, f), rig.cfg)
}

func checkKeys(t *testing.T, run *record.Run) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range run.Cells {
		k := results.RunKey(c.Name, c.Repeat)
		if seen[k] {
			t.Errorf("%s ran twice", k)
		}
		seen[k] = true
	}
	if len(run.Plan) != len(run.Cells) {
		t.Errorf("run.json plan has %d cell runs, %d ran", len(run.Plan), len(run.Cells))
	}
}

func TestRoundsUntilDecided(t *testing.T) {
	t.Parallel()
	rig, _ := roundsRig(0.05, 0, 1)
	run, err := runRoundsFake(t, rig, roundsHead+twoScenarios, experiment.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	rec := run.Rounds
	if rec == nil {
		t.Fatal("no rounds record")
	}
	// 2x in every round with 5 % noise: the sign test alone could first
	// decide at 7 pairs; the t-test decides from the size within 3 or 4.
	if rec.Stopped != analysis.StoppedDecided || rec.Rounds > 4 || len(run.Cells) != 2*rec.Rounds {
		t.Fatalf("stopped %s after %d rounds, %d cells", rec.Stopped, rec.Rounds, len(run.Cells))
	}
	checkKeys(t, run)
	d := rec.Decisions
	if len(d) != 1 || d[0].Outcome != analysis.OutcomeFaster || d[0].X != "b" || d[0].Y != "a" || d[0].CILo <= 1 || d[0].DecidedBy != "t" || d[0].SignOnlyRounds < 7 {
		t.Fatalf("decisions %+v", d)
	}
	var sum strings.Builder
	results.WriteConclusion(&sum, run)
	if !strings.Contains(sum.String(), fmt.Sprintf("**Conclusive after %d rounds", rec.Rounds)) || !strings.Contains(sum.String(), "the sign test alone (the rule before) needs at least 7 rounds") || strings.Contains(sum.String(), "Nothing can be concluded") {
		t.Errorf("conclusion:\n%s", sum.String())
	}
}

func TestRoundsAAStopsUndecidedOrEquivalent(t *testing.T) {
	t.Parallel()
	// 30 % noise: no decision within 5 rounds.
	rig, _ := roundsRig(0.3, 0, 2)
	run, err := runRoundsFake(t, rig, roundsHead+"max_repeats = 5\n"+sameScenarios, experiment.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if rec := run.Rounds; rec.Stopped != analysis.StoppedMaxRepeats || rec.Rounds != 5 || rec.Decisions[0].Outcome != analysis.OutcomeUndecided {
		t.Fatalf("A/A, 30%% noise: %+v", rec)
	}
	var sum strings.Builder
	results.WriteConclusion(&sum, run)
	if !strings.Contains(sum.String(), "**Budget spent** (max_repeats: 5 rounds") || !strings.Contains(sum.String(), "b vs a still undecided, CI ") {
		t.Errorf("conclusion:\n%s", sum.String())
	}
	// 1 % noise: equivalent within 5 % once the interval can be bounded.
	rig, _ = roundsRig(0.01, 0, 3)
	run, err = runRoundsFake(t, rig, roundsHead+sameScenarios, experiment.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if rec := run.Rounds; rec.Stopped != analysis.StoppedDecided || rec.Decisions[0].Outcome != analysis.OutcomeEquivalent {
		t.Fatalf("A/A, 1%% noise: %+v", rec)
	}
}

func TestRoundsBudget(t *testing.T) {
	t.Parallel()
	// Every cell takes at least 50 ms: a 1 s budget stops an undecided
	// run before max_repeats (12), after the minimum.
	rig, _ := roundsRig(0.3, 50*time.Millisecond, 4)
	b := time.Second
	run, err := runRoundsFake(t, rig, roundsHead+sameScenarios, experiment.Flags{Budget: &b})
	if err != nil {
		t.Fatal(err)
	}
	rec := run.Rounds
	if rec.Stopped != analysis.StoppedBudget || rec.Rounds < 3 || rec.Rounds >= 12 || rec.BudgetSeconds != 1 {
		t.Fatalf("budget: %+v", rec)
	}
	// No round was started that the average round says ends past it.
	if rec.WallSeconds > b.Seconds()*float64(rec.Rounds+1)/float64(rec.Rounds) {
		t.Errorf("%d rounds took %.2f s, beyond the 1 s budget by more than a round", rec.Rounds, rec.WallSeconds)
	}
}

func TestRoundsShardRunsMinimum(t *testing.T) {
	t.Parallel()
	rig, _ := roundsRig(0.05, 0, 5)
	rig.cfg.Shard = &record.ShardRecord{K: 1, N: 1}
	run, err := runRoundsFake(t, rig, roundsHead+twoScenarios, experiment.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if rec := run.Rounds; rec.Stopped != analysis.StoppedShard || rec.Rounds != 3 || len(run.Cells) != 6 {
		t.Fatalf("shard: %+v, %d cells", rec, len(run.Cells))
	}
}

// cancelSink cancels the run once n cells are in.
type cancelSink struct {
	*memSink
	n      int
	cancel context.CancelFunc
}

func (s cancelSink) AppendCell(c *record.Cell) error {
	err := s.memSink.AppendCell(c)
	if len(s.cells) >= s.n {
		s.cancel()
	}
	return err
}

func TestRoundsResume(t *testing.T) {
	t.Parallel()
	// Interrupted inside round 4 (7 cells), and between rounds 4 and 5 (8);
	// 25 % noise on a 2x difference keeps the run undecided that long.
	for _, n := range []int{7, 8} {
		rig, _ := roundsRig(0.25, 0, 6)
		plan := planWith(t, roundsHead+twoScenarios, experiment.Flags{Flavor: catalog.MariaDB})
		ctx, cancel := context.WithCancel(context.Background())
		cfg := rig.cfg
		cfg.Sink = cancelSink{memSink: rig.sink, n: n, cancel: cancel}
		stored, err := Run(ctx, plan, cfg)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%d cells: first run: %v", n, err)
		}
		if stored.Rounds == nil || stored.Rounds.Stopped != analysis.StoppedInterrupted || len(stored.Cells) != n {
			t.Fatalf("%d cells: stored %+v, %d cells", n, stored.Rounds, len(stored.Cells))
		}
		firstStarted := stored.Cells[0].Started
		fresh := planWith(t, roundsHead+twoScenarios, experiment.Flags{Flavor: catalog.MariaDB})
		rig2, _ := roundsRig(0.25, 0, 7)
		rig2.cfg.Resume = stored
		run, err := Run(context.Background(), fresh, rig2.cfg)
		if err != nil {
			t.Fatalf("%d cells: resume: %v", n, err)
		}
		rounds := run.Rounds.Rounds
		if rec := run.Rounds; rec.Stopped != analysis.StoppedDecided || rounds < 5 || len(run.Cells) != 2*rounds {
			t.Fatalf("%d cells: resumed run stopped %s after %d rounds, %d cells", n, rec.Stopped, rec.Rounds, len(run.Cells))
		}
		if len(rig2.sink.cells) != 2*rounds-n {
			t.Errorf("%d cells: the resume ran %d cells, want %d", n, len(rig2.sink.cells), 2*rounds-n)
		}
		if !run.Cells[0].Started.Equal(firstStarted) {
			t.Errorf("%d cells: the first cell was run again", n)
		}
		checkKeys(t, run)
		// Resuming the finished run runs nothing and keeps its record.
		rig3, _ := roundsRig(0.25, 0, 8)
		rig3.cfg.Resume = run
		again, err := Run(context.Background(), planWith(t, roundsHead+twoScenarios, experiment.Flags{Flavor: catalog.MariaDB}), rig3.cfg)
		if err != nil || len(rig3.sink.cells) != 0 || again.Rounds == nil || again.Rounds.Rounds != rounds {
			t.Errorf("%d cells: resuming the finished run: %v, ran %d cells, rounds %+v", n, err, len(rig3.sink.cells), again.Rounds)
		}
	}
}

// On a real sandbox: oltp_point_select on one thread against the same held
// to 100 tps (rate): slower in every round by far more than the noise,
// decided from the size of the difference before the sign test alone could
// (7 rounds); results directory, run.json and summary.md say so.
func TestRoundsOnSandbox(t *testing.T) {
	needServer(t)
	src := roundsHead + `
[server.config]
innodb_buffer_pool_size = "64M"
[workload]
name = "oltp_point_select"
tables = 1
table_size = 1000
threads = 1
[scenarios]
a = { rate = 0 }
b = { rate = 100 }
`
	dir := filepath.Join(t.TempDir(), "out")
	m, err := experiment.Parse("rounds.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := experiment.Resolve(m, experiment.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	run, err := Run(context.Background(), plan, Config{OutDir: dir, Start: sandboxStart, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	rec := run.Rounds
	if rec == nil || rec.Stopped != analysis.StoppedDecided || rec.Rounds >= 7 {
		t.Fatalf("rounds: %+v", rec)
	}
	n := rec.Rounds
	if d := rec.Decisions[0]; d.Outcome != analysis.OutcomeSlower || d.CIHi >= 1 || d.CIHi == 0 {
		t.Errorf("b vs a: %+v", d)
	}
	stored, err := results.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Rounds == nil || stored.Rounds.Rounds != n || len(stored.Plan) != 2*n || len(stored.Cells) != 2*n {
		t.Fatalf("run.json: rounds %+v, %d planned, %d cells", stored.Rounds, len(stored.Plan), len(stored.Cells))
	}
	if rows := readCSV(t, filepath.Join(dir, results.CellsFile)); len(rows) != 2*n+1 {
		t.Errorf("cells.csv has %d rows, want header + %d", len(rows), 2*n)
	}
	sum, err := os.ReadFile(filepath.Join(dir, results.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sum), fmt.Sprintf("**Conclusive after %d rounds", n)) || !strings.Contains(string(sum), "b vs a: **0.") {
		t.Errorf("summary.md:\n%s", sum)
	}
}

// secondsWorkload is levelWorkload reporting every second of its window,
// each with its own noise, as a real engine does.
type secondsWorkload struct{ levelWorkload }

func (w *secondsWorkload) Run(ctx context.Context, _ *mysql.Config, eo engine.Options, report func(engine.Interval)) (*engine.Result, error) {
	o := asOLTP(eo)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var total int64
	for s := time.Duration(0); s < o.Time; s += time.Second {
		w.mu.Lock()
		ev := int64(w.level(o) * math.Exp(w.noise*w.rng.NormFloat64()))
		w.mu.Unlock()
		total += ev
		report(engine.Interval{Phase: engine.PhaseRun, Start: s, End: s + time.Second, Threads: o.Threads, Events: ev, Writes: ev})
	}
	return &engine.Result{Elapsed: o.Time, Events: total, Writes: total}, nil
}

// duration = "auto": the first round measures the pilot (5 s), the rounds
// after it the length chosen from its noise; run.json and the Conclusion
// say what was chosen and why, and the plan's later rounds keep it.
func TestRoundsDurationAuto(t *testing.T) {
	t.Parallel()
	rig := newFakeRig()
	wl := &secondsWorkload{levelWorkload{rng: rand.New(rand.NewPCG(11, 1)), noise: 0.05,
		level: func(o oltp.Options) float64 { return 1000 * float64(o.Threads) }}}
	rig.cfg.Workload = wl
	head := strings.Replace(roundsHead, `duration = "1s"`, "duration = \"auto\"\nduration_cap = \"20s\"", 1)
	run, err := runRoundsFake(t, rig, head+twoScenarios, experiment.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	rec := run.Rounds
	if rec == nil || rec.Length == nil || rec.Length.PilotSeconds != 5 || rec.Stopped != analysis.StoppedDecided {
		t.Fatalf("rounds %+v", rec)
	}
	chosen := time.Duration(rec.Length.Seconds) * time.Second
	if chosen < experiment.MinAutoDuration || chosen > 20*time.Second || !strings.Contains(rec.Length.Why, "s cells: the first round's noise and setup") {
		t.Errorf("chosen %s: %s", chosen, rec.Length.Why)
	}
	for _, c := range run.Cells {
		want := chosen
		if c.Repeat == 1 {
			want = 5 * time.Second
		}
		if c.Result.Elapsed != want {
			t.Errorf("%s #%d measured %s, want %s", c.Name, c.Repeat, c.Result.Elapsed, want)
		}
	}
	var sum strings.Builder
	results.WriteConclusion(&sum, run)
	if !strings.Contains(sum.String(), "duration = \"auto\": the first round measured 5s a cell; ") {
		t.Errorf("conclusion:\n%s", sum.String())
	}
	// A fixed-repeats run cannot choose: the manifest is refused.
	m, err := experiment.Parse("auto.toml", strings.Replace(head, `until = "conclusive"`, `until = "repeats"`, 1)+twoScenarios)
	if err == nil {
		_, err = experiment.Resolve(m, experiment.Flags{})
	}
	if err == nil || !strings.Contains(err.Error(), "it needs until = \"conclusive\"") {
		t.Errorf("duration auto with until = repeats: %v", err)
	}
}
