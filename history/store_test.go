package history

import (
	"bytes"
	"context"
	"database/sql"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchmatrix/engine"
	"benchmatrix/exitcode"
	"benchmatrix/record"
)

// fakeRun is a finished run of one cell with three repeats at about tps
// (a record for the store's logic; the real runs are in
// cmd/benchmatrix/history_test.go).
func fakeRun(started time.Time, tps float64, option string) *record.Run {
	r := &record.Run{
		Experiment: "flush", ManifestHash: "m1", Status: record.StatusFinished,
		Started: started, Finished: started.Add(time.Minute),
		Tool: record.Tool{Version: "dev"},
		Host: record.Host{Hostname: "h"},
		Fingerprint: &record.Fingerprint{Workload: map[string]record.WorkloadDef{
			"b1e1": {Workload: "oltp_insert", Options: map[string]string{"table_size": option}},
		}},
	}
	for rep, f := range []float64{0.99, 1, 1.01} {
		r.Cells = append(r.Cells, record.Cell{
			Name: "b1e1", Scenario: "b1e1", Repeat: rep + 1, Status: record.CellOK,
			Effective: map[string]string{"sync_binlog": "1"},
			Result: &engine.Result{Elapsed: time.Second, Events: int64(tps * f),
				Latency: engine.Latency{P99: 1000 / (tps * f)}},
		})
	}
	return r
}

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sub", "h.db")
	st, err := Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, p
}

func TestAddTwiceIsANoOpAndOtherContentIsRefused(t *testing.T) {
	ctx := context.Background()
	st, _ := openTemp(t)
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	r := fakeRun(t0, 1000, "1000")
	a, err := st.Add(ctx, r, Meta{Commit: "abc"})
	if err != nil || a.Duplicate || a.Cells != 1 {
		t.Fatalf("first add: %+v %v", a, err)
	}
	b, err := st.Add(ctx, r, Meta{Commit: "abc"})
	if err != nil || !b.Duplicate || b.RunID != a.RunID {
		t.Fatalf("second add: %+v %v", b, err)
	}
	other := fakeRun(t0, 500, "1000") // same id (experiment, start, host), other results
	if _, err := st.Add(ctx, other, Meta{}); exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "history rm "+a.RunID) {
		t.Fatalf("same id, other results: %v", err)
	}
	runs, err := st.Runs(ctx)
	if err != nil || len(runs) != 1 || runs[0].Commit != "abc" {
		t.Fatalf("runs: %+v %v", runs, err)
	}
}

func TestWorkloadChangeStartsASeries(t *testing.T) {
	ctx := context.Background()
	st, _ := openTemp(t)
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		if _, err := st.Add(ctx, fakeRun(t0.Add(time.Duration(i)*time.Hour), 1000, "1000"), Meta{}); err != nil {
			t.Fatal(err)
		}
	}
	a, err := st.Add(ctx, fakeRun(t0.Add(5*time.Hour), 1000, "5000"), Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Notes) != 1 || !strings.Contains(a.Notes[0], "table_size 1000 -> 5000") || !strings.Contains(a.Notes[0], "a new series") {
		t.Fatalf("notes: %q", a.Notes)
	}
	ss, err := st.ListSeries(ctx, nil)
	if err != nil || len(ss) != 2 || ss[0].Runs != 3 || ss[1].Runs != 1 {
		t.Fatalf("series: %+v %v", ss, err)
	}
	// Forgetting the only run of a series forgets the series.
	if _, err := st.Remove(ctx, a.RunID[:6]); err != nil {
		t.Fatal(err)
	}
	if ss, _ := st.ListSeries(ctx, nil); len(ss) != 1 {
		t.Fatalf("after rm: %+v", ss)
	}
	if _, err := st.Remove(ctx, "ffffffff"); exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("rm of no run: %v", err)
	}
}

