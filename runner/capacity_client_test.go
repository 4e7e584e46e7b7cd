package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"benchmatrix/capacity"
	"benchmatrix/capacity/cellslo"
	"benchmatrix/catalog"
	"benchmatrix/engine"
	"benchmatrix/oltp"
	"benchmatrix/record"
	"benchmatrix/results"
	"benchmatrix/server"
)

// The client-bound target: half the arrivals within 50 ms. A server that
// answers a point select in a few milliseconds meets it at the rates
// offered here, even on a loaded host; a client frozen most of the time
// does not.
const clientSLO = "p50 < 50ms"

// A frozen client: a helper process stops this test process (every thread
// of it, the load generator's included) for freezeStop, lets it run for
// freezeRun, and again, as a scheduler that gives the client no CPU for
// long stretches would. Arrivals due while it is stopped are taken late by
// idle workers when it runs again: the client's own delay, no server in
// it: of the arrivals due in a 330 ms cycle, those due more than 50 ms
// before the resume (about three in four) wait past the target before a
// worker takes them. A loaded host only lengthens the stretches (a late
// sleep), so the verdicts below do not depend on the host's load.
const (
	freezeStop = "0.3"
	freezeRun  = "0.03"
)

// clientFreezer starts the helper; stop ends it, leaving this process running.
// The helper ends by itself after limit, running the process again first.
type clientFreezer struct{ cmd *exec.Cmd }

