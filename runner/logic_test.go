package runner

// The runner's logic on fakes (fake_test.go): restart choice, data reuse,
// snapshot restore, resume, failure accounting, ordering, drain and the
// interrupt path, with no server on the machine.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"benchmatrix/catalog"
	"benchmatrix/exitcode"
	"benchmatrix/experiment"
	"benchmatrix/oltp"
	"benchmatrix/record"
)

// fakePlan resolves src for the fake server's flavor.
func fakePlan(t *testing.T, src string) *experiment.Plan {
	t.Helper()
	return planWith(t, src, experiment.Flags{Flavor: catalog.MariaDB})
}

const fakeHead = `
[experiment]
duration = "2s"
warmup = "0s"
observe = false
`

func costs(cells []record.Cell) string {
	var out []string
	for _, c := range cells {
		out = append(out, c.Name+":"+c.Change.Cost())
	}
	return strings.Join(out, " ")
}

func planCosts(p *experiment.Plan) string {
	var out []string
	for _, c := range p.Cells {
		out = append(out, c.Name+":"+c.Change.Cost())
	}
	return strings.Join(out, " ")
}

// The runner does, cell by cell, what the plan says each change costs:
// restarts for restart-only values only, reloads only when the data shape
// changed or the workload changed the data.
func TestPlanAndRunAgreeOnChanges(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		fakeHead + "order = \"written\"\n[workload]\nname = \"oltp_read_only\"\ntable_size = 1000\n[axes]\ninnodb_doublewrite = [\"ON\", \"OFF\"]\nsync_binlog = [0, 1]\n",
		fakeHead + "repeats = 2\n[workload]\nname = \"oltp_insert\"\n[scenarios]\nb1 = { sync_binlog = 1, log_bin = \"ON\" }\nb0 = { sync_binlog = 0 }\n",
		fakeHead + "cold = true\n[workload]\nname = \"oltp_point_select\"\ntable_size = 1000\n[axes]\nthreads = [1, 2]\ntable_size = [1000, 2000]\n",
	} {
		rig := newFakeRig()
		plan := fakePlan(t, src)
		if _, err := Run(context.Background(), plan, rig.cfg); err != nil {
			t.Fatal(err)
		}
		if got, want := costs(rig.sink.cells), planCosts(plan); got != want {
			t.Errorf("manifest:\n%s\nrun did  %s\nplan said %s", src, got, want)
		}
	}
}

// Read-only cells share loaded data; a workload that changes the data makes
// the next cell load again; a large shape is restored from its snapshot.
func TestDataReuseReloadAndSnapshot(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ src, want string }{
		{fakeHead + "[workload]\nname = \"oltp_read_only\"\ntable_size = 1000\n[axes]\nthreads = [1, 2, 4]\n", "loaded reused reused"},
		{fakeHead + "repeats = 3\n[workload]\nname = \"oltp_insert\"\nauto_inc = true\ntable_size = 1000\n", "loaded loaded loaded"},
		{fakeHead + "repeats = 3\n[workload]\nname = \"oltp_insert\"\nauto_inc = true\ntable_size = 100000\n", "loaded restored restored"},
	} {
		rig := newFakeRig()
		if _, err := Run(context.Background(), fakePlan(t, c.src), rig.cfg); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, cell := range rig.sink.cells {
			got = append(got, cell.Data)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%s\ndata: %v, want %s", c.src, got, c.want)
		}
	}
}

// A failed cell is counted, kept and does not stop the matrix; the run's
// error says how many failed and maps to exit code 1.
func TestFailureAccounting(t *testing.T) {
	t.Parallel()
	rig := newFakeRig()
	rig.wl.fail = func(o oltp.Options) error {
		if o.Threads == 2 {
			return errors.New("deadlock storm")
		}
		return nil
	}
	plan := fakePlan(t, fakeHead+"[workload]\nname = \"oltp_read_only\"\ntable_size = 1000\n[axes]\nthreads = [1, 2, 4]\n")
	run, err := Run(context.Background(), plan, rig.cfg)
	if !errors.Is(err, ErrCellsFailed) || exitcode.Of(err) != exitcode.Failure {
		t.Fatalf("err = %v (exit %d)", err, exitcode.Of(err))
	}
	var got []string
	for _, c := range run.Cells {
		got = append(got, c.Name+":"+c.Status)
	}
	if want := "threads=1:ok threads=2:failed threads=4:ok"; strings.Join(got, " ") != want {
		t.Fatalf("cells %v, want %s", got, want)
	}
	if !strings.Contains(run.Cells[1].Error, "deadlock storm") || run.Status != record.StatusFinished || !rig.sink.summary {
		t.Fatalf("failed cell %q, run status %s, summary %v", run.Cells[1].Error, run.Status, rig.sink.summary)
	}
}

