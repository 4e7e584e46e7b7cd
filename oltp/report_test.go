package oltp

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchmatrix/engine"
)

// updateGolden rewrites testdata/*.golden: go test ./oltp -run 'Format|Summary|Report' -update-golden
var updateGolden = flag.Bool("update-golden", false, "rewrite oltp/testdata/*.golden from the current output")

// checkGolden compares got with testdata/name, or rewrites it under -update-golden.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-golden to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -update-golden to accept):\n%s", path, lineDiff(string(want), got))
	}
}

// lineDiff shows the first differing lines, with visible line ends.
func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(wl), len(gl)) && shown < 10; i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n  want " + strconv.Quote(w) + "\n  got  " + strconv.Quote(g) + "\n")
			shown++
		}
	}
	return b.String()
}

// sampleReportResult is a realistic result: §3.3's MariaDB run (2 threads, 10 s).
func sampleReportResult() *Result {
	o := DefaultOptions()
	o.Threads = 2
	return &Result{Options: o, Result: engine.Result{
		Elapsed:    10001400 * time.Microsecond,
		Events:     10096,
		Reads:      141358,
		Writes:     40386,
		Others:     20193,
		Errors:     1,
		Reconnects: 0,
		Latency: engine.Latency{Min: 0.76, Avg: 1.98, Max: 14.10, Sum: 19988.49,
			P50: 1.89, P95: 3.75, P99: 5.57, P999: 9.91, Pct: 3.75},
		Fairness: engine.Fairness{EventsAvg: 5048, EventsStddev: 81, TimeAvg: 9.9942, TimeStddev: 0.001},
	}}
}

func sampleReportInterval() Interval {
	return Interval{Interval: engine.Interval{Phase: engine.PhaseRun, Start: 4 * time.Second, End: 5 * time.Second, Threads: 2,
		Events: 1073, Reads: 15037, Writes: 4296, Others: 2147, Errors: 0, Reconnects: 0,
		LatP50: 1.8, LatP95: 2.86, LatP99: 4.1, LatMax: 9.2, LatPct: 2.86}}
}

func TestFormatIntervalMatchesSysbench(t *testing.T) {
	// §3.2's real line, from counts that give the same rates.
	iv := Interval{Interval: engine.Interval{Phase: engine.PhaseRun, Start: 0, End: 5 * time.Second, Threads: 2,
		Events: 5367, Reads: 75184, Writes: 21479, Others: 10738, Errors: 1, LatPct: 2.86}}
	got := FormatInterval(iv, 95)
	want := "[ 5s ] thds: 2 tps: 1073.40 qps: 21480.20 (r/w/o: 15036.80/4295.80/2147.60) lat (ms,95%): 2.86 err/s: 0.20 reconn/s: 0.00"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestFormatIntervalGolden(t *testing.T) {
	var b strings.Builder
	iv := sampleReportInterval()
	b.WriteString(FormatInterval(iv, 95) + "\n")
	b.WriteString(FormatInterval(iv, 99.9) + "\n")
	w := iv
	w.Phase, w.Start, w.End = engine.PhaseWarmup, 0, time.Second+400*time.Millisecond
	w.Start = 400 * time.Millisecond
	b.WriteString(FormatInterval(w, 95) + "\n")
	// Sub-second intervals keep distinct labels.
	for i, step := range []time.Duration{500 * time.Millisecond, 250 * time.Millisecond, 10 * time.Millisecond, time.Millisecond} {
		s := iv
		s.Start = time.Duration(i+3) * step
		s.End = s.Start + step
		b.WriteString(FormatInterval(s, 95) + "\n")
	}
	// An empty interval (no time, no events) prints zeros, never NaN.
	b.WriteString(FormatInterval(Interval{Interval: engine.Interval{Threads: 4}}, 95) + "\n")
	r := iv
	r.Queue, r.Late, r.Dropped = 17, 3, 1
	b.WriteString(FormatQueue(r) + "\n")
	checkGolden(t, "interval.golden", b.String())
	if strings.Contains(b.String(), "NaN") || strings.Contains(b.String(), "Inf") {
		t.Fatal("NaN or Inf in output")
	}
}

func TestSummaryGolden(t *testing.T) {
	cases := map[string]func(r *Result){
		"summary.golden": func(r *Result) {},
		"summary_percentile0.golden": func(r *Result) {
			r.Options.Percentile = 0
		},
		"summary_percentile5.golden": func(r *Result) {
			r.Options.Percentile = 5
		},
		"summary_percentile100.golden": func(r *Result) {
			r.Options.Percentile = 100
		},
		"summary_percentile99_9.golden": func(r *Result) {
			r.Options.Percentile = 99.9
		},
		"summary_rate_warmup.golden": func(r *Result) {
			r.Options.Rate = 1000
			r.Options.Warmup = 30 * time.Second
			r.Late, r.Dropped = 12, 0
		},
		"summary_empty.golden": func(r *Result) {
			*r = Result{Options: DefaultOptions()}
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := sampleReportResult()
			edit(r)
			var b bytes.Buffer
			WriteSummary(&b, r)
			WriteExtras(&b, r)
			checkGolden(t, name, b.String())
		})
	}
}

