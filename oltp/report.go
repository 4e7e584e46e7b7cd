package oltp

// This file renders what `benchmatrix oltp` prints: sysbench 1.0.20's text
// layout (reference/sysbench.md §3), byte for byte where sysbench defines it,
// and benchmatrix's JSON document. Everything here is a pure function of its
// inputs so it can be pinned by golden files (testdata/*.golden).
//
// The sysbench format strings below were checked against the strings in
// /usr/bin/sysbench 1.0.20 and against its --mysql-dry-run output.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"benchmatrix/engine"
	"benchmatrix/version"
)

// SysbenchVersion is the sysbench release whose output and options
// `benchmatrix oltp` reproduces.
const SysbenchVersion = "1.0.20"

// Banner is the first line of every text output and of --version, in
// place of sysbench's "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)":
// the sysbench release whose behaviour it reproduces first, so that
// scripts reading the version ("sysbench 1.0.20", the first two words)
// keep working, then what it really is.
func Banner() string {
	return fmt.Sprintf("sysbench %s (benchmatrix oltp %s, not sysbench: its built-in OLTP engine)", SysbenchVersion, version.Version)
}

// WriteBanner writes the banner and the blank line sysbench puts after it.
func WriteBanner(w io.Writer) {
	fmt.Fprintf(w, "%s\n\n", Banner())
}

// WriteRunHeader writes what sysbench prints between the banner and the
// first interval line of `run`. The one line sysbench 1.0.20 does not have,
// "Warm-up time: ...", appears only with --warmup-time.
func WriteRunHeader(w io.Writer, o Options) {
	fmt.Fprintf(w, "Running the test with following options:\n")
	fmt.Fprintf(w, "Number of threads: %d\n", o.Threads)
	if o.Rate > 0 {
		fmt.Fprintf(w, "Target transaction rate: %s/sec\n", formatNumber(o.Rate))
	}
	if o.ReportInterval > 0 {
		fmt.Fprintf(w, "Report intermediate results every %s second(s)\n", formatNumber(o.ReportInterval.Seconds()))
	}
	if len(o.ReportCheckpoints) > 0 {
		at := make([]string, len(o.ReportCheckpoints))
		for i, c := range o.ReportCheckpoints {
			at[i] = strconv.FormatInt(int64(c/time.Second), 10)
		}
		fmt.Fprintf(w, "Report checkpoint(s) at %s seconds\n", strings.Join(at, ", "))
	}
	if o.Warmup > 0 {
		fmt.Fprintf(w, "Warm-up time: %s second(s), excluded from the final statistics\n", formatNumber(o.Warmup.Seconds()))
	}
	if o.RandSeed != 0 {
		fmt.Fprintf(w, "Initializing random number generator from seed (%d).\n\n", o.RandSeed)
	} else {
		fmt.Fprintf(w, "Initializing random number generator from current time\n\n")
	}
	if o.ForcedShutdown > 0 && o.Time > 0 {
		// sysbench counts from the start of the threads, as the deadline
		// does; the warm-up comes first here. Rounded to milliseconds, so
		// that the 1 ns grace of --forced-shutdown=0 prints as sysbench's.
		at := (o.Warmup + o.Time + o.ForcedShutdown).Round(time.Millisecond)
		fmt.Fprintf(w, "Forcing shutdown in %s seconds\n", formatNumber(at.Seconds()))
	}
	fmt.Fprintf(w, "\n")
	fmt.Fprintf(w, "Initializing worker threads...\n\n")
	fmt.Fprintf(w, "Threads started!\n\n")
}

// WriteCheckpoint writes a --report-checkpoints report as sysbench does:
// "[ Ns ] Checkpoint report:" and the full statistics since the previous
// checkpoint.
func WriteCheckpoint(w io.Writer, at time.Duration, res *Result) {
	fmt.Fprintf(w, "[ %.0fs ] Checkpoint report:\n", at.Seconds())
	WriteSummary(w, res)
}

