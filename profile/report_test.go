package profile

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchmatrix/engine"
	"benchmatrix/record"
)

func costCell(name, scenario, prof string, repeat int, events int64) record.Cell {
	return record.Cell{Name: name, Scenario: scenario, Repeat: repeat, Status: record.CellOK,
		Params: []record.Param{{Name: "sync_binlog", Value: "1"}, {Name: "profile", Value: prof}},
		Result: &engine.Result{Events: events, Elapsed: 10e9}}
}

func TestProfilerCost(t *testing.T) {
	cases := []struct {
		name    string
		cells   []record.Cell
		ratios  map[string]float64
		differs bool
		known   bool
	}{
		{
			name: "same cost everywhere",
			cells: []record.Cell{
				costCell("a/profile=both", "a", "both", 1, 900), costCell("a/profile=off", "a", "off", 1, 1000),
				costCell("a/profile=both", "a", "both", 2, 880), costCell("a/profile=off", "a", "off", 2, 1000),
				costCell("b/profile=both", "b", "both", 1, 450), costCell("b/profile=off", "b", "off", 1, 500),
				costCell("b/profile=both", "b", "both", 2, 445), costCell("b/profile=off", "b", "off", 2, 500),
			},
			ratios: map[string]float64{"a/profile=both": 0.89, "b/profile=both": 0.895},
			known:  true,
		},
		{
			name: "the cost differs by more than the noise",
			cells: []record.Cell{
				costCell("a/profile=both", "a", "both", 1, 950), costCell("a/profile=off", "a", "off", 1, 1000),
				costCell("a/profile=both", "a", "both", 2, 960), costCell("a/profile=off", "a", "off", 2, 1000),
				costCell("b/profile=both", "b", "both", 1, 250), costCell("b/profile=off", "b", "off", 1, 500),
				costCell("b/profile=both", "b", "both", 2, 260), costCell("b/profile=off", "b", "off", 2, 500),
			},
			ratios:  map[string]float64{"a/profile=both": 0.955, "b/profile=both": 0.51},
			differs: true, known: true,
		},
		{
			name: "one repeat: the noise is not known",
			cells: []record.Cell{
				costCell("a/profile=both", "a", "both", 1, 950), costCell("a/profile=off", "a", "off", 1, 1000),
				costCell("b/profile=both", "b", "both", 1, 250), costCell("b/profile=off", "b", "off", 1, 500),
			},
			ratios: map[string]float64{"a/profile=both": 0.95, "b/profile=both": 0.5},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := costTable(&record.Run{Cells: c.cells}, "profile")
			if len(rows) != len(c.ratios) {
				t.Fatalf("%d rows, want %d", len(rows), len(c.ratios))
			}
			for _, r := range rows {
				if math.Abs(r.Ratio-c.ratios[r.Cell]) > 1e-9 {
					t.Errorf("%s: ratio %.4f, want %.4f", r.Cell, r.Ratio, c.ratios[r.Cell])
				}
			}
			differs, _, _, known := CostVerdict(rows)
			if differs != c.differs || known != c.known {
				t.Errorf("differs %v known %v, want %v %v", differs, known, c.differs, c.known)
			}
			var b bytes.Buffer
			writeCostTable(&b, "The profiler's cost", "profiled", "unprofiled", rows, "")
			flagged := strings.Contains(b.String(), "**The cost differs between cells by more than the noise**")
			if flagged != c.differs {
				t.Errorf("flagged = %v:\n%s", flagged, b.String())
			}
		})
	}
}

// A recording with no samples is said to be empty; no graph is drawn.
func TestEmptyProfileSaysSo(t *testing.T) {
	dir := t.TempDir()
	empty := Build(OnCPU, nil, "mariadbd", 2004008)
	mp, err := WriteModeProfile(dir, "b1e1", 1, empty, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !mp.Empty || mp.SVG != "" {
		t.Fatalf("%+v", mp)
	}
	if _, err := os.Stat(filepath.Join(dir, "profiles", "b1e1-r1", "cpu.svg")); !os.IsNotExist(err) {
		t.Errorf("an empty profile was drawn: %v", err)
	}
	c := costCell("b1e1", "b1e1", "cpu", 1, 100)
	c.Profile = &record.CellProfile{Mode: "cpu", Seconds: 5, CPU: mp}
	var b bytes.Buffer
	writeProfiles(&b, &record.Run{Cells: []record.Cell{c}})
	if !strings.Contains(b.String(), "on-CPU: no samples captured") {
		t.Errorf("summary does not say the profile is empty:\n%s", b.String())
	}
}

func TestCellProfileDir(t *testing.T) {
	if got := CellProfileDir("b0e1/threads=8 x", 2); got != filepath.Join("profiles", "b0e1_threads=8_x-r2") {
		t.Errorf("got %s", got)
	}
}

// With profile as an axis, each mode is paired with the same off cell.
func TestProfilerCostPerMode(t *testing.T) {
	cells := []record.Cell{
		costCell("a/profile=off", "a", "off", 1, 1000), costCell("a/profile=cpu", "a", "cpu", 1, 900),
		costCell("a/profile=offcpu", "a", "offcpu", 1, 500),
	}
	rows := costTable(&record.Run{Cells: cells}, "profile")
	if len(rows) != 2 || rows[0].Cell != "a/profile=cpu" || rows[0].Ratio != 0.9 || rows[1].Cell != "a/profile=offcpu" || rows[1].Ratio != 0.5 {
		t.Errorf("rows %+v", rows)
	}
}