func startClientFreezer(t *testing.T, limit time.Duration) *clientFreezer {
	t.Helper()
	script := fmt.Sprintf(`p=%d; end=$(( $(date +%%s) + %d ))
trap 'kill -CONT $p; exit 0' TERM INT
while [ $(date +%%s) -lt $end ]; do kill -STOP $p; sleep %s; kill -CONT $p; sleep %s; done
kill -CONT $p`, os.Getpid(), int(limit.Seconds())+1, freezeStop, freezeRun)
	cmd := exec.Command("sh", "-c", script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f := &clientFreezer{cmd: cmd}
	t.Cleanup(f.stop)
	return f
}

func (f *clientFreezer) stop() {
	if f.cmd.ProcessState != nil {
		return
	}
	_ = f.cmd.Process.Signal(os.Interrupt)
	_ = f.cmd.Wait()
}

// TestCapacityClientBoundOnSandbox is issue 30's honest open loop on a real
// server: a client that cannot keep up is told apart from a slow server.
//
//   - client-bound: point selects at 40/s on 16 threads, the client frozen
//     most of the time (startClientFreezer): the step misses the target, and is
//     judged client-bound (its own delay alone made it miss), saying so;
//   - server-bound: inserts at 60/s on 1 thread with sync_binlog = 1 and
//     innodb_flush_log_at_trx_commit = 1 on a disk capped at 100 write IOPS
//     (the slow-disk preset's), far above what its fsyncs allow: the step
//     misses and is not client-bound;
//   - a search whose client freezes above 30/s: the lowest missing rate is
//     client-bound, the outcome says so, and cells.csv's capacity_slo and
//     the Conclusion blame the client, not the server.
//
// Only verdicts and flags are checked, no timing.
func TestCapacityClientBoundOnSandbox(t *testing.T) {
	needServer(t)
	ctx := context.Background()
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	sb, err := server.StartSandbox(sctx, server.SandboxConfig{Startup: []server.Setting{{Name: "log_bin", Value: "binlog"}}})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Stop(context.Background()) })
	cfg := sb.Endpoint()
	db := openSandboxDB(t, cfg)
	if _, err := db.Exec("CREATE DATABASE IF NOT EXISTS sbtest"); err != nil {
		t.Fatal(err)
	}
	cfg.DBName = "sbtest"
	o := oltp.DefaultOptions()
	o.Workload, o.Tables, o.TableSize, o.AutoInc = "oltp_point_select", 1, 1000, false
	o.ForcedShutdown = DefaultGrace
	if err := oltp.Prepare(ctx, cfg, o, nil); err != nil {
		t.Fatal(err)
	}
	slo, err := capacity.ParseSLO(clientSLO)
	if err != nil {
		t.Fatal(err)
	}
	probeOf := func(o oltp.Options) capacity.Prober {
		return cellslo.StepProber(oltp.Workload{}, cfg, engine.Spec{Engine: "oltp", Options: o}, slo, testWriter{t})
	}
	reads := o
	reads.Threads, reads.RandSeed = 16, 11
	readProbe := probeOf(reads)
	const win = 4 * time.Second

	// A client frozen most of the time.
	f := startClientFreezer(t, win+cellslo.StepWarmup+time.Minute)
	st, err := readProbe(ctx, 40, win)
	f.stop()
	if err != nil {
		t.Fatal(err)
	}
	capacity.Judge(slo, &st)
	t.Logf("frozen client, 40/s: %s: %s (over %d, the client's %d, queued %d)", st.Verdict, st.Why, st.Over, st.ClientOver, st.Backlog)
	if st.Verdict != capacity.ClientBound || !strings.Contains(st.Why, "the client could not keep up") {
		t.Errorf("a frozen client at 40/s: %s (%s); want %s, blaming the client", st.Verdict, st.Why, capacity.ClientBound)
	}

	// A slow server: the disk capped, each commit fsyncing twice.
	if err := server.CheckLimitSupport(catalog.LimitSet{DiskWriteIOPS: 100}); err != nil {
		t.Logf("no server-bound case: %v", err)
	} else {
		if _, err := sb.SetLimits(ctx, catalog.LimitSet{DiskWriteIOPS: 100}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("SET GLOBAL sync_binlog = 1, GLOBAL innodb_flush_log_at_trx_commit = 1"); err != nil {
			t.Fatal(err)
		}
		ins := o
		ins.Workload, ins.Threads, ins.RandSeed = "oltp_insert", 1, 13
		st, err := probeOf(ins)(ctx, 60, win)
		if err != nil {
			t.Fatal(err)
		}
		capacity.Judge(slo, &st)
		t.Logf("slow disk, 60/s: %s: %s (over %d, the client's %d, queued %d)", st.Verdict, st.Why, st.Over, st.ClientOver, st.Backlog)
		if st.Verdict != capacity.Misses || strings.Contains(st.Why, "client") {
			t.Errorf("inserts at 60/s on a 100-IOPS disk: %s (%s); want %s, the server's", st.Verdict, st.Why, capacity.Misses)
		}
		if _, err := sb.SetLimits(ctx, catalog.LimitSet{}); err != nil {
			t.Fatal(err)
		}
	}

	// A search whose client cannot keep up above 30/s.
	const clientMax = 30
	probe := func(ctx context.Context, rate float64, win time.Duration) (capacity.Step, error) {
		if rate > clientMax {
			f := startClientFreezer(t, win+cellslo.StepWarmup+time.Minute)
			defer f.stop()
		}
		return readProbe(ctx, rate, win)
	}
	scfg := capacity.Config{SLO: slo, Start: 20, Precision: 0.5, Retests: 0, MaxSteps: 6, StepMin: 2 * time.Second, StepMax: 3 * time.Second}.WithDefaults()
	scfg.Retests = 0
	out, err := capacity.Search(ctx, scfg, probe)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range out.Steps {
		t.Logf("search: %s/s: %s: %s", capacity.FmtRate(s.Rate), s.Verdict, s.Why)
	}
	t.Logf("search: %s, capacity %s/s, bracket %s-%s/s, client-bound %v", out.Status, capacity.FmtRate(out.Capacity), capacity.FmtRate(out.Low), capacity.FmtRate(out.High), out.ClientBound)
	if !out.ClientBound || out.High <= clientMax || out.Capacity > clientMax {
		t.Fatalf("the search's answer %s/s (lowest missing %s/s) is not flagged client-bound above %d/s", capacity.FmtRate(out.Capacity), capacity.FmtRate(out.High), clientMax)
	}
	rec := &record.CellCapacity{SLO: slo, Searched: true, Search: &out, Rate: out.Capacity,
		Run: &capacity.Step{Rate: out.Capacity, Events: 1000, Verdict: capacity.Meets}}
	if text := rec.Text(); !strings.Contains(text, "the client could not keep up above it") {
		t.Errorf("cells.csv's capacity_slo %q does not blame the client", text)
	}
	run := &record.Run{Experiment: "client", Cells: []record.Cell{{Name: "reads", Scenario: "reads", Repeat: 1, Status: record.CellOK,
		Result: &engine.Result{Elapsed: win, Events: 1000}, Capacity: rec}}}
	var b bytes.Buffer
	results.WriteConclusion(&b, run)
	if !strings.Contains(b.String(), "the client could not keep up above the capacity found") || !strings.Contains(b.String(), "the limit found may be the client's, not the server's") {
		t.Errorf("the Conclusion does not blame the client:\n%s", b.String())
	}
}
