package results

import (
	"bytes"
	"strings"
	"testing"

	"benchmatrix/analysis"
	"benchmatrix/observe"
	"benchmatrix/oltp"
	"benchmatrix/record"
)

// linkedRun is flushRun with each scenario's mechanism, threads, growth
// and stalls set on every repeat (constant tps per scenario, 6 rounds).
type linkedScenario struct {
	tps     float64
	threads int
	mech    map[string]float64
	growth  *record.Growth
	stalls  int // per repeat
}

func linkedRun(expect string, sc map[string]linkedScenario) *record.Run {
	tps := map[string][]float64{}
	for name, s := range sc {
		for i := 0; i < 6; i++ {
			tps[name] = append(tps[name], s.tps)
		}
	}
	r := flushRun(expect, tps)
	for i := range r.Cells {
		c := &r.Cells[i]
		s := sc[c.Scenario]
		withOLTP(c, func(o *oltp.Options) { o.Threads = max(1, s.threads) })
		c.Mechanism = s.mech
		if s.growth != nil {
			g := *s.growth
			c.Growth = &g
		}
		c.Stalls = &observe.StallReport{Count: s.stalls}
	}
	return r
}

func TestLinkedLines(t *testing.T) {
	t.Parallel()
	// 1000 tps on one thread is 1 ms per transaction; 2000 tps is 500 µs.
	fsync := func(data, binlog, awaitMs, cpuUs float64) map[string]float64 {
		return map[string]float64{"data_fsyncs_trx": data, "binlog_fsyncs_trx": binlog, "disk_await_ms": awaitMs, "server_cpu_us_trx": cpuUs}
	}
	rows := func(before, after int64) *record.Growth {
		return &record.Growth{RowsBefore: before, RowsAfter: after, RowsExact: true, BytesBefore: before * 200, BytesAfter: after * 200}
	}
	cases := []struct {
		name   string
		expect string
		sc     map[string]linkedScenario
		want   []string
		absent []string
	}{
		{
			name: "fsyncs account for most of it",
			sc: map[string]linkedScenario{
				"b1e1": {tps: 1000, mech: fsync(1, 1, 0.4, 100)}, // model: 900 µs
				"b0e1": {tps: 2000, mech: fsync(1, 0, 0.4, 100)}, // model: 500 µs
				"b0e0": {tps: 2000, mech: fsync(1, 0, 0.4, 100)},
			},
			want: []string{
				"b0e1 against b1e1: tps ×2.00 (500.0 µs vs 1.00 ms per transaction per thread); differs most in binlog fsyncs/trx 0 vs 1 (to none)",
				"a difference of −400.0 µs against −500.0 µs measured: it accounts for about 80% of the difference",
			},
		},
		{
			name: "the same mechanism cannot account for a difference",
			sc: map[string]linkedScenario{
				"b1e1": {tps: 1000, mech: fsync(1, 1, 0.4, 100)},
				"b0e1": {tps: 2000, mech: fsync(1, 1, 0.4, 100)},
				"b0e0": {tps: 2000, mech: fsync(1, 1, 0.4, 100)},
			},
			want: []string{
				"b0e1 against b1e1: tps ×2.00",
				"no per-transaction figure differs by 10% or more",
				"it does not account for the difference (the model predicts none, or the opposite direction)",
			},
		},
		{
			name: "equal throughput",
			sc: map[string]linkedScenario{
				"b1e1": {tps: 1000, mech: fsync(1, 1, 0.4, 100)},
				"b0e1": {tps: 1005, mech: fsync(1, 0, 0.4, 100)},
				"b0e0": {tps: 1000, mech: fsync(1, 1, 0.4, 100)},
			},
			want:   []string{"b0e1 against b1e1: tps ×1.00", "binlog fsyncs/trx 0 vs 1 (to none)", "the throughput is about equal: nothing to account for"},
			absent: []string{"accounts for about"},
		},
		{
			name: "per thread: 4 threads at 4000 tps take 1 ms each",
			sc: map[string]linkedScenario{
				"b1e1": {tps: 2000, threads: 4, mech: fsync(1, 1, 0.5, 1000)}, // 2 ms measured, model 2 ms
				"b0e1": {tps: 4000, threads: 4, mech: fsync(1, 1, 0.5, 0)},    // 1 ms measured, model 1 ms
				"b0e0": {tps: 4000, threads: 4, mech: fsync(1, 1, 0.5, 0)},
			},
			want: []string{"(1.00 ms vs 2.00 ms per transaction per thread)", "server CPU µs/trx 0 vs 1000 (to none)", "accounts for about 100% of the difference"},
		},
		{
			name: "a ratio under 0.01 keeps its digits",
			sc: map[string]linkedScenario{
				"b1e1": {tps: 1000, mech: fsync(1, 1, 0.4, 100)},
				"b0e1": {tps: 2000, mech: fsync(0.0008, 1, 0.4, 100)},
				"b0e0": {tps: 2000, mech: fsync(0.0008, 1, 0.4, 100)},
			},
			want: []string{"InnoDB fsyncs/trx 0.0008 vs 1 (×0.0008)"},
		},
		{
			name: "no latency figures",
			sc: map[string]linkedScenario{
				"b1e1": {tps: 1000, mech: map[string]float64{"data_fsyncs_trx": 2}},
				"b0e1": {tps: 2000, mech: map[string]float64{"data_fsyncs_trx": 1}},
				"b0e0": {tps: 2000, mech: map[string]float64{"data_fsyncs_trx": 1}},
			},
			want: []string{"InnoDB fsyncs/trx 1 vs 2 (×0.50)", "no fsync latency or server CPU figures to account for the difference"},
		},
		{
			name:   "an expected ordering's adjacent pair beside the baseline's",
			expect: `"b1e1 < b0e1 < b0e0"`,
			sc: map[string]linkedScenario{
				"b1e1": {tps: 1000, mech: fsync(1, 1, 0.4, 100)},
				"b0e1": {tps: 2000, mech: fsync(1, 0, 0.4, 100)},
				"b0e0": {tps: 4000, mech: fsync(0, 0, 0.4, 250)}, // 250 µs measured and modelled
			},
			want: []string{
				"b0e0 against b0e1: tps ×2.00 (250.0 µs vs 500.0 µs per transaction per thread); differs most in InnoDB fsyncs/trx 0 vs 1 (to none), server CPU µs/trx 250 vs 100 (×2.50)",
				"a difference of −250.0 µs against −250.0 µs measured: it accounts for about 100% of the difference",
			},
		},
		{
			name: "a table grown 1% cannot explain three stalls against one",
			sc: map[string]linkedScenario{
				"b1e1": {tps: 1000, mech: fsync(1, 1, 0.4, 100), growth: rows(20000, 20000), stalls: 0},
				"b0e1": {tps: 1000, mech: fsync(1, 1, 0.4, 100), growth: rows(20000, 20200), stalls: 1},
				"b0e0": {tps: 1000, mech: fsync(1, 1, 0.4, 100), growth: rows(20000, 20000)},
			},
			want: []string{"b0e1 against b1e1: the table grew +1.0% of its rows (20000 → 20200; allocated bytes +1.0%) in 10 s (b1e1: rows +0.0%, bytes +0.0%): too little to explain 6 stalls in 6 repeats against 0 in 6 (a table under 5% larger"},
		},
		{
			name: "allocated bytes alone are not growth where rows were counted",
			sc: map[string]linkedScenario{
				"b1e1": {tps: 1000, mech: fsync(1, 1, 0.4, 100), growth: &record.Growth{RowsBefore: 20000, RowsAfter: 20000, BytesBefore: 4 << 20, BytesAfter: 5 << 20}},
				"b0e1": {tps: 800, mech: fsync(1, 1, 0.4, 100), growth: rows(20000, 20000)},
				"b0e0": {tps: 1000, mech: fsync(1, 1, 0.4, 100), growth: rows(20000, 20000)},
			},
			absent: []string{"the table grew"},
		},
		{
			name: "bytes where rows are unknown",
			sc: map[string]linkedScenario{
				"b1e1": {tps: 1000, mech: fsync(1, 1, 0.4, 100), growth: &record.Growth{BytesBefore: 4 << 20, BytesAfter: 4 << 20}},
				"b0e1": {tps: 800, mech: fsync(1, 1, 0.4, 100), growth: &record.Growth{BytesBefore: 4 << 20, BytesAfter: 6 << 20}},
				"b0e0": {tps: 1000, mech: fsync(1, 1, 0.4, 100), growth: &record.Growth{BytesBefore: 4 << 20, BytesAfter: 4 << 20}},
			},
			want: []string{"b0e1 against b1e1: the table grew +50.0% of its bytes in 10 s (b1e1: +0.0%): large enough to take part in the difference (tps ×0.80;"},
		},
		{
			name: "a table grown by half can take part",
			sc: map[string]linkedScenario{
				"b1e1": {tps: 1000, mech: fsync(1, 1, 0.4, 100), growth: rows(20000, 20000)},
				"b0e1": {tps: 800, mech: fsync(1, 1, 0.4, 100), growth: rows(20000, 30000)},
				"b0e0": {tps: 1000, mech: fsync(1, 1, 0.4, 100), growth: rows(20000, 20000)},
			},
			want: []string{"the table grew +50.0% of its rows (20000 → 30000; allocated bytes +50.0%)", ": large enough to take part in the difference (tps ×0.80;"},
		},
		{
			// An insert workload grows its table by a row a transaction: the
			// faster cell grew more because it ran more (flush-profile's
			// oltp_insert cells).
			name: "growth in step with the transactions follows the throughput",
			sc: map[string]linkedScenario{
				"b1e1": {tps: 1000, mech: fsync(1, 1, 0.4, 100), growth: rows(20000, 30000)},
				"b0e1": {tps: 2000, mech: fsync(1, 0, 0.4, 100), growth: rows(20000, 40000)},
				"b0e0": {tps: 2000, mech: fsync(1, 0, 0.4, 100), growth: rows(20000, 40000)},
			},
			want:   []string{"b0e1 against b1e1: the table grew +100.0% of its rows", "the table grew by about as much per transaction in both (1 vs 1 rows per transaction), so the growth follows the throughput rather than explains tps ×2.00"},
			absent: []string{"large enough"},
		},
		{
			name: "tables that grew alike do not tell the cells apart",
			sc: map[string]linkedScenario{
				"b1e1": {tps: 1000, mech: fsync(1, 1, 0.4, 100), growth: rows(20000, 30000)},
				"b0e1": {tps: 2000, mech: fsync(1, 0, 0.4, 100), growth: rows(20000, 30000)},
				"b0e0": {tps: 2000, mech: fsync(1, 0, 0.4, 100), growth: rows(20000, 30000)},
			},
			want: []string{"both tables grew alike (within 5%), so the growth does not explain tps ×2.00"},
		},
		{
			name: "no growth, no growth line",
			sc: map[string]linkedScenario{
				"b1e1": {tps: 1000, mech: fsync(1, 1, 0.4, 100), growth: rows(20000, 20000)},
				"b0e1": {tps: 2000, mech: fsync(1, 0, 0.4, 100), growth: rows(20000, 20000)},
				"b0e0": {tps: 2000, mech: fsync(1, 0, 0.4, 100), growth: rows(20000, 20000)},
			},
			absent: []string{"the table grew"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := linkedRun(tc.expect, tc.sc)
			c := Conclude(r)
			got := strings.Join(c.Linked, "\n")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(got, a) {
					t.Errorf("has %q:\n%s", a, got)
				}
			}
			var b bytes.Buffer
			WriteConclusion(&b, r)
			if len(c.Linked) > 0 && !strings.Contains(b.String(), "Mechanism and outcome:\n\n- "+c.Linked[0]+"\n") {
				t.Errorf("the Conclusion lacks the lines:\n%s", b.String())
			}
		})
	}
}

