package experiment

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"benchmatrix/oltp"
	"benchmatrix/record"
	"benchmatrix/slap"
)

// Every shipped manifest's plan, stored as run.json stores it and read
// back, is the same plan: each cell's workload is its engine's options
// again, and the fields the record does not type (policy, topology,
// server variables, ...) are kept.
func TestPlanRecordRoundTrip(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../manifests/*.toml")
	engines := map[string]bool{}
	for _, f := range files {
		m, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Resolve(m, Flags{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(PlanRecord(p.Cells))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var stored []record.PlanCell
		if err := json.Unmarshal(b, &stored); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		back, err := PlannedCells(stored)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for i := range p.Cells {
			engines[p.Cells[i].Workload.Engine] = true
			want, _ := json.Marshal(p.Cells[i])
			got, _ := json.Marshal(back[i])
			if string(got) != string(want) || !reflect.DeepEqual(back[i].Workload.Options, p.Cells[i].Workload.Options) {
				t.Errorf("%s: cell %d\n got %s\nwant %s", f, i, got, want)
				break
			}
		}
	}
	if !engines["oltp"] || !engines["slap"] {
		t.Errorf("the shipped manifests ran on %v, want both oltp and slap", engines)
	}
}

// A cell's workload is its engine's options: oltp's for a sysbench
// workload, slap's for slap, each with its own data shape and estimate.
func TestCellsRunOnTheirEngine(t *testing.T) {
	t.Parallel()
	m, err := Parse("m.toml", "[experiment]\nduration = \"5s\"\nwarmup = \"1s\"\n[workload]\nname = \"oltp_read_only\"\n"+
		"[scenarios]\nro = { table_size = 500 }\nslap = { workload = \"slap\", number_of_queries = 100, iterations = 2 }\n")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(m, Flags{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Cells {
		switch o := c.Workload.Options.(type) {
		case oltp.Options:
			if c.Name != "ro" || c.Workload.Engine != "oltp" || o.TableSize != 500 || c.Workload.Data().Rows() != 500 ||
				c.Workload.Options.Estimate() != 7e9 {
				t.Errorf("cell %s: %+v", c.Name, c.Workload)
			}
		case slap.Options:
			if c.Name != "slap" || c.Workload.Engine != "slap" || o.Config.Iterations != 2 || c.Workload.Data().Rows() != 0 ||
				c.Workload.Common().Warmup != 0 || c.Engine() == nil || !c.Engine().RunsToEnd {
				t.Errorf("cell %s: %+v", c.Name, c.Workload)
			}
		default:
			t.Errorf("cell %s: workload %T", c.Name, c.Workload.Options)
		}
	}
}