// FormatInterval renders one interval as sysbench's --report-interval line
// (db_driver.c), without the newline:
//
//	[ %.0fs ] thds: %u tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) lat (ms,%u%%): %4.2f err/s: %4.2f reconn/s: %4.2f
//
// pct is the percentile the latency column shows (--percentile). Warm-up
// intervals use the same format; their time continues into the run.
// For sub-second intervals (which sysbench rejects) the time carries as
// many decimals as the interval needs, so labels stay distinct ("[ 0.5s ]").
func FormatInterval(iv Interval, pct float64) string {
	return fmt.Sprintf("[ %ss ] thds: %d tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) lat (ms,%s%%): %4.2f err/s: %4.2f reconn/s: %4.2f",
		timeLabel(iv), iv.Threads, iv.PerSecond(iv.Events), iv.PerSecond(iv.Reads+iv.Writes+iv.Others),
		iv.PerSecond(iv.Reads), iv.PerSecond(iv.Writes), iv.PerSecond(iv.Others), formatNumber(pct), finiteOrZero(iv.LatPct),
		iv.PerSecond(iv.Errors), iv.PerSecond(iv.Reconnects))
}

// FormatQueue renders the line sysbench adds after each interval line under
// --rate: "[ %.0fs ] queue length: %lu, concurrency: %lu".
//
// Interval has no count of busy workers yet, so concurrency shows the
// threads running, which is exact whenever the queue is not empty (every
// worker is then busy) and an upper bound otherwise.
func FormatQueue(iv Interval) string {
	return fmt.Sprintf("[ %ss ] queue length: %d, concurrency: %d", timeLabel(iv), iv.Queue, iv.Threads)
}

// timeLabel is the interval's end in seconds: "%.0f" as sysbench prints it
// for whole-second intervals, otherwise with the fewest decimals (up to 3)
// that express the interval's length (0.5 s → 1, 0.25 s → 2), so that
// consecutive labels differ.
func timeLabel(iv Interval) string {
	step := iv.Seconds()
	decimals := 3
	if step <= 0 {
		decimals = 0
	}
	for d, scale := 0, 1.0; d < 3 && step > 0; d, scale = d+1, scale*10 {
		x := step * scale
		if x >= 0.95 && math.Abs(x-math.Round(x)) < 0.05 {
			decimals = d
			break
		}
	}
	return strconv.FormatFloat(iv.End.Seconds(), 'f', decimals, 64)
}

// WriteHistogram writes sysbench's --histogram block (sb_histogram.c): a
// title, a header, one "%12.3f |<stars> count" row per non-empty bucket
// with the stars scaled to 40 for the fullest bucket, and a line holding
// one space. hist holds (bucket upper bound in ms, count) pairs, as
// Result.Histogram does; they are first regrouped into sysbench's buckets
// (SysbenchBuckets), so the rows have sysbench's granularity and values.
func WriteHistogram(w io.Writer, hist [][2]float64) {
	fmt.Fprintf(w, "Latency histogram (values are in milliseconds)\n")
	rows := SysbenchBuckets(hist)
	var max float64
	for _, b := range rows {
		max = math.Max(max, b[1])
	}
	if max > 0 {
		fmt.Fprintf(w, "       value  ------------- distribution ------------- count\n")
		const stars = "****************************************"
		for _, b := range rows {
			width := int(math.Floor(b[1]*40/max + 0.5))
			fmt.Fprintf(w, "%12.3f |%-40s %d\n", b[0], stars[:width], int64(b[1]))
		}
	}
	fmt.Fprintf(w, " \n")
}

// sysbench's histogram geometry (sb_histogram.c, reference §3.4): 1024
// log-spaced buckets from 0.001 ms to 100,000 ms.
const (
	sbHistSize = 1024
	sbHistMin  = 0.001
	sbHistMax  = 100000.0
)