func TestLinkedPairs(t *testing.T) {
	t.Parallel()
	r := linkedRun(`"b1e1 < b0e1 < b0e0", "b0e0 > b1e1"`, map[string]linkedScenario{
		"b1e1": {tps: 1000}, "b0e1": {tps: 2000}, "b0e0": {tps: 4000},
	})
	c := Conclude(r)
	var got []string
	for _, p := range analysis.ComparedPairs(r, c.Ratios) {
		got = append(got, p.Cell+"/"+p.Ref)
	}
	// The baseline's pairs first; b0e0 > b1e1 is already among them.
	want := "b0e1/b1e1 b0e0/b1e1 b0e0/b0e1"
	if strings.Join(got, " ") != want {
		t.Errorf("pairs %v, want %s", got, want)
	}
	// Cells without mechanism figures get no line.
	if len(c.Linked) != 0 {
		t.Errorf("lines without figures: %q", c.Linked)
	}
}

func TestPredictedSeconds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		m    map[string]float64
		want float64
		ok   bool
	}{
		{"MariaDB: InnoDB's fsyncs hold the redo's", map[string]float64{"data_fsyncs_trx": 2, "binlog_fsyncs_trx": 1, "disk_await_ms": 0.5, "server_cpu_us_trx": 100}, 0.0016, true},
		{"MySQL: the redo counter beside InnoDB's is not added twice", map[string]float64{"data_fsyncs_trx": 2, "redo_fsyncs_trx": 1, "disk_await_ms": 0.5}, 0.001, true},
		{"only the redo counter", map[string]float64{"redo_fsyncs_trx": 3, "disk_await_ms": 1}, 0.003, true},
		{"fsyncs without await: CPU only", map[string]float64{"data_fsyncs_trx": 2, "server_cpu_us_trx": 250}, 0.00025, true},
		{"nothing to predict from", map[string]float64{"data_fsyncs_trx": 2}, 0, false},
	}
	for _, tc := range cases {
		got, ok := analysis.PredictedSeconds(tc.m)
		if ok != tc.ok || !near(got, tc.want, 1e-12) {
			t.Errorf("%s: %g, %v; want %g, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
