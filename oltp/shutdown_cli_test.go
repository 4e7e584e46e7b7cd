package oltp

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// --forced-shutdown as sysbench 1.0.20 reads it (src/sysbench.c, init()),
// resolved against --time whatever the order of the options.
func TestParseForcedShutdown(t *testing.T) {
	t.Parallel()
	cases := []struct {
		line string
		want time.Duration
	}{
		{"", 0},
		{"--forced-shutdown=off", 0},
		{"--forced-shutdown=OFF", 0},
		{"--forced-shutdown=10", 10 * time.Second},
		{"--forced-shutdown=2.5", 2500 * time.Millisecond},
		{"--forced-shutdown=1m", time.Minute},
		{"--forced-shutdown=10 --forced-shutdown=off", 0}, // the last one counts
		// 0 cuts at the time limit itself: the smallest grace.
		{"--forced-shutdown=0", time.Nanosecond},
		// No value: 5% of --time, whole seconds rounded down (10 s → 0).
		{"--forced-shutdown", time.Nanosecond},
		{"--forced-shutdown=", time.Nanosecond},
		{"--time=100 --forced-shutdown", 5 * time.Second},
		{"--forced-shutdown=50% --time=3", time.Second},
		{"--forced-shutdown=25% --time=20", 5 * time.Second},
		{"--time=60 --forced-shutdown=10%", 6 * time.Second},
		// Without a time limit sysbench does not read it.
		{"--time=0 --events=100 --forced-shutdown=10", 0},
		{"--max-time=30 --forced-shutdown=10%", 3 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			inv, err := ParseCommandLine(cliFields("oltp_read_write " + c.line + " run"))
			if err != nil {
				t.Fatal(err)
			}
			if got := inv.Options.ForcedShutdown; got != c.want {
				t.Fatalf("ForcedShutdown = %v, want %v", got, c.want)
			}
		})
	}
	for _, bad := range []string{"soon", "-1", "-5%", "5%x", "%", "NaN", "Inf%"} {
		t.Run("bad "+bad, func(t *testing.T) {
			_, err := ParseCommandLine(cliFields("oltp_read_write --forced-shutdown=" + bad + " run"))
			ue, ok := err.(*UsageError)
			if !ok || ue.Option != "--forced-shutdown" || !strings.Contains(ue.Msg, "want off, seconds or N%") {
				t.Fatalf("err = %#v", err)
			}
		})
	}
}

func TestWriteRunHeaderForcedShutdown(t *testing.T) {
	t.Parallel()
	cases := []struct {
		time, warmup, grace time.Duration
		want                string // "" = no line
	}{
		{3 * time.Second, 0, 2 * time.Second, "Forcing shutdown in 5 seconds\n"},
		{3 * time.Second, 0, time.Nanosecond, "Forcing shutdown in 3 seconds\n"},
		{10 * time.Second, 5 * time.Second, 1500 * time.Millisecond, "Forcing shutdown in 16.5 seconds\n"},
		{3 * time.Second, 0, 0, ""},
		{0, 0, 2 * time.Second, ""},
	}
	for _, c := range cases {
		o := DefaultOptions()
		o.Time, o.Warmup, o.ForcedShutdown = c.time, c.warmup, c.grace
		var b bytes.Buffer
		WriteRunHeader(&b, o)
		got := b.String()
		// sysbench: the seed line, a blank line, the shutdown line, a blank line.
		if c.want == "" {
			if strings.Contains(got, "Forcing shutdown") {
				t.Errorf("%+v: unexpected line in\n%s", c, got)
			}
			continue
		}
		if !strings.Contains(got, "current time\n\n"+c.want+"\nInitializing worker threads...") {
			t.Errorf("%+v: want %q after the seed line in\n%s", c, c.want, got)
		}
	}
}

// A run cut by the forced shutdown prints what sysbench 1.0.20 prints:
// the FATAL line after the last interval, then the report with the
// unfinished count before General statistics and without the histogram,
// and exits with 2.
func TestCLIMainForcedShutdownGolden(t *testing.T) {
	t.Parallel()
	args := cliFields("oltp_point_select --threads=2 --time=3 --forced-shutdown=2 --report-interval=1 --rand-seed=42 --histogram run")
	res := sampleReportResult()
	res.Options.Histogram, res.Options.RandSeed = true, 42
	res.Options.Time, res.Options.ForcedShutdown = 3*time.Second, 2*time.Second
	res.Histogram = [][2]float64{{0.76, 3}, {1.98, 90}}
	res.ForcedShutdown, res.Unfinished = true, 2
	ivs := runIntervals(3, time.Second)
	ivs[2].Events, ivs[2].Reads, ivs[2].Writes, ivs[2].Others, ivs[2].LatPct = 0, 0, 0, 0, 0
	var stdout, stderr bytes.Buffer
	code := mainWith(context.Background(), args, strings.NewReader(""), &stdout, &stderr, fakeEngine(res, ivs, nil))
	if code != 2 || stderr.Len() != 0 { // sysbench's exit(2)
		t.Fatalf("code %d stderr %q", code, stderr.String())
	}
	checkGolden(t, "cli_forced_shutdown.golden", stdout.String())

	// JSON: the document holds the result, flagged; FATAL goes to stderr.
	stdout.Reset()
	stderr.Reset()
	code = mainWith(context.Background(), append([]string{"--format=json"}, args...), strings.NewReader(""), &stdout, &stderr, fakeEngine(res, ivs, nil))
	var doc JSONReport
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if code != ExitForcedShutdown || doc.Result == nil || !doc.Result.ForcedShutdown || doc.Result.Unfinished != 2 ||
		doc.Error != forcedShutdownMsg || doc.Options["forced_shutdown"] != 2.0 ||
		stderr.String() != "FATAL: "+forcedShutdownMsg+"\n" {
		t.Fatalf("code %d, doc %+v, result %+v, stderr %q", code, doc, doc.Result, stderr.String())
	}

	// Interrupted first: 130 wins, no FATAL line, the count stays.
	stdout.Reset()
	stderr.Reset()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code = mainWith(ctx, args, strings.NewReader(""), &stdout, &stderr, fakeEngine(res, nil, nil))
	if code != ExitInterrupted || strings.Contains(stdout.String(), "FATAL") ||
		!strings.Contains(stdout.String(), "Number of unfinished transactions on forced shutdown: 2") {
		t.Fatalf("interrupted: code %d stdout\n%s", code, stdout.String())
	}
}