// SysbenchBuckets regroups (value ms, count) pairs into sysbench's 1024
// log-spaced buckets: index round((ln v − ln 0.001)·1023/ln 10^8), clamped
// to the ends as sysbench clamps, each reported by its representative value
// exp(i·ln 10^8/1023 + ln 0.001). Only non-empty buckets are returned, in
// increasing order.
func SysbenchBuckets(hist [][2]float64) [][2]float64 {
	deduct := math.Log(sbHistMin)
	mult := float64(sbHistSize-1) / (math.Log(sbHistMax) - deduct)
	var counts [sbHistSize]float64
	for _, b := range hist {
		v, n := b[0], finiteOrZero(b[1])
		if n <= 0 || math.IsNaN(v) {
			continue
		}
		i := 0
		switch {
		case math.IsInf(v, 1):
			i = sbHistSize - 1
		case v > 0:
			i = int(math.Round((math.Log(v) - deduct) * mult))
		}
		counts[min(max(i, 0), sbHistSize-1)] += n
	}
	var out [][2]float64
	for i, n := range counts {
		if n > 0 {
			out = append(out, [2]float64{math.Exp(float64(i)/mult + deduct), n})
		}
	}
	return out
}

// WriteSummary writes sysbench 1.0.20's final report (§3.3) for res, byte
// for byte: SQL statistics, General statistics, Latency (ms) with the
// --percentile line, and Threads fairness, each followed by a blank line.
// The percentile label comes from res.Options.Percentile ("percentile
// stats: disabled" when it is 0). A run cut by the forced shutdown gets
// sysbench's "Number of unfinished transactions on forced shutdown" line
// before General statistics, when any was cut.
func WriteSummary(w io.Writer, res *Result) {
	sec := res.Elapsed.Seconds()
	ps := func(n int64) float64 {
		if sec <= 0 {
			return 0
		}
		return float64(n) / sec
	}
	q := res.Queries()
	fmt.Fprintf(w, "SQL statistics:\n")
	fmt.Fprintf(w, "    queries performed:\n")
	fmt.Fprintf(w, "        read:                            %d\n", res.Reads)
	fmt.Fprintf(w, "        write:                           %d\n", res.Writes)
	fmt.Fprintf(w, "        other:                           %d\n", res.Others)
	fmt.Fprintf(w, "        total:                           %d\n", q)
	fmt.Fprintf(w, "    transactions:                        %-6d (%.2f per sec.)\n", res.Events, ps(res.Events))
	fmt.Fprintf(w, "    queries:                             %-6d (%.2f per sec.)\n", q, ps(q))
	fmt.Fprintf(w, "    ignored errors:                      %-6d (%.2f per sec.)\n", res.Errors, ps(res.Errors))
	fmt.Fprintf(w, "    reconnects:                          %-6d (%.2f per sec.)\n", res.Reconnects, ps(res.Reconnects))
	if res.ForcedShutdown && res.Unfinished > 0 {
		fmt.Fprintf(w, "\n")
		fmt.Fprintf(w, "Number of unfinished transactions on forced shutdown: %d\n", res.Unfinished)
	}
	fmt.Fprintf(w, "\n")
	fmt.Fprintf(w, "General statistics:\n")
	total := sec
	if res.TotalTime > 0 {
		total = res.TotalTime.Seconds()
	}
	fmt.Fprintf(w, "    total time:                          %.4fs\n", total)
	fmt.Fprintf(w, "    total number of events:              %d\n", res.Events)
	fmt.Fprintf(w, "\n")
	l := res.Latency
	fmt.Fprintf(w, "Latency (ms):\n")
	fmt.Fprintf(w, "         min: %39.2f\n", finiteOrZero(l.Min))
	fmt.Fprintf(w, "         avg: %39.2f\n", finiteOrZero(l.Avg))
	fmt.Fprintf(w, "         max: %39.2f\n", finiteOrZero(l.Max))
	fmt.Fprintf(w, "%s\n", percentileLine(res.Options.Percentile, l.Pct))
	fmt.Fprintf(w, "         sum: %39.2f\n", finiteOrZero(l.Sum))
	fmt.Fprintf(w, "\n")
	f := res.Fairness
	fmt.Fprintf(w, "Threads fairness:\n")
	fmt.Fprintf(w, "    events (avg/stddev):           %.4f/%3.2f\n", finiteOrZero(f.EventsAvg), finiteOrZero(f.EventsStddev))
	fmt.Fprintf(w, "    execution time (avg/stddev):   %.4f/%3.2f\n", finiteOrZero(f.TimeAvg), finiteOrZero(f.TimeStddev))
	fmt.Fprintf(w, "\n")
}

