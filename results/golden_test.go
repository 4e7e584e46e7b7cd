package results

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"benchmatrix/analysis"
	"benchmatrix/engine"
	"benchmatrix/experiment"
	"benchmatrix/observe"
	"benchmatrix/oltp"
	"benchmatrix/record"
	"benchmatrix/server"
)

var update = flag.Bool("update", false, "rewrite golden files")

const goldenDir = "testdata/golden"

// goldenFixture describes one cell run of goldenRun.
type goldenFixture struct {
	scenario, sb string // scenario name and its sync_binlog
	threads      int
	repeat       int
	tps          int64 // events per measured second before the wobble
	errors       int64 // errors in the third measured second
	stall        bool  // measured seconds 5 and 6 at zero
	failed       bool
}

// goldenRun is a small but complete run, built in memory with fixed values
// and times so that what the writer makes of it is byte for byte the same
// on every machine: scenarios sb1 (baseline) and sb0 on sync_binlog, the
// axis threads (1, 4), two repeats in the runner's order, 3 s of warm-up
// and 10 s measured per cell run, every sampled metric of observe.Columns()
// (cpu_server_pct empty, as when the server PID is unknown), one stall with
// its evidence and an injected onset, table growth, top waits, one failed
// repeat with a server log, and run notes.
func goldenRun() *record.Run {
	started := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	metrics := observe.Columns()
	o := oltp.DefaultOptions()
	o.Tables, o.TableSize, o.RandType, o.Time, o.Warmup = 2, 10000, "uniform", 10*time.Second, 3*time.Second
	r := &record.Run{
		Tool:          record.Tool{Name: "benchmatrix", Version: "v0.0.0-golden", Commit: "0123abc", GoVersion: "go1.26.0"},
		Experiment:    "golden",
		Description:   "sync_binlog 1 against 0 at 1 and 4 threads (a fixture for the golden files).\n",
		ManifestPath:  "manifests/golden.toml",
		Manifest:      "[experiment]\nname = \"golden\"\nexpect = [\"sb1 < sb0\", \"sb0 > 5 * sb1\"]\n[workload]\nname = \"oltp_read_write\"\n[scenarios]\nsb1 = { sync_binlog = 1 }\nsb0 = { sync_binlog = 0 }\n[axes]\nthreads = [1, 4]\n",
		ManifestHash:  "0000000000000000000000000000000000000000000000000000000000000000",
		Baseline:      "sb1",
		Columns:       []string{"sync_binlog", "threads"},
		MetricColumns: metrics,
		Axes:          []string{"threads"},
		ServerConfig:  []experiment.Param{{Name: "innodb_buffer_pool_size", Value: "1G"}, {Name: "log_bin", Value: "ON"}},
		Order:         "grouped",
		Status:        record.StatusFinished,
		Started:       started,
		Finished:      started.Add(3*time.Minute + 25*time.Second),
		Server: server.Info{Provider: "sandbox", Flavor: server.MariaDB, Version: "10.11.6-MariaDB-0+deb12u1",
			Address: "127.0.0.1:13306", Datadir: "/var/tmp/golden/data"},
		Host: record.Host{Hostname: "golden-host", CPUModel: "Fixture CPU @ 2.00GHz", Cores: 4, MemoryMB: 7940,
			Kernel: "6.1.0-18-amd64", Storage: "/dev/vda1", Filesystem: "ext4"},
		Notes: []string{"sampler: disk: datadir on /dev/vda1 (ext4)", "cell order: grouped, 2 repeats"},
	}
	var fixtures []goldenFixture
	tps := map[string][2]int64{"sb1/1": {410, 404}, "sb1/4": {1150, 1188}, "sb0/1": {1230, 1262}, "sb0/4": {3050, 2990}}
	for rep := 1; rep <= 2; rep++ {
		for _, sc := range []struct{ name, sb string }{{"sb1", "1"}, {"sb0", "0"}} {
			for _, th := range []int{1, 4} {
				f := goldenFixture{scenario: sc.name, sb: sc.sb, threads: th, repeat: rep,
					tps: tps[fmt.Sprintf("%s/%d", sc.name, th)][rep-1]}
				f.stall = f.scenario == "sb1" && th == 4 && rep == 1
				f.failed = f.scenario == "sb0" && th == 4 && rep == 2
				if f.scenario == "sb0" && th == 4 && rep == 1 {
					f.errors = 3
				}
				fixtures = append(fixtures, f)
			}
		}
	}
	for i, f := range fixtures {
		name := fmt.Sprintf("%s/threads=%d", f.scenario, f.threads)
		params := []experiment.Param{{Name: "sync_binlog", Value: f.sb}, {Name: "threads", Value: fmt.Sprint(f.threads)}}
		w := o
		w.Threads = f.threads
		w.RandSeed = int64(1000 + i)
		r.Plan = append(r.Plan, experiment.PlanRecord([]experiment.Cell{{Index: i, Name: name, Scenario: f.scenario, Params: params, Repeat: f.repeat,
			Workload: engine.Spec{Engine: "oltp", Options: w}, Server: []experiment.Param{{Name: "sync_binlog", Value: f.sb}}}})...)
		c := record.Cell{Name: name, Index: i, Scenario: f.scenario, Params: params, Repeat: f.repeat, Status: record.CellOK,
			Started: started.Add(time.Duration(i) * 25 * time.Second), WallSeconds: 21.5, Data: "reused",
			DrainSeconds: 0.5, WarmupSeconds: 3, Effective: map[string]string{"sync_binlog": f.sb}, Workload: engine.Spec{Engine: "oltp", Options: w}, RandSeed: w.RandSeed}
		if i == 0 {
			c.Data, c.PrepareSeconds = "loaded", 4.25
		}
		if f.failed {
			c.Status = record.CellFailed
			c.Error = "run: Error 2013 (HY000): Lost connection to MySQL server during query"
			c.ServerLog = "2026-02-03  4:07:55 0 [ERROR] mariadbd: Out of memory (Needed 1048576 bytes)\n" +
				"2026-02-03  4:07:55 0 [Note] mariadbd: ready for connections."
			r.Cells = append(r.Cells, c)
			continue
		}
		wobble := []int64{0, 12, -8, 5, -10, 7, -3, 9, -6, 4}
		res := &engine.Result{Elapsed: 10 * time.Second}
		for s := 0; s < 13; s++ {
			iv := engine.Interval{Phase: engine.PhaseWarmup, Start: time.Duration(s) * time.Second,
				End: time.Duration(s+1) * time.Second, Threads: f.threads}
			m := s - 3 // measured second
			switch {
			case m < 0:
				iv.Events = f.tps * int64(s+1) / 4 // ramp-up
			case f.stall && (m == 5 || m == 6):
				iv.Phase = engine.PhaseRun
			default:
				iv.Phase = engine.PhaseRun
				iv.Events = f.tps + wobble[m]*int64(f.threads)
			}
			iv.Reads, iv.Writes, iv.Others = 14*iv.Events, 4*iv.Events, 2*iv.Events
			if iv.Events > 0 {
				avg := float64(f.threads) * 1000 / float64(f.tps)
				iv.LatP50, iv.LatP95, iv.LatP99, iv.LatMax = avg, 1.6*avg+float64(s%3)/10, 2.4*avg, 9*avg
			}
			if m == 2 {
				iv.Errors = f.errors
			}
			c.Intervals = append(c.Intervals, iv)
			row := make([]float64, len(metrics))
			for j, col := range metrics {
				row[j] = float64(j) + float64(s)/4 + float64(f.tps)/1000
				if col == "cpu_server_pct" {
					row[j] = math.NaN()
				}
			}
			c.Metrics = append(c.Metrics, row)
			if iv.Phase == engine.PhaseRun {
				res.Events += iv.Events
				res.Reads += iv.Reads
				res.Writes += iv.Writes
				res.Others += iv.Others
				res.Errors += iv.Errors
			}
		}
		avg := float64(f.threads) * 1000 / float64(f.tps)
		res.Latency = engine.Latency{Min: avg / 4, Avg: avg, Max: 9 * avg, P50: avg, P95: 1.6 * avg, P99: 2.4 * avg, P999: 5 * avg}
		c.Result = res
		analysis.Observe(&c, metrics)
		c.Growth = &record.Growth{RowsBefore: 20000, RowsAfter: 20000, RowsExact: true,
			BytesBefore: 5 << 20, BytesAfter: 5<<20 + int64(f.threads)<<16, MaxIDBefore: 10000, MaxIDAfter: 10000}
		if f.scenario == "sb1" {
			c.Waits = []observe.WaitEvent{
				{Event: "wait/io/file/sql/binlog", Count: 4100 * int64(f.threads), Seconds: 1.234 * float64(f.threads), MaxSeconds: 0.0113, MaxInCell: true},
				{Event: "wait/io/file/innodb/innodb_log_file", Count: 8200, Seconds: 0.456},
			}
		}
		if f.stall {
			c.Stalls = &observe.StallReport{Median: float64(f.tps), Count: 1, TotalSeconds: 2, LongestSeconds: 2,
				Episodes: []observe.Episode{{Start: 5, End: 7, Zero: true}}, Text: "1 stall to zero, longest 2 s"}
			c.StallEvidence = []string{"row_lock_current_waits ↑ (0 → 4)", "dirty_pages ×3.1 (420 → 1302)", "disk_iops ×0.4 (900 → 360)"}
			c.StallCauses = []string{"stall at 5-7 s: likely cause: row lock waits 4 in the stall seconds (0 around)"}
			c.Injected = []float64{5}
			c.ObserveNotes = []string{"inject: FLUSH TABLES WITH READ LOCK for 2 s at 5 s"}
		} else {
			c.Stalls = &observe.StallReport{Median: float64(f.tps), Text: "no stalls"}
		}
		r.Cells = append(r.Cells, c)
	}
	return r
}

