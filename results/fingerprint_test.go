package results

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"benchmatrix/oltp"
	"benchmatrix/record"
)

func TestComputeFingerprint(t *testing.T) {
	t.Parallel()
	r := synthRun(1, 2, flushCells())
	f := ComputeFingerprint(r)
	if f.ManifestSHA256 != "5f1d" || f.ServerVersion != "10.11.6-MariaDB-0+deb12u1" || f.ServerFlavor != "mariadb" ||
		f.ToolVersion != "v0.3.0" || f.ToolCommit != "abc1234" || f.Host.Kernel != "6.1.0-18-amd64" {
		t.Errorf("run-level fields: %+v", f)
	}
	if len(f.Workload) != 6 || len(f.Effective) != 6 {
		t.Fatalf("%d workload and %d effective entries, want 6 each", len(f.Workload), len(f.Effective))
	}
	w := f.Workload["b1e1/threads=8"]
	if w.Workload != "oltp_insert" || w.EngineVersion != EngineVersion {
		t.Errorf("workload def %+v", w)
	}
	want := map[string]string{
		"threads":             "8",
		"reinsert_id":         "same",
		"auto_inc":            "on",
		"table_size":          "10000",
		"rate":                "0",
		"mysql_ignore_errors": "1213,1020,1205",
		"rand_type":           "special",
	}
	for k, v := range want {
		if w.Options[k] != v {
			t.Errorf("option %s = %q, want %q", k, w.Options[k], v)
		}
	}
	for _, k := range append(NonDefiningOptions, "workload") {
		if _, ok := w.Options[k]; ok {
			t.Errorf("option %s is in the fingerprint", k)
		}
	}
	if got := f.Effective["b0e1/threads=1"]["sync_binlog"]; got != "0" {
		t.Errorf("effective sync_binlog %q", got)
	}
}

// Every engine option that defines the workload is fingerprinted, so a new
// option cannot be forgotten: the options are read by reflection, and this
// test pins the count.
func TestFingerprintCoversEveryOption(t *testing.T) {
	t.Parallel()
	defining := 0
	for _, n := range oltp.OptionNames() {
		if n != "workload" && !slices.Contains(NonDefiningOptions, n) {
			defining++
		}
	}
	got := len(optionMap(oltp.DefaultOptions()))
	// ignore_errors and ignore_all_errors are one command-line option
	// (mysql_ignore_errors) but two fields.
	if got != defining+1 {
		t.Errorf("%d options fingerprinted, the engine has %d defining options (+1 for mysql_ignore_all_errors)", got, defining)
	}
}

func TestFingerprintFallsBackToResultAndPlan(t *testing.T) {
	t.Parallel()
	r := synthRun(1, 1, flushCells()[:1])
	opts := r.Cells[0].Workload
	// An older run.json: options only in the result.
	old, err := json.Marshal(map[string]any{"name": r.Cells[0].Name, "result": map[string]any{"options": opts, "events": 1}})
	if err != nil {
		t.Fatal(err)
	}
	r.Cells[0] = record.Cell{}
	if err := json.Unmarshal(old, &r.Cells[0]); err != nil {
		t.Fatal(err)
	}
	if err := BindWorkloads(r); err != nil {
		t.Fatal(err)
	}
	r.Plan = append(r.Plan, record.PlanCell{Name: "b9e9/threads=1", Scenario: "b9e9", Workload: opts})
	f := ComputeFingerprint(r)
	if f.Workload["b1e1/threads=1"].Options["threads"] != "1" {
		t.Errorf("options not taken from the result: %+v", f.Workload["b1e1/threads=1"])
	}
	if f.Workload["b9e9/threads=1"].Workload != "oltp_insert" {
		t.Errorf("planned cell missing: %+v", f.Workload)
	}
}

func TestFingerprintDiff(t *testing.T) {
	t.Parallel()
	base := ComputeFingerprint(synthRun(1, 1, flushCells()))
	same := ComputeFingerprint(synthRun(2, 1, flushCells()))
	if d := base.Diff(same); len(d) != 0 {
		t.Errorf("same matrix: %+v", d)
	}
	o := synthRun(2, 1, flushCells())
	for i := range o.Cells {
		c := &o.Cells[i]
		withOLTP(c, func(o *oltp.Options) {
			o.Time, o.Warmup, o.ReportInterval, o.Percentile = time.Hour, time.Minute, time.Second, 99
		})
		if c.Name == "b0e0/threads=8" {
			withOLTP(c, func(o *oltp.Options) { o.Rate = 500 })
			delete(c.Effective, "log_bin")
			c.Effective["innodb_buffer_pool_size"] = "134217728"
		}
	}
	o.Server.Flavor = "mysql"
	o.Host.Cores = 64
	nf := ComputeFingerprint(o)
	got := base.Diff(nf)
	// What is measured (the workload's options) makes the runs differ;
	// the server and the host are listed as differences, not refused.
	want := []record.Mismatch{
		{Cell: "b0e0/threads=8", Key: "b0e0/threads=8: rate", Base: "0", New: "500"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Diff:\n got %+v\nwant %+v", got, want)
	}
	wantEnv := []record.Mismatch{
		{Key: "server flavor", Base: "mariadb", New: "mysql"},
		{Cell: "b0e0/threads=8", Key: "b0e0/threads=8: @@innodb_buffer_pool_size", Base: "(unset)", New: "134217728"},
		{Cell: "b0e0/threads=8", Key: "b0e0/threads=8: @@log_bin", Base: "ON", New: "(unset)"},
		{Key: "host cores", Base: "2", New: "64"},
	}
	if env := base.EnvDiff(nf); !slices.Equal(env, wantEnv) {
		t.Errorf("EnvDiff:\n got %+v\nwant %+v", env, wantEnv)
	}
	if base.Diff(nil) != nil || (*record.Fingerprint)(nil).EnvDiff(base) != nil {
		t.Error("nil fingerprints differ")
	}
}

func TestFingerprintEngineVersion(t *testing.T) {
	t.Parallel()
	base := ComputeFingerprint(synthRun(1, 1, flushCells()[:1]))
	nf := ComputeFingerprint(synthRun(1, 1, flushCells()[:1]))
	def := nf.Workload["b1e1/threads=1"]
	def.EngineVersion = "2"
	nf.Workload["b1e1/threads=1"] = def
	got := base.Diff(nf)
	if len(got) != 1 || got[0].Key != "b1e1/threads=1: engine_version" {
		t.Errorf("Diff %+v", got)
	}
}

// A stored fingerprint survives run.json, and Compare prefers it.
func TestFingerprintInRunJSON(t *testing.T) {
	t.Parallel()
	r := synthRun(1, 5, flushCells())
	r.Fingerprint = ComputeFingerprint(r)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back record.Run
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Fingerprint == nil || len(back.Fingerprint.Diff(r.Fingerprint)) != 0 || len(back.Fingerprint.EnvDiff(r.Fingerprint)) != 0 {
		t.Fatalf("fingerprint after JSON: %+v", back.Fingerprint)
	}
	other := synthRun(1, 5, flushCells())
	other.Fingerprint = ComputeFingerprint(other)
	other.Fingerprint.ServerVersion = "8.0.36"
	if c, err := Compare(&back, other, DefaultCompareOptions()); err != nil || len(c.EnvDiffs) == 0 || c.EnvDiffs[0].New != "8.0.36" {
		t.Errorf("the stored fingerprint was ignored: %v", err)
	}
}