// percentileLine is sysbench's "        %3dth percentile: %27.2f", or its
// "disabled" line. A fractional percentile (which sysbench cannot take)
// keeps the line's 53-column width.
func percentileLine(pct, v float64) string {
	if pct <= 0 {
		return "         percentile stats:               disabled"
	}
	label := fmt.Sprintf("        %3sth percentile: ", formatNumber(pct))
	width := 53 - len(label)
	if width < 1 {
		width = 1
	}
	return fmt.Sprintf("%s%*.2f", label, width, finiteOrZero(v))
}

// WriteExtras writes what benchmatrix measures beyond sysbench, after
// sysbench's block so that parsers of sysbench output see the same lines
// first: p50/p99/p99.9 (sysbench reports one percentile), late and dropped
// events under --rate, and the excluded warm-up. It writes nothing when
// there is nothing to add. No line reuses a label sysbench prints
// ("NNth percentile:", "min:", "transactions:", ...), so regexes written for
// sysbench cannot match these lines by accident.
func WriteExtras(w io.Writer, res *Result) {
	var b strings.Builder
	if res.Events > 0 {
		l := res.Latency
		fmt.Fprintf(&b, "Latency percentiles (ms):\n")
		fmt.Fprintf(&b, "         p50:   %37.2f\n", finiteOrZero(l.P50))
		fmt.Fprintf(&b, "         p95:   %37.2f\n", finiteOrZero(l.P95))
		fmt.Fprintf(&b, "         p99:   %37.2f\n", finiteOrZero(l.P99))
		fmt.Fprintf(&b, "         p99.9: %37.2f\n", finiteOrZero(l.P999))
		fmt.Fprintf(&b, "\n")
	}
	if res.Options.Rate > 0 {
		sec := res.Elapsed.Seconds()
		ps := func(n int64) float64 {
			if sec <= 0 {
				return 0
			}
			return float64(n) / sec
		}
		fmt.Fprintf(&b, "Open-loop statistics (target %s/sec):\n", formatNumber(res.Options.Rate))
		fmt.Fprintf(&b, "    late events:                         %-6d (%.2f per sec.)\n", res.Late, ps(res.Late))
		fmt.Fprintf(&b, "    dropped events:                      %-6d (%.2f per sec.)\n", res.Dropped, ps(res.Dropped))
		var oldest time.Duration
		for _, a := range res.BacklogAges {
			oldest = max(oldest, a)
		}
		fmt.Fprintf(&b, "    queued, unstarted at the end:        %-6d (the oldest waited %.2f ms)\n", res.Backlog, float64(oldest)/float64(time.Millisecond))
		fmt.Fprintf(&b, "\n")
	}
	if res.Options.Warmup > 0 {
		fmt.Fprintf(&b, "Warm-up excluded from the statistics above: %ss\n\n", formatNumber(res.Options.Warmup.Seconds()))
	}
	if b.Len() == 0 {
		return
	}
	fmt.Fprintf(w, "benchmatrix extras (not printed by sysbench):\n\n%s", b.String())
}