// A server that dies in a cell fails that cell as "the server died", is
// brought back, and the next cell loads its data again.
func TestDeadServerIsRecovered(t *testing.T) {
	t.Parallel()
	rig := newFakeRig()
	rig.wl.fail = func(o oltp.Options) error {
		if o.Threads == 2 {
			rig.srv.mu.Lock()
			rig.srv.dead = true
			rig.srv.mu.Unlock()
			return errors.New("invalid connection")
		}
		return nil
	}
	plan := fakePlan(t, fakeHead+"[workload]\nname = \"oltp_read_only\"\ntable_size = 1000\n[axes]\nthreads = [1, 2, 4]\n")
	run, _ := Run(context.Background(), plan, rig.cfg)
	if len(run.Cells) != 3 || !strings.HasPrefix(run.Cells[1].Error, "the server died") || run.Cells[1].ServerLog == "" {
		t.Fatalf("cells: %+v", run.Cells)
	}
	if run.Cells[2].Status != record.CellOK || run.Cells[2].Data != "loaded" || rig.srv.restarts != 1 {
		t.Fatalf("after recovery: status %s, data %s, restarts %d", run.Cells[2].Status, run.Cells[2].Data, rig.srv.restarts)
	}
}

// A variable the catalogue calls dynamic but the server refuses as read
// only is moved to the startup options: the server restarts with it.
func TestReadOnlyVariableBecomesStartupOption(t *testing.T) {
	t.Parallel()
	rig := newFakeRig()
	rig.onStart = func(s *fakeServer) { s.readOnly["innodb_flush_log_at_trx_commit"] = true }
	plan := fakePlan(t, fakeHead+"[workload]\nname = \"oltp_read_only\"\ntable_size = 1000\n[axes]\ninnodb_flush_log_at_trx_commit = [1, 2]\n")
	run, err := Run(context.Background(), plan, rig.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if run.Cells[0].Effective["innodb_flush_log_at_trx_commit"] != "1" || run.Cells[1].Effective["innodb_flush_log_at_trx_commit"] != "2" {
		t.Fatalf("effective: %v / %v", run.Cells[0].Effective, run.Cells[1].Effective)
	}
	if rig.srv.restarts != 2 || !run.Cells[1].Restarted {
		t.Fatalf("restarts %d (want one per cell), log %v", rig.srv.restarts, rig.srv.log)
	}
	// The cells say why they did other than the plan (change.go).
	for i, c := range run.Cells {
		if ov := strings.Join(c.Change.Overrides, "; "); !strings.Contains(ov, "refused to SET innodb_flush_log_at_trx_commit as read-only") {
			t.Errorf("cell %d: overrides %q", i, ov)
		}
	}
	if p, r := plan.Cells[1].Change.Cost(), run.Cells[1].Change.Cost(); p != "set" || r != "restart" {
		t.Errorf("second cell: plan %s, run %s; want set, then restart", p, r)
	}
}

// Resume keeps the finished cell runs and runs only the rest, in order.
func TestResumeRunsOnlyTheRest(t *testing.T) {
	t.Parallel()
	src := fakeHead + "repeats = 2\n[workload]\nname = \"oltp_read_only\"\ntable_size = 1000\n[axes]\nthreads = [1, 2]\n"
	first := newFakeRig()
	stop := 0
	ctx, cancel := context.WithCancel(context.Background())
	first.wl.fail = func(oltp.Options) error {
		if stop++; stop == 3 {
			cancel()
		}
		return nil
	}
	run, err := Run(ctx, fakePlan(t, src), first.cfg)
	if !errors.Is(err, context.Canceled) || exitcode.Of(err) != exitcode.Interrupted || run.Status != record.StatusInterrupted {
		t.Fatalf("interrupted run: err %v, status %s", err, run.Status)
	}
	if len(run.Cells) != 2 {
		t.Fatalf("the interrupted cell was kept: %d cells", len(run.Cells))
	}
	second := newFakeRig()
	second.cfg.Resume = run
	resumed, err := Run(context.Background(), fakePlan(t, src), second.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(second.wl.runs, " "); got != "oltp_read_only/t1 oltp_read_only/t2" {
		t.Fatalf("resumed run ran %s", got)
	}
	var names []string
	for _, c := range resumed.Cells {
		names = append(names, fmt.Sprintf("%s#%d", c.Name, c.Repeat))
	}
	if want := "threads=1#1 threads=2#1 threads=1#2 threads=2#2"; strings.Join(names, " ") != want {
		t.Fatalf("cells %v, want %s", names, want)
	}
	// A resumed run that has nothing left says so and runs nothing.
	third := newFakeRig()
	third.cfg.Resume = resumed
	if _, err := Run(context.Background(), fakePlan(t, src), third.cfg); err != nil || third.starts != 0 {
		t.Fatalf("finished run resumed: err %v, %d server starts", err, third.starts)
	}
	// A changed plan cannot resume.
	other := newFakeRig()
	other.cfg.Resume = resumed
	_, err = Run(context.Background(), fakePlan(t, strings.Replace(src, "[1, 2]", "[1, 3]", 1)), other.cfg)
	if exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("resume of another manifest: %v", err)
	}
}

// The drain waits for dirty pages, nudging innodb_max_dirty_pages_pct to 0
// and raising the I/O budget for the wait, and putting all back after.
func TestDrainNudgesAndRestores(t *testing.T) {
	t.Parallel()
	rig := newFakeRig()
	rig.onStart = func(s *fakeServer) { s.dirty = []int64{0, 5000, 2000, 10} }
	plan := fakePlan(t, fakeHead+"[workload]\nname = \"oltp_read_only\"\ntable_size = 1000\n[axes]\nthreads = [1, 2]\n")
	run, err := Run(context.Background(), plan, rig.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if run.Cells[1].DirtyPagesAtStart != 10 || run.Cells[1].DrainSeconds <= 0 {
		t.Fatalf("drain: %d dirty pages at start after %.2fs", run.Cells[1].DirtyPagesAtStart, run.Cells[1].DrainSeconds)
	}
	log := strings.Join(rig.srv.log, "; ")
	want := "set innodb_io_capacity_max=40000; set innodb_io_capacity=20000; set innodb_max_dirty_pages_pct=0; " +
		"set innodb_max_dirty_pages_pct=90; set innodb_io_capacity=200; set innodb_io_capacity_max=2000"
	if !strings.Contains(log, want) || rig.srv.globals["innodb_max_dirty_pages_pct"] != "90" || rig.srv.globals["innodb_io_capacity"] != "200" {
		t.Fatalf("nudges not set in order and restored in reverse:\n%s\nwant %s", log, want)
	}
}

// Variables the server lacks are refused before the first cell, by name,
// with exit code 2.
func TestUnknownVariableRefused(t *testing.T) {
	t.Parallel()
	rig := newFakeRig()
	plan := fakePlan(t, fakeHead+"[workload]\nname = \"oltp_read_only\"\ntable_size = 1000\n[axes]\ninnodb_flush_log_at_trx_comit = [1, 2]\n")
	_, err := Run(context.Background(), plan, rig.cfg)
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "innodb_flush_log_at_trx_comit") || len(rig.wl.runs) != 0 {
		t.Fatalf("err %v, runs %v", err, rig.wl.runs)
	}
}

// The run accounts for its own wall time: server starts, data, drain,
// warm-up, measurement and the rest add up to the wall time.
func TestRunAccountsForItsTime(t *testing.T) {
	t.Parallel()
	rig := newFakeRig()
	plan := fakePlan(t, fakeHead+"repeats = 2\n[workload]\nname = \"oltp_read_only\"\ntable_size = 1000\n[axes]\ninnodb_doublewrite = [\"ON\", \"OFF\"]\n")
	run, err := Run(context.Background(), plan, rig.cfg)
	if err != nil {
		t.Fatal(err)
	}
	tm := run.Time
	if tm == nil || tm.MeasuredSeconds != 8 || tm.WallSeconds <= 0 {
		t.Fatalf("time split %+v", tm)
	}
	sum := tm.ServerSeconds + tm.DataSeconds + tm.DrainSeconds + tm.PrewarmSeconds + tm.WarmupSeconds + tm.MeasuredSeconds + tm.OtherSeconds
	// The fake measures 2 s windows in no time: the "measured" part exceeds
	// the wall time, and the rest is clamped at 0.
	if tm.OtherSeconds != 0 || sum < tm.MeasuredSeconds {
		t.Fatalf("split does not add up: %+v", tm)
	}
}
