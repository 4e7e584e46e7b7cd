package tpcc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"benchmatrix/sqlconn"
)

// BenchmarkVsSysbenchTPCC is the tpcc counterpart of bench-vs-sysbench:
// sysbench 1.0.20 with sysbench-tpcc's tpcc.lua and ours, side by side on
// one sandbox (each in its own database), the same shape. Before the timer:
// both prepares (their times' ratio is reported as prepare-x). Then rounds
// of runs of the same length, interleaved: theirs,
// ours as `benchmatrix oltp tpcc.lua` runs it (the command's GOMAXPROCS
// policy, benchProcs, so that its workers use blocking sockets), then ours
// on the netpoller (no reserver). It reports the medians over the rounds
// of ours/theirs, each measured side by side in the same round: tps
// (tps-x-blocking, tps-x-netpoller) and client CPU per transaction
// (cpu-x-blocking, cpu-x-netpoller). A measurement, run when asked:
//
//	go test ./tpcc -run '^$' -bench VsSysbenchTPCC -benchtime 1x -timeout 60m
//
// (1x: the prepare is the costly part, and each b.N adds its rounds).
// BENCHMATRIX_TPCC_SHAPE overrides the shape ("tables=1 scale=2 threads=4
// time=30 rounds=3"); the -v log has each round's figures.
func BenchmarkVsSysbenchTPCC(b *testing.B) {
	dir := tpccLuaDir(b)
	shape := map[string]int{"tables": 1, "scale": 2, "threads": 4, "time": 30, "rounds": 3}
	for _, kv := range strings.Fields(os.Getenv("BENCHMATRIX_TPCC_SHAPE")) {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.Atoi(v)
		if _, ok := shape[k]; !ok || err != nil {
			b.Fatalf("BENCHMATRIX_TPCC_SHAPE: %q", kv)
		}
		shape[k] = n
	}
	line := []string{fmt.Sprintf("--tables=%d", shape["tables"]), fmt.Sprintf("--scale=%d", shape["scale"]),
		fmt.Sprintf("--threads=%d", shape["threads"])}
	runLine := append(append([]string{}, line...), fmt.Sprintf("--time=%d", shape["time"]), "--report-interval=10")
	sb := startSandbox(b)
	theirsCfg, _ := testDB(b, sb, "sbt")
	oursCfg, ours := testDB(b, sb, "ours")
	ctx := context.Background()
	b.Logf("shape %v; load before: %s", shape, loadavg())

	// Prepare: theirs, then ours.
	start := time.Now()
	runSysbench(b, dir, theirsCfg, "./tpcc.lua", append(append([]string{}, line...), "prepare")...)
	theirPrepare := time.Since(start)
	var errOut bytes.Buffer
	start = time.Now()
	if code := Main(ctx, cliArgs(oursCfg, "tpcc.lua", append(append([]string{}, line...), "prepare")...), &bytes.Buffer{}, &errOut); code != 0 {
		b.Fatalf("prepare: %d %s", code, errOut.String())
	}
	ourPrepare := time.Since(start)
	rows := float64(0)
	for _, k := range tableKinds {
		rows += float64(count(b, ours, "SELECT COUNT(*) FROM "+k+"1")) * float64(shape["tables"])
	}
	const wait = 30 * time.Second // sysbench-tpcc's fixed "Waiting on tables 30 sec"
	b.Logf("prepare %.0f rows: sysbench-tpcc %.1f s (%.0f rows/s; %.0f rows/s without its 30 s wait), ours %.1f s (%.0f rows/s); load %s",
		rows, theirPrepare.Seconds(), rows/theirPrepare.Seconds(), rows/(theirPrepare-wait).Seconds(),
		ourPrepare.Seconds(), rows/ourPrepare.Seconds(), loadavg())

	tpsRE := regexp.MustCompile(`transactions:\s+(\d+)\s+\(([0-9.]+) per sec`)
	modes := []struct {
		name  string
		procs sqlconn.ProcReserver
	}{{"blocking", benchProcs{}}, {"netpoller", nil}}
	tpsRatio, cpuRatio := make([][]float64, len(modes)), make([][]float64, len(modes))
	b.ResetTimer()
	for round := 1; round <= shape["rounds"]*b.N; round++ {
		cmd := exec.Command("sysbench", cliArgs(theirsCfg, "./tpcc.lua", append(append([]string{}, runLine...), "run")...)...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			b.Fatalf("sysbench run: %v\n%s", err, out.String())
		}
		m := tpsRE.FindStringSubmatch(out.String())
		if m == nil {
			b.Fatalf("sysbench run: %s", out.String())
		}
		theirEvents, _ := strconv.ParseFloat(m[1], 64)
		theirTPS, _ := strconv.ParseFloat(m[2], 64)
		theirCPU := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()

		theirMs := theirCPU.Seconds() * 1000 / theirEvents
		b.Logf("round %d: sysbench-tpcc %.1f tps, %.3f ms client CPU per transaction; load %s", round, theirTPS, theirMs, loadavg())
		for i, mode := range modes {
			before := rusage()
			var ourOut, ourErr bytes.Buffer
			if code := MainWith(ctx, cliArgs(oursCfg, "tpcc.lua", append(append([]string{}, runLine...), "--format=json", "run")...), &ourOut, &ourErr, mode.procs); code != 0 {
				b.Fatalf("run: %d %s", code, ourErr.String())
			}
			ourCPU := rusage() - before
			res := parseJSONResult(b, ourOut.Bytes())
			ourMs := ourCPU.Seconds() * 1000 / float64(res.Sysbench.Events)
			b.Logf("round %d: ours (%s) %.1f tps (NOPM %.0f, TPM %.0f), %.3f ms client CPU per transaction: tps x%.2f, CPU x%.2f; load %s",
				round, mode.name, res.Sysbench.TPS(), res.NOPM, res.TPM, ourMs, res.Sysbench.TPS()/theirTPS, ourMs/theirMs, loadavg())
			tpsRatio[i] = append(tpsRatio[i], res.Sysbench.TPS()/theirTPS)
			cpuRatio[i] = append(cpuRatio[i], ourMs/theirMs)
		}
	}
	b.StopTimer()
	b.ReportMetric(theirPrepare.Seconds()/ourPrepare.Seconds(), "prepare-x")
	for i, mode := range modes {
		b.ReportMetric(median(tpsRatio[i]), "tps-x-"+mode.name)
		b.ReportMetric(median(cpuRatio[i]), "cpu-x-"+mode.name)
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// benchProcs is cmd/internal/procs's policy, which a test of this package
// cannot import: GOMAXPROCS one more than the run's workers while it
// runs, then back.
type benchProcs struct{}

func (benchProcs) Reserve(n int) func() {
	before := runtime.GOMAXPROCS(0)
	if n+1 > before {
		runtime.GOMAXPROCS(n + 1)
	}
	return func() { runtime.GOMAXPROCS(before) }
}

func rusage() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
