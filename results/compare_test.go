package results

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchmatrix/engine"
	"benchmatrix/exitcode"
	"benchmatrix/experiment"
	"benchmatrix/oltp"
	"benchmatrix/record"
	"benchmatrix/server"
)

// synthCell describes one cell of a synthetic run: its centre values and
// how much each repeat wanders (a fraction: 0.01 is about ±1 %).
type synthCell struct {
	scenario string
	threads  int
	tps      float64
	p95, p99 float64
	noise    float64
}

func (s synthCell) name() string { return s.scenario + "/threads=" + strconv.Itoa(s.threads) }

var scenarioVars = map[string][2]string{
	"b1e1": {"1", "1"},
	"b0e1": {"0", "1"},
	"b0e0": {"0", "0"},
}

// synthRun builds a finished run of cells × repeats, interleaved as the
// runner orders them, with deterministic noise from seed.
func synthRun(seed uint64, repeats int, cells []synthCell) *record.Run {
	rng := rand.New(rand.NewPCG(seed, 7))
	started := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := &record.Run{
		Tool:         record.Tool{Name: "benchmatrix", Version: "v0.3.0", Commit: "abc1234", GoVersion: "go1.26.8"},
		Experiment:   "flush",
		ManifestPath: "manifests/flush.toml",
		Manifest:     "[experiment]\nname = \"flush\"\n",
		ManifestHash: "5f1d",
		Baseline:     "b1e1",
		Columns:      []string{"sync_binlog", "innodb_flush_log_at_trx_commit", "threads"},
		Status:       record.StatusFinished,
		Started:      started,
		Finished:     started.Add(time.Hour),
		Server:       server.Info{Provider: "sandbox", Flavor: server.MariaDB, Version: "10.11.6-MariaDB-0+deb12u1"},
		Host:         record.Host{Hostname: "ci-1", CPUModel: "AMD EPYC 7B13", Cores: 2, MemoryMB: 7940, Kernel: "6.1.0-18-amd64"},
	}
	idx := 0
	for rep := 1; rep <= repeats; rep++ {
		for _, s := range cells {
			vars := scenarioVars[s.scenario]
			o := oltp.DefaultOptions()
			o.Workload = "oltp_insert"
			o.Threads = s.threads
			o.Time = 30 * time.Second
			o.Warmup = 5 * time.Second
			jitter := func() float64 { return 1 + s.noise*rng.NormFloat64() }
			elapsed := 30 * time.Second
			res := &engine.Result{
				Elapsed: elapsed,
				Events:  int64(s.tps * jitter() * elapsed.Seconds()),
				Latency: engine.Latency{P95: s.p95 * jitter(), P99: s.p99 * jitter()},
			}
			res.Writes = res.Events
			r.Cells = append(r.Cells, record.Cell{
				Name:     s.name(),
				Index:    idx,
				Scenario: s.scenario,
				Params: []experiment.Param{
					{Name: "sync_binlog", Value: vars[0]},
					{Name: "innodb_flush_log_at_trx_commit", Value: vars[1]},
					{Name: "threads", Value: strconv.Itoa(s.threads)},
				},
				Repeat:    rep,
				Status:    record.CellOK,
				Started:   started.Add(time.Duration(idx) * time.Minute),
				Effective: map[string]string{"sync_binlog": vars[0], "innodb_flush_log_at_trx_commit": vars[1], "log_bin": "ON"},
				Workload:  engine.Spec{Engine: "oltp", Options: o},
				Result:    res,
			})
			idx++
		}
	}
	return r
}

// flushCells is the flush experiment's matrix: three scenarios × threads 1, 8.
func flushCells() []synthCell {
	return []synthCell{
		{scenario: "b1e1", threads: 1, tps: 2250, p95: 0.62, p99: 0.95, noise: 0.01},
		{scenario: "b1e1", threads: 8, tps: 9100, p95: 1.45, p99: 2.30, noise: 0.01},
		{scenario: "b0e1", threads: 1, tps: 4190, p95: 0.33, p99: 0.51, noise: 0.01},
		{scenario: "b0e1", threads: 8, tps: 15800, p95: 0.81, p99: 1.30, noise: 0.01},
		{scenario: "b0e0", threads: 1, tps: 6050, p95: 0.21, p99: 0.34, noise: 0.01},
		{scenario: "b0e0", threads: 8, tps: 24400, p95: 0.52, p99: 0.88, noise: 0.01},
	}
}

var updateCompareGolden = flag.Bool("update-compare-golden", false, "rewrite testdata/compare*.golden")