// formatNumber prints integers as sysbench's %d/%u would and anything else
// in the shortest form ("0.5", "99.9").
func formatNumber(f float64) string {
	f = finiteOrZero(f)
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// finiteOrZero maps NaN and ±Inf to 0 so that neither text nor JSON ever shows
// them (encoding/json refuses them).
func finiteOrZero(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// ---- help ----

// helpOption is one line of `WORKLOAD help`.
type helpOption struct {
	name string
	arg  string // "N", "STRING" or "" for [=on|off]
	desc string
	def  func(o Options) string
}

func helpIntDefault(f func(o Options) int) func(Options) string {
	return func(o Options) string { return strconv.Itoa(f(o)) }
}

func helpBoolDefault(f func(o Options) bool) func(Options) string {
	return func(o Options) string {
		if f(o) {
			return "on"
		}
		return "off"
	}
}

// helpOptions are oltp_common.lua's options with sysbench's descriptions
// (sorted by name, as sysbench prints them). --pgsql_variant is listed as
// sysbench lists it (without a default) and accepted, though only MySQL is
// supported. --recreate and --reinsert_id are benchmatrix's: never in
// sysbench's text, listed after it with --extras (writeOwnHelp).
var helpOptions = []helpOption{
	{"auto_inc", "", "Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. When disabled, use client-generated IDs", helpBoolDefault(func(o Options) bool { return o.AutoInc })},
	{"create_secondary", "", "Create a secondary index in addition to the PRIMARY KEY", helpBoolDefault(func(o Options) bool { return o.CreateSecondary })},
	{"delete_inserts", "N", "Number of DELETE/INSERT combinations per transaction", helpIntDefault(func(o Options) int { return o.DeleteInserts })},
	{"delta", "N", "Size of BETWEEN ranges", helpIntDefault(func(o Options) int { return o.Delta })},
	{"distinct_ranges", "N", "Number of SELECT DISTINCT queries per transaction", helpIntDefault(func(o Options) int { return o.DistinctRanges })},
	{"index_updates", "N", "Number of UPDATE index queries per transaction", helpIntDefault(func(o Options) int { return o.IndexUpdates })},
	{"mysql_storage_engine", "STRING", "Storage engine, if MySQL is used", func(o Options) string { return o.StorageEngine }},
	{"non_index_updates", "N", "Number of UPDATE non-index queries per transaction", helpIntDefault(func(o Options) int { return o.NonIndexUpdates })},
	{"number_of_ranges", "N", "Number of random BETWEEN ranges per SELECT", helpIntDefault(func(o Options) int { return o.NumberOfRanges })},
	{"order_ranges", "N", "Number of SELECT ORDER BY queries per transaction", helpIntDefault(func(o Options) int { return o.OrderRanges })},
	{"pgsql_variant", "STRING", "Use this PostgreSQL variant when running with the PostgreSQL driver. The only currently supported variant is 'redshift'. When enabled, create_secondary is automatically disabled, and delete_inserts is set to 0", nil},
	{"point_selects", "N", "Number of point SELECT queries per transaction", helpIntDefault(func(o Options) int { return o.PointSelects })},
	{"random_points", "N", "Number of random points in the IN() clause in generated SELECTs", helpIntDefault(func(o Options) int { return o.RandomPoints })},
	{"range_selects", "", "Enable/disable all range SELECT queries", helpBoolDefault(func(o Options) bool { return o.RangeSelects })},
	{"range_size", "N", "Range size for range SELECT queries", helpIntDefault(func(o Options) int { return o.RangeSize })},
	{"recreate", "", "let prepare drop and recreate sbtestN tables that already exist", helpBoolDefault(func(o Options) bool { return o.Recreate })},
	{"reinsert_id", "STRING", "id of the row re-inserted after each DELETE: 'same' (sysbench) or 'auto' (AUTO_INCREMENT assigns a new one)", func(o Options) string { return o.ReinsertID }},
	{"secondary", "", "Use a secondary index in place of the PRIMARY KEY", helpBoolDefault(func(o Options) bool { return o.Secondary })},
	{"simple_ranges", "N", "Number of simple range SELECT queries per transaction", helpIntDefault(func(o Options) int { return o.SimpleRanges })},
	{"skip_trx", "", "Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode", helpBoolDefault(func(o Options) bool { return o.SkipTrx })},
	{"sum_ranges", "N", "Number of SELECT SUM() queries per transaction", helpIntDefault(func(o Options) int { return o.SumRanges })},
	{"table_size", "N", "Number of rows per table", helpIntDefault(func(o Options) int { return o.TableSize })},
	{"tables", "N", "Number of tables", helpIntDefault(func(o Options) int { return o.Tables })},
}

// scriptOnly names the options only one script declares.
var scriptOnly = map[string]string{
	"random_points":    "select_random_points",
	"delta":            "select_random_ranges",
	"number_of_ranges": "select_random_ranges",
}

// WriteHelp writes `WORKLOAD help` as sysbench prints it (after the banner):
// "<workload> options:", then "  --name=N  description [default]" with the
// descriptions aligned one column after the longest option, and a blank
// line. Defaults come from o (normally DefaultOptions()). Nothing of
// benchmatrix's own is in it (see WriteOwnHelp).
func WriteHelp(w io.Writer, workload string, o Options) { writeHelp(w, workload, workload, o) }

// writeHelp is WriteHelp with the test named as it was given
// ("oltp_read_write.lua" for a script path, as sysbench names it). It is
// sysbench's text byte for byte: scripts parse it, and sysbench's own
// cram test (script_oltp_help.t) pins it.
func writeHelp(w io.Writer, testName, workload string, o Options) {
	var rows []helpOption
	width := 0
	for _, h := range helpOptions {
		if s, ok := scriptOnly[h.name]; ok && s != workload {
			continue
		}
		if benchmatrixOnly[h.name] {
			continue
		}
		rows = append(rows, h)
		width = max(width, len(helpSpec(h)))
	}
	fmt.Fprintf(w, "%s options:\n", testName)
	for _, h := range rows {
		if h.def == nil {
			fmt.Fprintf(w, "  %-*s %s\n", width, helpSpec(h), h.desc)
			continue
		}
		fmt.Fprintf(w, "  %-*s %s [%s]\n", width, helpSpec(h), h.desc, h.def(o))
	}
	fmt.Fprintf(w, "\n")
}

// WriteOwnHelp lists the options of benchmatrix's own that the workload
// reads (--recreate for all; --reinsert_id for those that re-insert a
// deleted row), which sysbench's help text lacks: `WORKLOAD help --extras`
// prints it after sysbench's text, as `run --extras` prints its block
// after sysbench's report.
func WriteOwnHelp(w io.Writer, workload string, o Options) {
	var rows []helpOption
	width := 0
	for _, h := range helpOptions {
		if !benchmatrixOnly[h.name] || (h.name != "recreate" && !ReadsOption(Options{Workload: workload}, h.name)) {
			continue
		}
		rows = append(rows, h)
		width = max(width, len(helpSpec(h)))
	}
	fmt.Fprintf(w, "benchmatrix options for %s (not in sysbench):\n", workload)
	for _, h := range rows {
		fmt.Fprintf(w, "  %-*s %s [%s]\n", width, helpSpec(h), h.desc, h.def(o))
	}
	fmt.Fprintf(w, "\n")
}

// benchmatrixOnly names the script options sysbench lacks.
var benchmatrixOnly = map[string]bool{"recreate": true, "reinsert_id": true}

func helpSpec(h helpOption) string {
	if h.arg == "" {
		return "--" + h.name + "[=on|off]"
	}
	return "--" + h.name + "=" + h.arg
}

// ---- JSON ----

// JSONReport is the document --format=json prints: one per invocation,
// with stable snake_case keys. Times are in seconds, latencies in ms.
type JSONReport struct {
	Benchmatrix string         `json:"benchmatrix_version"`
	Sysbench    string         `json:"sysbench_compatible"`
	Workload    string         `json:"workload"`
	Command     string         `json:"command"`
	Connection  JSONConnection `json:"connection"`
	// Options are the options in effect, named as on the command line
	// (sysbench's names with underscores); durations are in seconds.
	Options   map[string]any `json:"options"`
	Intervals []JSONInterval `json:"intervals"`
	Result    *JSONResult    `json:"result"`
	// Checkpoints are the --report-checkpoints reports, in order.
	Checkpoints []JSONCheckpoint `json:"checkpoints,omitempty"`
	Interrupted bool             `json:"interrupted"`
	Error       string           `json:"error,omitempty"`
}

// JSONCheckpoint is one --report-checkpoints report: the seconds since the
// start of the measured window, and the statistics since the previous one.
type JSONCheckpoint struct {
	At     float64     `json:"at_s"`
	Result *JSONResult `json:"result"`
}

// JSONConnection is where the command connected. It never holds the
// password.
type JSONConnection struct {
	Net     string `json:"net"`
	Address string `json:"address"`
	User    string `json:"user"`
	DB      string `json:"db"`
}

// JSONInterval is one report interval.
type JSONInterval struct {
	Phase      string  `json:"phase"`
	StartS     float64 `json:"start_s"`
	EndS       float64 `json:"end_s"`
	Threads    int     `json:"threads"`
	Events     int64   `json:"events"`
	Reads      int64   `json:"reads"`
	Writes     int64   `json:"writes"`
	Others     int64   `json:"others"`
	Errors     int64   `json:"errors"`
	Reconnects int64   `json:"reconnects"`
	Late       int64   `json:"late"`
	Dropped    int64   `json:"dropped"`
	Queue      int64   `json:"queue"`
	TPS        float64 `json:"tps"`
	QPS        float64 `json:"qps"`
	ReadsPS    float64 `json:"reads_per_s"`
	WritesPS   float64 `json:"writes_per_s"`
	OthersPS   float64 `json:"others_per_s"`
	ErrorsPS   float64 `json:"errors_per_s"`
	ReconnPS   float64 `json:"reconnects_per_s"`
	Percentile float64 `json:"percentile"`
	LatPctMs   float64 `json:"lat_pct_ms"`
	LatP50Ms   float64 `json:"lat_p50_ms"`
	LatP95Ms   float64 `json:"lat_p95_ms"`
	LatP99Ms   float64 `json:"lat_p99_ms"`
	LatMaxMs   float64 `json:"lat_max_ms"`
}

// JSONResult is the measured window (warm-up excluded).
type JSONResult struct {
	ElapsedS   float64         `json:"elapsed_s"`
	Events     int64           `json:"events"`
	Queries    int64           `json:"queries"`
	Reads      int64           `json:"reads"`
	Writes     int64           `json:"writes"`
	Others     int64           `json:"others"`
	Errors     int64           `json:"errors"`
	Reconnects int64           `json:"reconnects"`
	Late       int64           `json:"late"`
	Dropped    int64           `json:"dropped"`
	TPS        float64         `json:"tps"`
	QPS        float64         `json:"qps"`
	ErrorsPS   float64         `json:"errors_per_s"`
	ReconnPS   float64         `json:"reconnects_per_s"`
	Latency    JSONLatency     `json:"latency"`
	Fairness   JSONFairness    `json:"fairness"`
	Histogram  []JSONHistogram `json:"histogram,omitempty"`
	// ForcedShutdown: --forced-shutdown cut the run; Unfinished events
	// were in flight and are not counted.
	ForcedShutdown bool  `json:"forced_shutdown"`
	Unfinished     int64 `json:"unfinished"`
}

// JSONLatency is the latency summary in milliseconds. Pct is the value at
// Percentile (--percentile; 0 = disabled).
type JSONLatency struct {
	MinMs      float64 `json:"min_ms"`
	AvgMs      float64 `json:"avg_ms"`
	MaxMs      float64 `json:"max_ms"`
	SumMs      float64 `json:"sum_ms"`
	P50Ms      float64 `json:"p50_ms"`
	P95Ms      float64 `json:"p95_ms"`
	P99Ms      float64 `json:"p99_ms"`
	P999Ms     float64 `json:"p999_ms"`
	Percentile float64 `json:"percentile"`
	PctMs      float64 `json:"pct_ms"`
}

// JSONFairness is sysbench's "Threads fairness".
type JSONFairness struct {
	EventsAvg    float64 `json:"events_avg"`
	EventsStddev float64 `json:"events_stddev"`
	TimeAvgS     float64 `json:"time_avg_s"`
	TimeStddevS  float64 `json:"time_stddev_s"`
}

// JSONHistogram is one non-empty latency bucket.
type JSONHistogram struct {
	UpperMs float64 `json:"upper_ms"`
	Count   int64   `json:"count"`
}

// NewJSONInterval converts an interval; pct is --percentile.
func NewJSONInterval(iv Interval, pct float64) JSONInterval {
	return JSONInterval{
		Phase: string(iv.Phase), StartS: iv.Start.Seconds(), EndS: iv.End.Seconds(), Threads: iv.Threads,
		Events: iv.Events, Reads: iv.Reads, Writes: iv.Writes, Others: iv.Others,
		Errors: iv.Errors, Reconnects: iv.Reconnects, Late: iv.Late, Dropped: iv.Dropped, Queue: iv.Queue,
		TPS: iv.PerSecond(iv.Events), QPS: iv.PerSecond(iv.Reads + iv.Writes + iv.Others),
		ReadsPS: iv.PerSecond(iv.Reads), WritesPS: iv.PerSecond(iv.Writes), OthersPS: iv.PerSecond(iv.Others),
		ErrorsPS: iv.PerSecond(iv.Errors), ReconnPS: iv.PerSecond(iv.Reconnects),
		Percentile: finiteOrZero(pct), LatPctMs: finiteOrZero(iv.LatPct), LatP50Ms: finiteOrZero(iv.LatP50),
		LatP95Ms: finiteOrZero(iv.LatP95), LatP99Ms: finiteOrZero(iv.LatP99), LatMaxMs: finiteOrZero(iv.LatMax),
	}
}

// NewJSONResult converts a result.
func NewJSONResult(res *Result) *JSONResult {
	if res == nil {
		return nil
	}
	l, f := res.Latency, res.Fairness
	out := &JSONResult{
		ElapsedS: res.Elapsed.Seconds(), Events: res.Events, Queries: res.Queries(),
		Reads: res.Reads, Writes: res.Writes, Others: res.Others, Errors: res.Errors,
		Reconnects: res.Reconnects, Late: res.Late, Dropped: res.Dropped,
		ForcedShutdown: res.ForcedShutdown, Unfinished: res.Unfinished,
		TPS: finiteOrZero(res.TPS()), QPS: finiteOrZero(res.QPS()),
		ErrorsPS: finiteOrZero(engine.PerSecond(res.Errors, res.Elapsed)), ReconnPS: finiteOrZero(engine.PerSecond(res.Reconnects, res.Elapsed)),
		Latency: JSONLatency{
			MinMs: finiteOrZero(l.Min), AvgMs: finiteOrZero(l.Avg), MaxMs: finiteOrZero(l.Max), SumMs: finiteOrZero(l.Sum),
			P50Ms: finiteOrZero(l.P50), P95Ms: finiteOrZero(l.P95), P99Ms: finiteOrZero(l.P99), P999Ms: finiteOrZero(l.P999),
			Percentile: finiteOrZero(res.Options.Percentile), PctMs: finiteOrZero(l.Pct),
		},
		Fairness: JSONFairness{
			EventsAvg: finiteOrZero(f.EventsAvg), EventsStddev: finiteOrZero(f.EventsStddev),
			TimeAvgS: finiteOrZero(f.TimeAvg), TimeStddevS: finiteOrZero(f.TimeStddev),
		},
	}
	for _, b := range res.Histogram {
		if b[1] > 0 {
			out.Histogram = append(out.Histogram, JSONHistogram{UpperMs: finiteOrZero(b[0]), Count: int64(b[1])})
		}
	}
	return out
}

// OptionsMap renders o as the JSON "options" object: each field under its
// json name, durations in seconds, non-finite floats as 0.
func OptionsMap(o Options) map[string]any {
	m := map[string]any{}
	v := reflect.ValueOf(o)
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if !sf.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		fv := v.Field(i)
		switch {
		case sf.Type == reflect.TypeOf(time.Duration(0)):
			m[name] = time.Duration(fv.Int()).Seconds()
		case fv.Kind() == reflect.Float64 || fv.Kind() == reflect.Float32:
			m[name] = finiteOrZero(fv.Float())
		default:
			m[name] = fv.Interface()
		}
	}
	return m
}

// WriteJSON writes doc as one indented JSON document and a newline.
func WriteJSON(w io.Writer, doc *JSONReport) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	return bw.Flush()
}