func TestSummaryLatencyLinesAre53Columns(t *testing.T) {
	for _, pct := range []float64{0, 1, 5, 95, 99, 99.9, 100} {
		r := sampleReportResult()
		r.Options.Percentile = pct
		var b bytes.Buffer
		WriteSummary(&b, r)
		in := false
		for _, line := range strings.Split(b.String(), "\n") {
			switch {
			case line == "Latency (ms):":
				in = true
			case line == "":
				in = false
			case in && len(line) != 53 && !strings.Contains(line, "disabled"): // sysbench's "disabled" line is 49
				t.Errorf("percentile %g: %q is %d columns, want 53", pct, line, len(line))
			}
		}
	}
}

func TestReportHistogramGolden(t *testing.T) {
	hist := [][2]float64{{0.002, 1}, {0.0021, 0}, {0.003, 2}, {0.004, 3}, {0.006, 4}, {1.5, 40}, {2.86, 1}, {100000, 7}}
	var b bytes.Buffer
	WriteHistogram(&b, hist)
	WriteHistogram(&b, nil)
	checkGolden(t, "histogram.golden", b.String())
}

func TestReportSysbenchBuckets(t *testing.T) {
	// Values from sysbench's own --histogram output (a real MariaDB run and
	// the dry run) fall into buckets that print as themselves.
	for _, v := range []float64{0.002, 0.014, 0.015, 0.016, 0.116, 0.191, 1.5} {
		got := SysbenchBuckets([][2]float64{{v, 1}})
		if len(got) != 1 || math.Abs(got[0][0]-v)/v > 0.0091 {
			t.Errorf("%g → %v, want within 0.91%% (half a bucket)", v, got)
		}
	}
	// Microsecond HDR buckets merge: adjacent sysbench buckets differ by
	// 1.8%, so 1.000 ms and 1.001 ms share one.
	got := SysbenchBuckets([][2]float64{{1.000, 2}, {1.001, 3}, {0, 1}, {1e9, 4}, {math.NaN(), 5}, {2, 0}})
	want := [][2]float64{{0.001, 1}, {1, 5}, {100000, 4}}
	if len(got) != 3 {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i][0]-want[i][0])/want[i][0] > 0.0091 || got[i][1] != want[i][1] {
			t.Errorf("bucket %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestReportRunHeaderGolden(t *testing.T) {
	var b bytes.Buffer
	o := DefaultOptions()
	WriteBanner(&b)
	WriteRunHeader(&b, o)
	b.WriteString("----\n")
	o.Threads, o.Rate, o.ReportInterval, o.RandSeed, o.Warmup = 8, 250, 5*time.Second, 42, 30*time.Second
	WriteRunHeader(&b, o)
	b.WriteString("----\n")
	o.Rate, o.ReportInterval, o.Warmup = 12.5, 500*time.Millisecond, 0
	WriteRunHeader(&b, o)
	checkGolden(t, "header.golden", b.String())
}

func TestReportHelpGolden(t *testing.T) {
	for _, w := range []string{"oltp_read_write", "select_random_points", "select_random_ranges"} {
		var b bytes.Buffer
		WriteHelp(&b, w, DefaultOptions())
		checkGolden(t, "help_"+w+".golden", b.String())
	}
}

func TestReportJSONGolden(t *testing.T) {
	r := sampleReportResult()
	r.Histogram = [][2]float64{{1.5, 10}, {1.6, 0}, {2.86, 3}}
	o := r.Options
	o.ReportInterval = time.Second
	doc := &JSONReport{
		Benchmatrix: "test", Sysbench: SysbenchVersion, Workload: o.Workload, Command: "run",
		Connection: JSONConnection{Net: "tcp", Address: "127.0.0.1:3306", User: "sbtest", DB: "sbtest"},
		// A fixed options object: OptionsMap follows options.go, pinned below by keys.
		Options:   map[string]any{"threads": 2, "time": 10.0, "report_interval": 1.0, "percentile": 95},
		Intervals: []JSONInterval{NewJSONInterval(sampleReportInterval(), o.Percentile)},
		Result:    NewJSONResult(r),
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, doc); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "run.json.golden", b.String())

	// The keys a consumer relies on are there, snake_case, with units.
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	res := m["result"].(map[string]any)
	if res["events"].(float64) != 10096 || res["latency"].(map[string]any)["p99_ms"].(float64) != 5.57 {
		t.Fatalf("result = %v", res)
	}
}

func TestReportOptionsMap(t *testing.T) {
	o := DefaultOptions()
	o.ReportInterval, o.Warmup = 1500*time.Millisecond, 30*time.Second
	m := OptionsMap(o)
	// Every option of options.go appears under its command-line name.
	for _, name := range OptionNames() {
		if _, ok := m[name]; !ok {
			t.Errorf("option %s missing from %v", name, m)
		}
	}
	if m["time"] != 10.0 || m["report_interval"] != 1.5 || m["warmup_time"] != 30.0 || m["threads"] != 1 || m["rand_type"] != "special" {
		t.Fatalf("options = %v", m)
	}
	if _, err := json.Marshal(m); err != nil {
		t.Fatal(err)
	}
}

func TestReportJSONNeverNaN(t *testing.T) {
	r := &Result{Options: DefaultOptions(), Result: engine.Result{Latency: engine.Latency{Avg: math.NaN(), Max: math.Inf(1)}}}
	r.Options.Rate = math.NaN()
	doc := &JSONReport{Options: OptionsMap(r.Options), Result: NewJSONResult(r),
		Intervals: []JSONInterval{NewJSONInterval(Interval{Interval: engine.Interval{LatPct: math.NaN()}}, 95)}}
	var b bytes.Buffer
	if err := WriteJSON(&b, doc); err != nil {
		t.Fatalf("NaN reached the encoder: %v", err)
	}
}