func mustCompare(t *testing.T, base, new *record.Run, opt CompareOptions) *Comparison {
	t.Helper()
	c, err := Compare(base, new, opt)
	if err != nil {
		t.Fatalf("Compare: %v", err)
	}
	return c
}

func metricOf(t *testing.T, c *Comparison, cell, metric string) MetricComparison {
	t.Helper()
	for _, cc := range c.Cells {
		if cc.Name != cell {
			continue
		}
		for _, mc := range cc.Metrics {
			if mc.Metric == metric {
				return mc
			}
		}
	}
	t.Fatalf("no %s %s in the comparison", cell, metric)
	return MetricComparison{}
}

func TestCompareIdenticalRuns(t *testing.T) {
	t.Parallel()
	base := synthRun(1, 5, flushCells())
	new := synthRun(1, 5, flushCells())
	c := mustCompare(t, base, new, DefaultCompareOptions())
	if got := c.Regressed(); len(got) != 0 {
		t.Errorf("Regressed() = %v, want none", got)
	}
	if len(c.Cells) != 6 || len(c.Unmatched) != 0 || len(c.Mismatches) != 0 || len(c.EnvDiffs) != 0 {
		t.Fatalf("%d cells, unmatched %v, mismatches %v, env %v", len(c.Cells), c.Unmatched, c.Mismatches, c.EnvDiffs)
	}
	for _, cc := range c.Cells {
		for _, mc := range cc.Metrics {
			if mc.Verdict != Unchanged || mc.DeltaPct != 0 || mc.P != 1 {
				t.Errorf("%s %s: verdict %q delta %v p %v, want ~ 0 1", cc.Name, mc.Metric, mc.Verdict, mc.DeltaPct, mc.P)
			}
		}
	}
	if !strings.HasPrefix(c.VerdictLine(), "No regressions") {
		t.Errorf("verdict line %q", c.VerdictLine())
	}
}

// A second run of the same matrix with other noise: nothing changed, and
// nothing may be called a regression.
func TestCompareNoiseOnly(t *testing.T) {
	t.Parallel()
	for seed := uint64(2); seed < 12; seed++ {
		c := mustCompare(t, synthRun(1, 5, flushCells()), synthRun(seed, 5, flushCells()), DefaultCompareOptions())
		if got := c.Regressed(); len(got) != 0 {
			t.Errorf("seed %d: Regressed() = %v on noise alone", seed, got)
		}
	}
}

func TestCompareFindsTPSRegression(t *testing.T) {
	t.Parallel()
	cells := flushCells()
	base := synthRun(1, 5, cells)
	cells[1].tps *= 0.7 // b1e1/threads=8 loses 30 %
	new := synthRun(2, 5, cells)
	c := mustCompare(t, base, new, DefaultCompareOptions())
	if got := c.Regressed(); !slices.Equal(got, []string{"b1e1/threads=8"}) {
		t.Fatalf("Regressed() = %v, want [b1e1/threads=8]", got)
	}
	mc := metricOf(t, c, "b1e1/threads=8", "tps")
	// Five repeats each, completely separated: the exact p is 2/252.
	if mc.Verdict != Worse || !mc.Regression || math.Abs(mc.DeltaPct+30) > 3 || math.Abs(mc.P-2.0/252) > 1e-12 {
		t.Errorf("tps: %+v, want worse by about 30%% at p=0.0079", mc)
	}
	if mc.Base.OK || mc.New.OK {
		t.Errorf("a 5-repeat median has no 95%% interval: %+v %+v", mc.Base, mc.New)
	}
	line := c.VerdictLine()
	if !strings.Contains(line, "1 regression") || !strings.Contains(line, "b1e1/threads=8 tps -29.9%") || !strings.Contains(line, "(p=0.008)") {
		t.Errorf("verdict line %q", line)
	}
	for _, w := range c.Warnings {
		if strings.Contains(w, "too few repeats") {
			t.Errorf("5 repeats each are enough, yet: %s", w)
		}
	}
}

