package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"benchmatrix/oltp"
	"benchmatrix/slap"
)

// A run.json written before the engines shared one interface (testdata/
// legacy-run: benchmatrix at 4efb4cb ran testdata/legacy-run/legacy.toml,
// a slap cell and an oltp cell, on a sandbox) still loads: each cell's
// workload is its engine's options again (the slap plan cell's
// configuration was beside its workload then, under "slap"), the plan's
// cells too, and it compares with itself and writes its reports.
func TestOldRunJSONLoads(t *testing.T) {
	t.Parallel()
	r, err := ReadRun(filepath.Join("testdata", "legacy-run"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Cells) != 2 || len(r.Plan) != 2 {
		t.Fatalf("%d cells, %d planned", len(r.Cells), len(r.Plan))
	}
	for _, c := range r.Cells {
		if c.Result == nil || c.Result.Events <= 0 {
			t.Errorf("cell %s: no result", c.Name)
		}
		switch c.Name {
		case "oltp":
			o, ok := c.Workload.Options.(oltp.Options)
			if !ok || o.Workload != "oltp_point_select" || o.TableSize != 1000 || o.Time != 2*time.Second || o.Warmup != time.Second {
				t.Errorf("oltp cell's workload %T %+v", c.Workload.Options, c.Workload.Options)
			}
		case "slap":
			o, ok := c.Workload.Options.(slap.Options)
			if !ok || o.Threads != 1 || o.Time != 2*time.Second {
				t.Errorf("slap cell's workload %T %+v", c.Workload.Options, c.Workload.Options)
			}
		}
	}
	for _, c := range r.Plan {
		if c.Name != "slap" {
			continue
		}
		o, ok := c.Workload.Options.(slap.Options)
		if !ok || o.Config.NumberOfQueries != 100 || o.Config.Iterations != 1 || c.Workload.Data().Shape != "slap engine=default" {
			t.Errorf("planned slap cell's workload %T %+v", c.Workload.Options, c.Workload.Options)
		}
	}
	if cmp, err := Compare(r, r, DefaultCompareOptions()); err != nil || len(cmp.Cells) != 2 {
		t.Errorf("compare with itself: %v", err)
	}
	// Written again and read back, it is the same run.
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, RunFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := ComputeFingerprint(r), ComputeFingerprint(again); len(a.Diff(b)) != 0 {
		t.Errorf("fingerprint changed on a round trip: %+v", a.Diff(b))
	}
	if err := writeReports(dir, again); err != nil {
		t.Errorf("reports: %v", err)
	}
}