// writeGoldenRun writes goldenRun into dir with the writer, in the order
// the runner uses: Create, run.json, each cell appended, then run.json and
// summary.md at the end.
func writeGoldenRun(t *testing.T, dir string) *record.Run {
	t.Helper()
	r := goldenRun()
	w, err := Create(dir, r.Columns, r.MetricColumns)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cells := r.Cells
	r.Cells = nil
	if err := w.WriteRun(r); err != nil {
		t.Fatal(err)
	}
	for i := range cells {
		if err := w.AppendCell(&cells[i]); err != nil {
			t.Fatal(err)
		}
		r.Cells = append(r.Cells, cells[i])
	}
	r.Fingerprint = ComputeFingerprint(r)
	if err := w.WriteRun(r); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteSummary(r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestGolden pins the results contract: the headers of cells.csv and
// intervals.csv (other tools read them by name and position) and a whole
// summary.md. Regenerate with: go test ./results -run Golden -update
func TestGolden(t *testing.T) {
	dir := t.TempDir()
	r := writeGoldenRun(t, dir)

	cellsHeader := firstLine(t, filepath.Join(dir, CellsFile))
	intervalsHeader := firstLine(t, filepath.Join(dir, IntervalsFile))

	// docs/design.md's fixed contract, checked apart from the golden files so
	// that -update cannot accept a break of it.
	wantCells := append(append([]string{"cell", "scenario"}, r.Columns...),
		"repeat", "status", "tps", "qps", "lat_avg_ms", "lat_p95_ms", "lat_p99_ms", "lat_max_ms", "errors")
	if got := strings.Split(cellsHeader, ","); len(got) < len(wantCells) || !slices.Equal(got[:len(wantCells)], wantCells) {
		t.Errorf("cells.csv header %q does not start with the contract's columns %q", cellsHeader, strings.Join(wantCells, ","))
	}
	wantIv := []string{"cell", "repeat", "t", "phase", "tps", "qps", "lat_p95_ms", "errors"}
	got := strings.Split(intervalsHeader, ",")
	if len(got) < len(wantIv)+len(r.MetricColumns) || !slices.Equal(got[:len(wantIv)], wantIv) ||
		!slices.Equal(got[len(got)-len(r.MetricColumns):], r.MetricColumns) {
		t.Errorf("intervals.csv header %q does not start with the contract's columns %q and end with observe.Columns()",
			intervalsHeader, strings.Join(wantIv, ","))
	}

	summary, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	summary = normalizeSummary(summary)
	if bytes.Contains(summary, []byte(dir)) {
		t.Errorf("summary.md names the temporary directory %s", dir)
	}

	t.Run("cells.csv", func(t *testing.T) { checkGolden(t, "cells.header.csv", []byte(cellsHeader+"\n")) })
	t.Run("intervals.csv", func(t *testing.T) { checkGolden(t, "intervals.header.csv", []byte(intervalsHeader+"\n")) })
	t.Run("summary.md", func(t *testing.T) { checkGolden(t, "summary.md", summary) })
}

// normalizeSummary replaces what WriteMarkdown takes from the machine
// rather than from the Run: the tool line's GOOS/GOARCH.
func normalizeSummary(b []byte) []byte {
	return bytes.Replace(b, []byte(", "+runtime.GOOS+"/"+runtime.GOARCH+") |\n"), []byte(", GOOS/GOARCH) |\n"), 1)
}

func firstLine(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	if !sc.Scan() {
		t.Fatalf("%s: empty (%v)", path, sc.Err())
	}
	return sc.Text()
}

// checkGolden compares got with testdata/golden/name, or rewrites the file
// under -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(goldenDir, name)
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("updated %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v\nto create it: go test ./results -run Golden -update", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the writer makes now (-golden +got):\n%s\nif the change is intended: go test ./results -run Golden -update",
			path, lineDiff(string(want), string(got)))
	}
}