func TestCompareLatencyIsLowerBetter(t *testing.T) {
	t.Parallel()
	cells := flushCells()
	base := synthRun(1, 6, cells)
	cells[2].p99 *= 1.25 // b0e1/threads=1 p99 up 25 %: worse
	cells[4].p95 *= 0.6  // b0e0/threads=1 p95 down 40 %: better
	new := synthRun(3, 6, cells)
	c := mustCompare(t, base, new, DefaultCompareOptions())
	if got := c.Regressed(); !slices.Equal(got, []string{"b0e1/threads=1"}) {
		t.Errorf("Regressed() = %v, want [b0e1/threads=1]", got)
	}
	if mc := metricOf(t, c, "b0e1/threads=1", "p99"); mc.Verdict != Worse || !mc.Regression || mc.DeltaPct < 20 {
		t.Errorf("p99: %+v", mc)
	}
	if mc := metricOf(t, c, "b0e0/threads=1", "p95"); mc.Verdict != Better || mc.Regression || mc.DeltaPct > -35 {
		t.Errorf("p95: %+v", mc)
	}
	// Six repeats give a confidence interval.
	if mc := metricOf(t, c, "b0e0/threads=1", "tps"); !mc.Base.OK || !mc.New.OK || mc.Base.Lo > mc.Base.Median || mc.Base.Hi < mc.Base.Median {
		t.Errorf("6 repeats: intervals %+v %+v", mc.Base, mc.New)
	}
}

// A significant change smaller than the threshold is reported, not failed.
func TestCompareThreshold(t *testing.T) {
	t.Parallel()
	cells := flushCells()
	for i := range cells {
		cells[i].noise = 0.002
	}
	base := synthRun(1, 6, cells)
	cells[0].tps *= 0.97
	new := synthRun(2, 6, cells)
	c := mustCompare(t, base, new, DefaultCompareOptions())
	mc := metricOf(t, c, "b1e1/threads=1", "tps")
	if mc.Verdict != Worse || mc.Regression || len(c.Regressed()) != 0 {
		t.Errorf("3%% drop with a 5%% threshold: %+v, regressed %v", mc, c.Regressed())
	}
	opt := DefaultCompareOptions()
	opt.Threshold = 2
	c = mustCompare(t, base, new, opt)
	if got := c.Regressed(); !slices.Equal(got, []string{"b1e1/threads=1"}) {
		t.Errorf("3%% drop with a 2%% threshold: Regressed() = %v", got)
	}
}

func TestCompareTooFewRepeats(t *testing.T) {
	t.Parallel()
	cells := flushCells()
	base := synthRun(1, 3, cells)
	cells[1].tps *= 0.7
	new := synthRun(2, 3, cells)
	c := mustCompare(t, base, new, DefaultCompareOptions())
	if got := c.Regressed(); len(got) != 0 {
		t.Errorf("3 vs 3 repeats cannot show a significant change, yet Regressed() = %v", got)
	}
	mc := metricOf(t, c, "b1e1/threads=8", "tps")
	if mc.Verdict != Unchanged || math.Abs(mc.P-0.1) > 1e-12 {
		t.Errorf("tps with 3 vs 3: %+v, want ~ at p=0.1", mc)
	}
	found := false
	for _, w := range c.Warnings {
		if strings.Contains(w, "too few repeats to detect a change (need ≥4 each for p<0.05)") && strings.Contains(w, "b1e1/threads=8 (3 vs 3)") {
			found = true
		}
	}
	if !found {
		t.Errorf("no too-few-repeats warning in %q", c.Warnings)
	}
}

func TestCompareWorkloadMismatch(t *testing.T) {
	t.Parallel()
	base := synthRun(1, 5, flushCells())
	new := synthRun(1, 5, flushCells())
	for i := range new.Cells {
		if new.Cells[i].Name == "b1e1/threads=1" {
			withOLTP(&new.Cells[i], func(o *oltp.Options) { o.ReinsertID = "auto" })
		}
		// Run length is not part of the workload's definition.
		withOLTP(&new.Cells[i], func(o *oltp.Options) { o.Time, o.Warmup = time.Minute, 0 })
	}
	_, err := Compare(base, new, DefaultCompareOptions())
	var me *MismatchError
	if !errors.As(err, &me) {
		t.Fatalf("Compare: %v, want a *MismatchError", err)
	}
	want := []record.Mismatch{{Cell: "b1e1/threads=1", Key: "b1e1/threads=1: reinsert_id", Base: "same", New: "auto"}}
	if !slices.Equal(me.Mismatches, want) {
		t.Errorf("mismatches %+v, want %+v", me.Mismatches, want)
	}
	if msg := err.Error(); !strings.Contains(msg, `reinsert_id: base "same", new "auto" (b1e1/threads=1)`) {
		t.Errorf("error %q does not name the option and both values", msg)
	}
}

