package observe

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"benchmatrix/catalog"
)

func TestServerSources(t *testing.T) {
	t.Parallel()
	m := serverSources(catalog.MariaDB)
	if len(m) != 1 {
		t.Fatalf("MariaDB: %d queries, want 1", len(m))
	}
	for _, want := range []string{"information_schema.GLOBAL_STATUS", "'HANDLER_COMMIT'", "'COM_COMMIT'",
		"'BINLOG_GROUP_COMMITS'", "'INNODB_CHECKPOINT_AGE'", "'INNODB_HISTORY_LIST_LENGTH'", "@@global.sync_binlog", "@@global.log_bin"} {
		if !strings.Contains(m[0].query, want) {
			t.Errorf("MariaDB query lacks %s: %s", want, m[0].query)
		}
	}
	my := serverSources(catalog.MySQL)
	if len(my) != 4 {
		t.Fatalf("MySQL: %d queries, want 4", len(my))
	}
	joined := ""
	for _, s := range my {
		joined += s.query + "\n"
	}
	for _, want := range []string{"performance_schema.global_status", "'Innodb_os_log_fsyncs'", "'Innodb_redo_log_current_lsn'",
		"SHOW GLOBAL STATUS LIKE 'Com_commit'", "INNODB_METRICS", "STATUS = 'enabled'", "trx_rseg_history_len",
		"file_summary_by_event_name", "wait/io/file/sql/binlog"} {
		if !strings.Contains(joined, want) {
			t.Errorf("MySQL queries lack %s", want)
		}
	}
	if strings.Contains(joined, "information_schema.GLOBAL_STATUS") || strings.Contains(joined, "ENABLED") {
		t.Error("MySQL 8 has no information_schema.GLOBAL_STATUS and no INNODB_METRICS.ENABLED")
	}
}

func TestStorePairs(t *testing.T) {
	t.Parallel()
	v := map[string]float64{}
	storePairs(v, "", [][2]string{{"HANDLER_COMMIT", "12"}, {"Threads_running", " 3 "}, {"var.log_bin", "ON"},
		{"var.sync_binlog", "0"}, {"Innodb_buffer_pool_dump_status", "Dumping"}, {"Innodb_redo_log_current_lsn", "18446744073709551615"}})
	storePairs(v, "metric.", [][2]string{{"trx_rseg_history_len", "42"}})
	want := map[string]float64{"handler_commit": 12, "threads_running": 3, "var.log_bin": 1, "var.sync_binlog": 0,
		"innodb_redo_log_current_lsn": 18446744073709551615, "metric.trx_rseg_history_len": 42}
	if len(v) != len(want) {
		t.Fatalf("got %v", v)
	}
	for k, x := range want {
		if v[k] != x {
			t.Errorf("%s = %v, want %v", k, v[k], x)
		}
	}
}

// fakeServer answers the sampler's queries from counters it advances by
// itself, like a server under load.
type fakeServer struct {
	mu    sync.Mutex
	calls int
	fail  map[string]bool // substring of a query → error
	hang  bool
	rows  func(query string, call int) [][2]string
}

func (f *fakeServer) query(ctx context.Context, q string) ([][2]string, error) {
	f.mu.Lock()
	f.calls++
	call := f.calls
	hang := f.hang
	var failed bool
	for k := range f.fail {
		if strings.Contains(q, k) {
			failed = true
		}
	}
	f.mu.Unlock()
	if hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if failed {
		return nil, errors.New("fake failure")
	}
	return f.rows(q, call), nil
}

func mysqlRows(q string, call int) [][2]string {
	n := strconv.Itoa
	switch {
	case strings.Contains(q, "performance_schema.global_status"):
		return [][2]string{{"Uptime", n(100 + call)}, {"Handler_commit", n(1000 * call)}, {"Innodb_data_fsyncs", n(10 * call)},
			{"Innodb_os_log_fsyncs", n(7 * call)}, {"Innodb_redo_log_current_lsn", n(50000 + 100*call)},
			{"Innodb_redo_log_checkpoint_lsn", "40000"}, {"Threads_running", "4"}, {"Innodb_os_log_written", n(2048 * call)}}
	case strings.Contains(q, "Com_commit"):
		return [][2]string{{"Com_commit", n(900 * call)}}
	case strings.Contains(q, "INNODB_METRICS"):
		return [][2]string{{"trx_rseg_history_len", "33"}}
	case strings.Contains(q, "file_summary_by_event_name"):
		return [][2]string{{"binlog_count_misc", n(5 * call)}}
	}
	return nil
}

