package results

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"benchmatrix/figure"
	"benchmatrix/observe"
	"benchmatrix/record"
)

func TestReadIntervals(t *testing.T) {
	dir := t.TempDir()
	writeTestRun(t, dir)
	// A half row left by a crash is skipped.
	f, err := os.OpenFile(filepath.Join(dir, IntervalsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("a/threads=1,3,1.000,run")
	f.Close()

	ivs, err := ReadIntervals(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != 5 { // the failed run has no intervals
		t.Fatalf("%d cell runs, want 5: %v", len(ivs), ivs)
	}
	pts := ivs[RunKey("b/threads=1", 1)]
	if len(pts) != 18 {
		t.Fatalf("b/threads=1: %d points, want 18", len(pts))
	}
	if p := pts[0]; p.T != 1 || p.Phase != "warmup" || p.P95 != 2 || p.Metrics["data_fsyncs_s"] != 0 {
		t.Errorf("first point %+v", p)
	}
	if p := pts[8]; p.Phase != "run" || p.TPS != 0 || p.T != 9 || p.Metrics["data_fsyncs_s"] != 8 {
		t.Errorf("stalled point %+v", p)
	}
	if p := pts[3]; p.TPS <= 0 {
		t.Errorf("point 3 has no tps: %+v", p)
	}

	if err := os.WriteFile(filepath.Join(dir, IntervalsFile), []byte("cell,repeat,t\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadIntervals(dir); err == nil || !strings.Contains(err.Error(), "no column phase, tps, lat_p95_ms") {
		t.Errorf("missing columns: err = %v", err)
	}
}

func TestStallSpans(t *testing.T) {
	// Two warm-up seconds, then five measured ones, a zero-length interval
	// among them (the detector never saw it).
	pts := []IntervalPoint{
		{T: 1, Phase: "warmup"}, {T: 2, Phase: "warmup"},
		{T: 3, Phase: "run"}, {T: 4, Phase: "run"}, {T: 4, Phase: "run"}, {T: 5, Phase: "run"}, {T: 6, Phase: "run"}, {T: 6.5, Phase: "run"},
	}
	for _, tc := range []struct {
		name     string
		episodes []observe.Episode
		want     [][2]float64
	}{
		{"none", nil, nil},
		{"first", []observe.Episode{{Start: 0, End: 1}}, [][2]float64{{2, 3}}},
		{"after the empty interval", []observe.Episode{{Start: 2, End: 4}}, [][2]float64{{4, 6}}},
		{"last, partial", []observe.Episode{{Start: 4, End: 5}}, [][2]float64{{6, 6.5}}},
		{"out of range is dropped", []observe.Episode{{Start: 3, End: 9}, {Start: 1, End: 2}}, [][2]float64{{3, 4}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := record.Cell{Stalls: &observe.StallReport{Episodes: tc.episodes}}
			if got := stallSpans(c, pts); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSegments(t *testing.T) {
	pts := []IntervalPoint{
		{T: 1, Phase: "warmup", P95: 1}, {T: 2, Phase: "run", P95: 2}, {T: 3, Phase: "run", P95: -1}, {T: 4, Phase: "run", P95: 4}, {T: 5, Phase: "run", P95: 5},
	}
	warm, run := segments(pts, func(p IntervalPoint) float64 {
		if p.P95 < 0 {
			return math.NaN()
		}
		return p.P95
	})
	if len(warm) != 1 || len(warm[0]) != 2 || warm[0][0].X != 0 || warm[0][1].X != 1 {
		t.Errorf("warm-up segments %v", warm)
	}
	// A gap where there is no value; each segment starts where its first
	// interval starts.
	if len(run) != 2 || run[0][0].X != 1 || run[0][1].X != 2 || run[1][0].X != 3 || run[1][0].Y != 4 || run[1][2].X != 5 {
		t.Errorf("run segments %v", run)
	}
	// A 3 ms fragment at the warm-up's end (a rate over 3 ms: 2,590 tps in
	// a real run against about 600) is not drawn; the run starts after it.
	frag := []IntervalPoint{
		{T: 4, Phase: "warmup", TPS: 600}, {T: 5, Phase: "warmup", TPS: 610}, {T: 5.003, Phase: "warmup", TPS: 2590},
		{T: 6.003, Phase: "run", TPS: 620}, {T: 7.003, Phase: "run", TPS: 630}, {T: 7.01, Phase: "run", TPS: 4900},
	}
	warm, run = segments(frag, func(p IntervalPoint) float64 { return p.TPS })
	for _, xys := range append(warm, run...) {
		for _, xy := range xys {
			if xy.Y > 1000 {
				t.Errorf("a fragment drawn: %v", xys)
			}
		}
	}
	if len(run) != 1 || run[0][0].X != 5.003 || run[0][len(run[0])-1].X != 7.003 {
		t.Errorf("run after the fragment: %v", run)
	}
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{
		"threads=8":                 "threads=8",
		"threads=8/engine=innodb":   "threads=8_engine=innodb",
		"workload=a b/dir=/var/lib": "workload=a_b_dir=_var_lib",
		"../../etc":                 "_.._etc",
		"name=ü":                    "name=_",
		strings.Repeat("x=1/", 60):  "",
	} {
		got := figure.SafeName(in)
		if want == "" {
			if len(got) > 100 || strings.ContainsAny(got, "/ ") {
				t.Errorf("safeName(long) = %q", got)
			}
			continue
		}
		if got != want {
			t.Errorf("safeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPlotFiles(t *testing.T) {
	ok := func(name, scenario string) record.Cell {
		return record.Cell{Name: name, Scenario: scenario, Status: record.CellOK, Repeat: 1}
	}
	for _, tc := range []struct {
		name  string
		cells []record.Cell
		want  []string
	}{
		{"nothing finished", []record.Cell{{Name: "a", Status: record.CellFailed}}, nil},
		{"no scenarios: one figure", []record.Cell{ok("threads=1", ""), ok("threads=2", "")},
			[]string{"plots/tps.png", "plots/series.png"}},
		{"scenarios only: one figure", []record.Cell{ok("b1e1", "b1e1"), ok("b0e0", "b0e0")},
			[]string{"plots/tps.png", "plots/series.png"}},
		{"scenarios x axis: one figure per axis value", []record.Cell{ok("a/threads=1", "a"), ok("b/threads=1", "b"), ok("a/threads=2", "a"), ok("a/threads=1", "a")},
			[]string{"plots/tps.png", "plots/series-threads=1.png", "plots/series-threads=2.png"}},
		{"names that sanitise alike stay apart", []record.Cell{ok("a/dir=x y", "a"), ok("a/dir=x_y", "a")},
			[]string{"plots/tps.png", "plots/series-dir=x_y.png", "plots/series-dir=x_y-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := PlotFiles(&record.Run{Cells: tc.cells})
			if len(files) != len(tc.want) {
				t.Fatalf("files %v, want %v", files, tc.want)
			}
			for i, f := range files {
				if !strings.HasPrefix(f.Path, tc.want[i]) || f.Title == "" {
					t.Errorf("file %d = %+v, want %s", i, f, tc.want[i])
				}
			}
		})
	}
}

func TestTimeTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		labels []string
	}{
		{0, 3, []string{"0", "1", "2", "3"}},
		{0, 22, []string{"0", "2", "4", "6", "8", "10", "12", "14", "16", "18", "20", "22"}},
		{0, 305, []string{"0", "30", "60", "90", "120", "150", "180", "210", "240", "270", "300"}},
	} {
		var got []string
		for _, tk := range (timeTicks{labels: true}).Ticks(tc.lo, tc.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if !reflect.DeepEqual(got, tc.labels) {
			t.Errorf("ticks(%v, %v) labels %v, want %v", tc.lo, tc.hi, got, tc.labels)
		}
	}
	for _, tk := range (timeTicks{}).Ticks(0, 22) {
		if strings.TrimSpace(tk.Label) != "" {
			t.Errorf("unlabelled ticks have label %q", tk.Label)
		}
	}
}

func TestWritePlots(t *testing.T) {
	dir := t.TempDir()
	r := writeTestRun(t, dir)
	files, err := WritePlots(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(files, PlotFiles(r)) {
		t.Errorf("WritePlots wrote %v, PlotFiles says %v", files, PlotFiles(r))
	}
	for i, f := range files {
		minH := 600
		if i == 0 {
			minH = 200 // the bar chart grows with the cells
		}
		checkPNG(t, filepath.Join(dir, f.Path), 900, minH)
	}
	entries, err := os.ReadDir(filepath.Join(dir, PlotsDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(files) { // no temporary files left
		t.Errorf("%d files in plots/, want %d", len(entries), len(files))
	}

	if err := os.Remove(filepath.Join(dir, IntervalsFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := WritePlots(dir, r); err == nil {
		t.Error("WritePlots without intervals.csv: no error")
	}
}

func TestUserPanelsBounded(t *testing.T) {
	t.Parallel()
	var cols []string
	for i := 0; i < maxUserPanels+3; i++ {
		cols = append(cols, "node"+string(rune('1'+i))+".m")
	}
	ups, _ := userPanels(&record.Run{UserMetrics: cols}, nil)
	if len(ups) != maxUserPanels || ups[0].label != "node1.m" {
		t.Fatalf("%d panels, first %q", len(ups), ups[0].label)
	}
	if _, c := userPanels(&record.Run{UserMetrics: cols[:2]}, nil); !strings.Contains(c, "node1.m, node2.m") {
		t.Fatalf("caption %q", c)
	}
	if v := ups[0].value(IntervalPoint{Metrics: map[string]float64{"node1.m": 7}}); v != 7 {
		t.Fatalf("value %v", v)
	}
}