// A server setting or version that differs does not make runs
// incomparable (it is what users compare runs for): the differences are
// listed first, and a slowdown they cause is a regression like any other.
func TestCompareServerDifferencesAreCompared(t *testing.T) {
	t.Parallel()
	base := synthRun(1, 5, flushCells())
	slower := flushCells()
	for i := range slower {
		if slower[i].scenario == "b0e0" {
			slower[i].tps /= 2
		}
	}
	new := synthRun(1, 5, slower)
	new.Server.Version = "11.4.2-MariaDB"
	for i := range new.Cells {
		if new.Cells[i].Scenario == "b0e0" {
			new.Cells[i].Effective["log_bin"] = "OFF"
		}
	}
	c, err := Compare(base, new, DefaultCompareOptions())
	if err != nil {
		t.Fatalf("Compare: %v", err)
	}
	keys := map[string]record.Mismatch{}
	for _, m := range c.EnvDiffs {
		keys[m.Key] = m
	}
	if m := keys["server version"]; m.Base != "10.11.6-MariaDB-0+deb12u1" || m.New != "11.4.2-MariaDB" {
		t.Errorf("server version difference %+v in %+v", m, c.EnvDiffs)
	}
	if m := keys["b0e0/threads=8: @@log_bin"]; m.Base != "ON" || m.New != "OFF" {
		t.Errorf("log_bin difference %+v in %+v", m, c.EnvDiffs)
	}
	if len(c.Mismatches) != 0 {
		t.Errorf("server differences made the runs incomparable: %+v", c.Mismatches)
	}
	if got := strings.Join(c.Regressed(), " "); got != "b0e0/threads=1 b0e0/threads=8" {
		t.Errorf("regressed %q, want both b0e0 cells", got)
	}
	var out bytes.Buffer
	if err := WriteComparison(&out, c, false); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "What differs between these runs:") ||
		strings.Index(s, "server version") > strings.Index(s, "REGRESSION") {
		t.Errorf("the differences are not listed before the table:\n%s", s)
	}
}

// Runs with no cell in common are refused: nothing was compared, and a gate
// pointed at the wrong directories must not pass.
func TestCompareNothingInCommon(t *testing.T) {
	t.Parallel()
	base := synthRun(1, 3, flushCells())
	new := synthRun(1, 3, flushCells())
	for i := range new.Cells {
		new.Cells[i].Name = "other/" + new.Cells[i].Name
		new.Cells[i].Params = append(new.Cells[i].Params, experiment.Param{Name: "engine", Value: "myisam"})
	}
	_, err := Compare(base, new, DefaultCompareOptions())
	var nc *NothingInCommonError
	if !errors.As(err, &nc) || exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("Compare: %v", err)
	}
}

func TestCompareAllowMismatch(t *testing.T) {
	t.Parallel()
	base := synthRun(1, 5, flushCells())
	new := synthRun(1, 5, flushCells())
	for i := range new.Cells {
		if new.Cells[i].Scenario == "b1e1" {
			withOLTP(&new.Cells[i], func(o *oltp.Options) { o.ReinsertID = "auto" })
		}
	}
	opt := DefaultCompareOptions()
	opt.AllowMismatch = true
	c := mustCompare(t, base, new, opt)
	if len(c.Mismatches) != 2 {
		t.Fatalf("mismatches %+v, want 2", c.Mismatches)
	}
	for _, cc := range c.Cells {
		if cc.Mismatched != (cc.Scenario == "b1e1") {
			t.Errorf("%s: Mismatched = %v", cc.Name, cc.Mismatched)
		}
	}
	var out bytes.Buffer
	if err := WriteComparison(&out, c, true); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"the runs are not comparable; compared anyway",
		`reinsert_id: base "same", new "auto" (b1e1/threads=1, b1e1/threads=8)`,
		"b1e1/threads=8 (!)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "b0e1/threads=1 (!)") {
		t.Errorf("an unaffected cell is marked:\n%s", s)
	}
}

func TestCompareEnvironmentOnlyWarns(t *testing.T) {
	t.Parallel()
	base := synthRun(1, 5, flushCells())
	new := synthRun(1, 5, flushCells())
	new.Host.Kernel = "6.12.0-1-amd64"
	new.Tool.Version = "v0.4.0"
	new.ManifestHash = "77aa"
	c := mustCompare(t, base, new, DefaultCompareOptions())
	got := map[string]bool{}
	for _, d := range c.EnvDiffs {
		got[d.Key] = true
	}
	if len(c.EnvDiffs) != 3 || !got["host kernel"] || !got["tool version"] || !got["manifest sha256"] {
		t.Errorf("env diffs %+v", c.EnvDiffs)
	}
}