// lineDiff is a unified-style diff of two texts by lines (a longest common
// subsequence), with three lines of context around each change and a
// "@@ -line +line @@" header before each hunk.
func lineDiff(a, b string) string {
	x, y := splitLines(a), splitLines(b)
	// lcs[i][j] is the LCS length of x[i:] and y[j:].
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind   byte // ' ', '-' or '+'
		text   string
		la, lb int // line numbers in a and b where the op stands, from 1
	}
	var ops []op
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			ops = append(ops, op{' ', x[i], i + 1, j + 1})
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', x[i], i + 1, j + 1})
			i++
		default:
			ops = append(ops, op{'+', y[j], i + 1, j + 1})
			j++
		}
	}
	const context = 3
	show := make([]bool, len(ops))
	for k, o := range ops {
		if o.kind != ' ' {
			for n := max(k-context, 0); n <= k+context && n < len(ops); n++ {
				show[n] = true
			}
		}
	}
	var out strings.Builder
	for k, o := range ops {
		if !show[k] {
			continue
		}
		if k == 0 || !show[k-1] {
			fmt.Fprintf(&out, "@@ -%d +%d @@\n", o.la, o.lb)
		}
		fmt.Fprintf(&out, "%c%s\n", o.kind, o.text)
	}
	return out.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// A diff that cannot show a change would make every golden failure
// unreadable: check the helper itself.
func TestGoldenLineDiff(t *testing.T) {
	t.Parallel()
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	b := "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\n12\nthirteen\n"
	got := lineDiff(a, b)
	want := "@@ -2 +2 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n@@ -10 +10 @@\n 10\n 11\n 12\n+thirteen\n"
	if got != want {
		t.Errorf("lineDiff:\n%s\nwant:\n%s", got, want)
	}
	if d := lineDiff(a, a); d != "" {
		t.Errorf("lineDiff of equal texts: %q", d)
	}
}