func TestSamplerWithFakeMySQL(t *testing.T) {
	t.Parallel()
	f := &fakeServer{rows: mysqlRows, fail: map[string]bool{}}
	proc := fakeProc(t, map[string]string{"stat": "cpu 1 1 1 1 1 1 1 1\n", "self/stat": "1 (x) S 1 1 1 0 -1 0 0 0 0 0 5 5 0"})
	s := start(context.Background(), Config{Flavor: catalog.MySQL, Interval: 20 * time.Millisecond}, f.query, proc)
	if got := s.Samples(); len(got) != 1 || got[0].T != 0 {
		t.Fatalf("first sample not taken at T=0 by Start: %+v", got)
	}
	time.Sleep(110 * time.Millisecond)
	f.mu.Lock()
	f.fail["INNODB_METRICS"] = true
	f.mu.Unlock()
	time.Sleep(60 * time.Millisecond)
	samples := s.Stop()
	if len(samples) < 5 {
		t.Fatalf("%d samples in 170 ms at 20 ms", len(samples))
	}
	for i := 1; i < len(samples); i++ {
		if samples[i].T <= samples[i-1].T {
			t.Fatalf("times not increasing: %v then %v", samples[i-1].T, samples[i].T)
		}
	}
	if again := s.Stop(); len(again) != len(samples) {
		t.Fatal("second Stop returned different samples")
	}
	rows := Rates(samples)
	if len(rows) != len(samples)-1 {
		t.Fatalf("%d rows for %d samples", len(rows), len(samples))
	}
	r := rows[0]
	// Counters advance by a fixed amount per call; the rate is that over dt.
	perCall := func(col string, step float64) {
		t.Helper()
		calls := 4.0 // four MySQL queries per tick
		want := step * calls / r.Dt.Seconds()
		if got := r.Get(col); math.Abs(got-want) > 1e-6*want {
			t.Errorf("%s = %v, want %v", col, got, want)
		}
	}
	perCall("handler_commits_s", 1000)
	perCall("com_commit_s", 900)
	perCall("data_fsyncs_s", 10)
	perCall("redo_fsyncs_s", 7)
	perCall("binlog_fsyncs_s", 5)
	perCall("redo_kb_s", 2)
	if g := r.Get("threads_running"); g != 4 {
		t.Errorf("threads_running = %v", g)
	}
	if g := r.Get("history_list_len"); g != 33 {
		t.Errorf("history_list_len = %v", g)
	}
	// current lsn at the row's end sample minus the checkpoint lsn.
	if g := r.Get("checkpoint_age_kb"); g <= (50000-40000)/1024.0 {
		t.Errorf("checkpoint_age_kb = %v", g)
	}
	for _, c := range []string{"disk_iops", "cpu_server_pct", "dirty_pages"} {
		if !math.IsNaN(r.Get(c)) {
			t.Errorf("%s = %v, want empty (no source)", c, r.Get(c))
		}
	}
	if !math.IsNaN(rows[len(rows)-1].Get("history_list_len")) {
		t.Error("failed INNODB_METRICS query did not leave a gap")
	}
	if rows[len(rows)-1].Get("handler_commits_s") <= 0 {
		t.Error("a failed source stopped the others")
	}
	notes := strings.Join(s.Notes(), "\n")
	for _, want := range []string{"mysql flavor, 4 queries", `"innodb_metrics" failed`, "server PID unknown", "no datadir"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// A hung server costs gaps, not a stuck sampler: Stop returns within about
// one interval, and ctx cancel ends sampling without a final sample.
func TestSamplerStopsPromptlyOnHang(t *testing.T) {
	t.Parallel()
	f := &fakeServer{rows: mysqlRows}
	s := start(context.Background(), Config{Flavor: catalog.MariaDB, Interval: 50 * time.Millisecond}, f.query, "/proc")
	f.mu.Lock()
	f.hang = true
	f.mu.Unlock()
	time.Sleep(180 * time.Millisecond)
	t0 := time.Now()
	samples := s.Stop()
	if d := time.Since(t0); d > 300*time.Millisecond {
		t.Fatalf("Stop took %v with a hung server", d)
	}
	if len(samples) < 3 {
		t.Fatalf("%d samples: hung ticks must still record OS values", len(samples))
	}
	if _, ok := samples[len(samples)-1].Values["os.cpu.total"]; !ok {
		t.Fatal("no OS values in a hung tick")
	}
	if !strings.Contains(strings.Join(s.Notes(), "\n"), `"status" failed`) {
		t.Fatalf("notes: %v", s.Notes())
	}

	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	q := func(context.Context, string) ([][2]string, error) {
		calls.Add(1)
		return [][2]string{{"Uptime", "1"}}, nil
	}
	s2 := start(ctx, Config{Flavor: catalog.MariaDB, Interval: 10 * time.Millisecond}, q, "/proc")
	time.Sleep(35 * time.Millisecond)
	cancel()
	time.Sleep(30 * time.Millisecond)
	n := calls.Load()
	t0 = time.Now()
	got := s2.Stop()
	if time.Since(t0) > 50*time.Millisecond || calls.Load() != n {
		t.Fatalf("Stop after cancel queried again or waited (%v)", time.Since(t0))
	}
	if len(got) < 2 {
		t.Fatalf("%d samples", len(got))
	}
}

func TestNextTick(t *testing.T) {
	t.Parallel()
	s := time.Second
	for _, c := range []struct{ elapsed, want time.Duration }{
		{0, s}, {1, s}, {s - 1, s}, {s, 2 * s}, {s + 300*time.Millisecond, 2 * s},
		{3*s + 999*time.Millisecond, 4 * s}, // a slow tick skips, never queues
		{-5, s},
	} {
		if got := nextTick(c.elapsed, s); got != c.want {
			t.Errorf("nextTick(%v) = %v, want %v", c.elapsed, got, c.want)
		}
	}
}

func sample(t time.Duration, kv ...any) Sample {
	v := map[string]float64{}
	for i := 0; i < len(kv); i += 2 {
		v[kv[i].(string)] = float64(kv[i+1].(int))
	}
	return Sample{T: t, Values: v}
}

func TestRates(t *testing.T) {
	t.Parallel()
	s := time.Second
	samples := []Sample{
		sample(0, "uptime", 10, "handler_commit", 100, "binlog_group_commits", 0, "var.sync_binlog", 1, "var.log_bin", 1,
			"innodb_checkpoint_age", 2048, "os.disk.reads", 10, "os.disk.writes", 10, "os.disk.read_ms", 0, "os.disk.write_ms", 0,
			"os.disk.io_ms", 0, "os.disk.read_sectors", 0, "os.disk.write_sectors", 0,
			"os.server.ticks", 100, "os.server.pid", 5, "os.cpu.user", 0, "os.cpu.system", 0, "os.cpu.iowait", 0, "os.cpu.steal", 0, "os.cpu.total", 0),
		// 2 s later: rates are per second.
		sample(2*s, "uptime", 12, "handler_commit", 500, "binlog_group_commits", 300, "var.sync_binlog", 1, "var.log_bin", 1,
			"innodb_checkpoint_age", 4096, "os.disk.reads", 30, "os.disk.writes", 110, "os.disk.read_ms", 60, "os.disk.write_ms", 180,
			"os.disk.io_ms", 500, "os.disk.read_sectors", 2048, "os.disk.write_sectors", 4096,
			"os.server.ticks", 250, "os.server.pid", 5, "os.cpu.user", 100, "os.cpu.system", 50, "os.cpu.iowait", 30, "os.cpu.steal", 20, "os.cpu.total", 400),
		// sync_binlog=2: half the group commits are fsynced. Status query failed: no uptime.
		sample(3*s, "binlog_group_commits", 500, "var.sync_binlog", 2, "os.server.ticks", 300, "os.server.pid", 6),
		// Server restarted: Uptime fell.
		sample(4*s, "uptime", 1, "handler_commit", 5, "binlog_group_commits", 0, "var.sync_binlog", 0, "var.log_bin", 1),
		sample(5*s, "uptime", 2, "handler_commit", 25, "binlog_group_commits", 10, "var.sync_binlog", 0, "var.log_bin", 1),
		sample(6*s, "uptime", 3, "handler_commit", 45, "binlog_group_commits", 20, "var.sync_binlog", 1, "var.log_bin", 0),
	}
	rows := Rates(samples)
	if len(rows) != 5 {
		t.Fatalf("%d rows", len(rows))
	}
	check := func(i int, col string, want float64) {
		t.Helper()
		got := rows[i].Get(col)
		if math.IsNaN(want) != math.IsNaN(got) || !math.IsNaN(want) && math.Abs(got-want) > 1e-9 {
			t.Errorf("row %d %s = %v, want %v", i, col, got, want)
		}
	}
	if rows[0].T != 2*s || rows[0].Dt != 2*s || rows[1].T != 3*s {
		t.Errorf("row times %v/%v, %v", rows[0].T, rows[0].Dt, rows[1].T)
	}
	check(0, "handler_commits_s", 200)
	check(0, "binlog_fsyncs_s", 150)
	check(0, "checkpoint_age_kb", 4)
	check(0, "disk_iops", 60)         // (20 + 100) / 2
	check(0, "disk_read_kb_s", 512)   // 2048 sectors × 512 / 1024 / 2
	check(0, "disk_write_kb_s", 1024) //
	check(0, "disk_await_ms", 2)      // 240 ms / 120 ios
	check(0, "disk_util_pct", 25)     // 500 ms of 2000
	check(0, "cpu_server_pct", 75)    // 150 ticks = 1.5 s of CPU in 2 s
	check(0, "cpu_user_pct", 25)
	check(0, "cpu_system_pct", 12.5)
	check(0, "cpu_iowait_pct", 7.5)
	check(0, "cpu_steal_pct", 5)
	check(0, "com_commit_s", math.NaN())   // never read
	check(0, "disk_flushes_s", math.NaN()) // old kernel
	check(1, "binlog_fsyncs_s", 100)       // 200 group commits / sync_binlog 2 / 1 s
	check(1, "handler_commits_s", math.NaN())
	check(1, "cpu_server_pct", math.NaN())    // new PID
	check(2, "handler_commits_s", math.NaN()) // prev sample had a gap
	check(3, "handler_commits_s", 20)         // deltas restart after the restart
	check(3, "binlog_fsyncs_s", 0)            // sync_binlog=0: no binlog fsyncs
	check(4, "binlog_fsyncs_s", 0)            // log_bin OFF

	restart := Rates([]Sample{sample(0, "uptime", 100, "handler_commit", 10, "threads_running", 3),
		sample(s, "uptime", 1, "handler_commit", 50, "threads_running", 2)})
	if v := restart[0].Get("handler_commits_s"); !math.IsNaN(v) {
		t.Errorf("restart with a higher counter gave %v", v)
	}
	if Rates(samples[:1]) != nil || Rates(nil) != nil {
		t.Error("rows from fewer than 2 samples")
	}
	if len(rows[0].Values) != len(Columns()) {
		t.Error("row not aligned with Columns()")
	}
	if !math.IsNaN(rows[0].Get("no_such_column")) {
		t.Error("unknown column has a value")
	}
}

// Every column is documented in docs/observing.md's table (the manual's
// one list of them), in order and with the same words as ColumnDocs, and
// the names are unique and CSV-safe.
func TestColumnsDocumented(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "docs", "observing.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	last := -1
	seen := map[string]bool{}
	for _, c := range ColumnDocs() {
		if seen[c.Name] || strings.ContainsAny(c.Name, ", \"") {
			t.Errorf("bad or duplicate column name %q", c.Name)
		}
		seen[c.Name] = true
		i := strings.Index(doc, "| `"+c.Name+"` | "+c.Kind+" | "+c.Meaning+" |\n")
		if i < 0 {
			t.Errorf("docs/observing.md does not document %s as in ColumnDocs: | `%s` | %s | %s |", c.Name, c.Name, c.Kind, c.Meaning)
			continue
		}
		if i < last {
			t.Errorf("docs/observing.md lists %s out of order", c.Name)
		}
		last = i
		if c.Meaning == "" || c.Kind != "rate" && c.Kind != "gauge" && c.Kind != "interval" {
			t.Errorf("%s: kind %q meaning %q", c.Name, c.Kind, c.Meaning)
		}
	}
}

func TestAlign(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	row := func(end, dt time.Duration, v float64) Row {
		vals := make([]float64, len(Columns()))
		vals[0] = v
		return Row{T: end, Dt: dt, Values: vals}
	}
	rows := []Row{
		row(1003*ms, 1003*ms, 1),
		row(2001*ms, 998*ms, 2),
		row(4010*ms, 2009*ms, 3), // tick at 3 s skipped: one row spans seconds 3 and 4
		row(5650*ms, 1640*ms, 4), // late tick
		row(6002*ms, 352*ms, 5),
		// nothing for 7 s
		row(8000*ms, 1998*ms, 6),
		row(8400*ms, 400*ms, 7), // final partial sample at Stop
	}
	got := Align(rows, time.Second, 10)
	want := []float64{1, 2, 3, 3, 4, 5, 6, 6, math.NaN(), math.NaN()}
	for k, w := range want {
		v := got[k].Values[0]
		if got[k].T != time.Duration(k+1)*time.Second || math.IsNaN(w) != math.IsNaN(v) || !math.IsNaN(w) && v != w {
			t.Errorf("interval %d: T %v value %v, want %v", k, got[k].T, v, w)
		}
	}
}