func TestCompareUnmatchedAndFailed(t *testing.T) {
	t.Parallel()
	base := synthRun(1, 5, flushCells())
	new := synthRun(1, 5, flushCells()[:4]) // no b0e0 in the new run
	var extra []record.Cell
	for _, c := range new.Cells {
		if c.Name == "b0e1/threads=8" {
			// Same name, but the scenario was redefined.
			c.Params = append([]experiment.Param(nil), c.Params...)
			c.Params[1].Value = "2"
			c.Effective = nil
			extra = append(extra, c)
		}
	}
	kept := new.Cells[:0]
	for _, c := range new.Cells {
		if c.Name != "b0e1/threads=8" {
			kept = append(kept, c)
		}
	}
	new.Cells = append(kept, extra...)
	// Two failed repeats of b1e1/threads=1 in the new run.
	failed := 0
	for i := range new.Cells {
		if new.Cells[i].Name == "b1e1/threads=1" && failed < 2 {
			new.Cells[i].Status, new.Cells[i].Result, new.Cells[i].Error = record.CellFailed, nil, "lost connection"
			failed++
		}
	}
	c := mustCompare(t, base, new, DefaultCompareOptions())
	var names []string
	for _, cc := range c.Cells {
		names = append(names, cc.Name)
	}
	// Cells are matched by name: b0e1/threads=8, whose scenario was
	// redefined, is compared, its change listed beside it (issue 26).
	if !slices.Equal(names, []string{"b1e1/threads=1", "b1e1/threads=8", "b0e1/threads=1", "b0e1/threads=8"}) {
		t.Errorf("matched %v", names)
	}
	for _, cc := range c.Cells {
		want := []string(nil)
		if cc.Name == "b0e1/threads=8" {
			want = []string{"innodb_flush_log_at_trx_commit 1 -> 2"}
		}
		if !slices.Equal(cc.Changes, want) {
			t.Errorf("%s: changes %q, want %q", cc.Name, cc.Changes, want)
		}
	}
	var un []string
	for _, u := range c.Unmatched {
		un = append(un, u.Side+":"+u.Name)
	}
	if !slices.Equal(un, []string{"base:b0e0/threads=1", "base:b0e0/threads=8"}) {
		t.Errorf("unmatched %v", un)
	}
	if c.Unmatched[0].Reason != "only in the base run" {
		t.Errorf("reason %q", c.Unmatched[0].Reason)
	}
	if mc := metricOf(t, c, "b1e1/threads=1", "tps"); mc.New.N != 3 || mc.Base.N != 5 {
		t.Errorf("failed repeats counted: %+v", mc)
	}
	if !slices.ContainsFunc(c.Warnings, func(w string) bool { return strings.Contains(w, "2 of 5 new repeats failed") }) {
		t.Errorf("warnings %q", c.Warnings)
	}
}

func TestCompareRejectsBadOptions(t *testing.T) {
	t.Parallel()
	r := synthRun(1, 1, flushCells())
	for _, opt := range []CompareOptions{{Threshold: -1}, {Alpha: 1.5}, {Threshold: math.NaN()}} {
		if _, err := Compare(r, r, opt); err == nil {
			t.Errorf("%+v: no error", opt)
		}
	}
	if _, err := Compare(nil, r, DefaultCompareOptions()); err == nil {
		t.Error("nil run: no error")
	}
}

// The Markdown that goes into a pull request: heading, table, verdict line.
func TestWriteComparisonGolden(t *testing.T) {
	t.Parallel()
	cells := flushCells()
	base := synthRun(1, 6, cells)
	cells[1].tps *= 0.85
	cells[1].p99 *= 1.3
	cells[4].tps *= 1.2
	new := synthRun(2, 6, cells)
	new.Started = new.Started.Add(24 * time.Hour)
	new.Tool.Commit = "def5678"
	for _, md := range []bool{true, false} {
		c := mustCompare(t, base, new, DefaultCompareOptions())
		var out bytes.Buffer
		if err := WriteComparison(&out, c, md); err != nil {
			t.Fatal(err)
		}
		name := "compare.golden.txt"
		if md {
			name = "compare.golden.md"
		}
		golden(t, name, out.Bytes())
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateCompareGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update-compare-golden to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test ./results -update-compare-golden to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// withOLTP changes a cell's oltp options.
func withOLTP(c *record.Cell, f func(o *oltp.Options)) {
	o, _ := c.Workload.Options.(oltp.Options) // none: the zero options
	f(&o)
	c.Workload.Options = o
}