// The store's check finds a step in a history recorded through Add, names
// the runs either side and what else changed between them.
func TestCheckThroughTheStore(t *testing.T) {
	ctx := context.Background()
	st, _ := openTemp(t)
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	level := []float64{1000, 1010, 990, 1005, 995, 1002, 998, 1008, 992, 1001}
	for i := range 20 {
		v := level[i%10]
		r := fakeRun(t0.Add(time.Duration(i)*time.Hour), v, "1000")
		if i >= 10 {
			r = fakeRun(t0.Add(time.Duration(i)*time.Hour), 0.8*v, "1000")
			for k := range r.Cells {
				r.Cells[k].Effective = map[string]string{"sync_binlog": "0"}
			}
		}
		if _, err := st.Add(ctx, r, Meta{Commit: strings.Repeat(string(rune('a'+i)), 12)}); err != nil {
			t.Fatal(err)
		}
	}
	checks, err := st.Check(ctx, []string{"flush/b1e1"}, DefaultOptions())
	if err != nil || len(checks) != 1 {
		t.Fatal(checks, err)
	}
	var tps MetricCheck
	for _, m := range checks[0].Metrics {
		if m.Metric.Name == "tps" {
			tps = m
		}
	}
	if len(tps.Changes) != 1 {
		t.Fatalf("tps changes: %+v", tps.Changes)
	}
	c := tps.Changes[0]
	if c.Index != 10 || !c.Regression || c.AfterRun.Commit != strings.Repeat("k", 12) || c.BeforeRun.Commit != strings.Repeat("j", 12) ||
		len(c.Differs) != 1 || c.Differs[0] != "@@sync_binlog 1 -> 0" {
		t.Fatalf("change: %+v", c)
	}
	if checks[0].Regressed() {
		t.Fatal("the regression is 10 runs old: not new")
	}
	var out bytes.Buffer
	if err := WriteShow(&out, checks, 5, true); err != nil || !strings.Contains(out.String(), "| 20 |") || strings.Count(out.String(), "\n| ") != 6 {
		t.Fatalf("markdown: %v\n%s", err, out.String())
	}
	// The trend plot: a PNG per series, one panel per metric.
	files, err := WritePlots(t.TempDir(), checks, 0)
	if err != nil || len(files) != 1 {
		t.Fatalf("plots: %v %v", files, err)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if img, err := png.Decode(f); err != nil || img.Bounds().Dx() != 1100 {
		t.Fatalf("plot: %v", err)
	}
	if _, err := st.Check(ctx, []string{"nosuch"}, DefaultOptions()); exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("unknown series: %v", err)
	}
}

// A damaged SQLite file is reported and left exactly as it was; a SQLite
// file of someone else's tables is not taken over; a schema from a newer
// benchmatrix is refused.
func TestDamagedOrForeignFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, bytes.Repeat([]byte("not sqlite "), 500), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(junk)
	if _, err := Open(ctx, junk); exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "left as it is") {
		t.Fatalf("junk: %v", err)
	}
	if after, _ := os.ReadFile(junk); !bytes.Equal(before, after) {
		t.Fatal("the junk file was changed")
	}
	// A real history whose pages are damaged.
	st, p := openTemp(t)
	if _, err := st.Add(ctx, fakeRun(time.Now(), 1000, "1000"), Meta{}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	b, _ := os.ReadFile(p)
	for i := 4096; i < len(b); i += 7 {
		b[i] ^= 0x5a
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, p); exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("damaged history: %v", err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(b, after) {
		t.Fatal("the damaged history was changed")
	}
	// Someone else's SQLite file.
	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE mine (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(ctx, other); exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "mine") {
		t.Fatalf("foreign file: %v", err)
	}
	// A newer schema.
	st, p = openTemp(t)
	if _, err := st.db.Exec("INSERT INTO bmh_schema (version, applied) VALUES (?, 'x')", SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := Open(ctx, p); exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("newer schema: %v", err)
	}
}

func TestDSN(t *testing.T) {
	t.Setenv(PasswordEnv, "")
	t.Setenv("BENCHMATRIX_PASSWORD", "pw-from-env")
	c, db, err := parseDSN("mysql://bench@db.example:3307/perf")
	if err != nil || c.User != "bench" || c.Addr != "db.example:3307" || db != "perf" || c.Passwd != "pw-from-env" {
		t.Fatalf("%+v %q %v", c, db, err)
	}
	t.Setenv(PasswordEnv, "own")
	if c, _, _ := parseDSN("mysql://bench@db.example/perf"); c.Passwd != "own" || c.Addr != "db.example:3306" {
		t.Fatalf("%+v", c)
	}
	for _, bad := range []string{"mysql://bench:Secret123@h/perf", "mysql://bench@h/", "mysql://bench@h/a/b"} {
		_, _, err := parseDSN(bad)
		if exitcode.Of(err) != exitcode.Usage || strings.Contains(err.Error(), "Secret123") {
			t.Fatalf("%s: %v", bad, err)
		}
	}
}
