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

// flush-profile's question: every scenario is predicted against the
// baseline and every adjacent pair of the expected ordering (b0e0 against
// b0e1 too, which the baseline comparisons never made), each with the
// measured ratio beside it, and summary.md shows every pair.
func TestProfilePredictsEveryAdjacentPair(t *testing.T) {
	dir := t.TempDir()
	stacks := map[string]string{
		// Samples of the connection thread: b0e1 no longer syncs the binary
		// log, b0e0 syncs nothing at commit.
		"b1e1": "mariadbd;do_command;commit;binlog_sync 40\nmariadbd;do_command;commit;redo_sync 30\nmariadbd;do_command;work 30\n",
		"b0e1": "mariadbd;do_command;commit;redo_sync 30\nmariadbd;do_command;work 30\n",
		"b0e0": "mariadbd;do_command;work 30\n",
	}
	events := map[string]int64{"b1e1": 1000, "b0e1": 1700, "b0e0": 3300}
	var cells []record.Cell
	for _, sc := range []string{"b1e1", "b0e1", "b0e0"} {
		rel := filepath.Join("profiles", sc+"-r1", "cpu.folded")
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(stacks[sc]), 0o644); err != nil {
			t.Fatal(err)
		}
		cells = append(cells, record.Cell{Name: sc, Scenario: sc, Repeat: 1, Status: record.CellOK,
			Result:  &engine.Result{Events: events[sc], Elapsed: 10e9},
			Profile: &record.CellProfile{Mode: "cpu", Seconds: 10, CPU: &record.ModeProfile{Records: 100, Seconds: 1, Folded: rel}}})
	}
	manifest := "[experiment]\nname = \"fp\"\nbaseline = \"b1e1\"\nexpect = [\"b1e1 < b0e1 < b0e0\"]\n[workload]\nname = \"oltp_insert\"\n" +
		"[scenarios]\nb1e1 = { sync_binlog = 1 }\nb0e1 = { sync_binlog = 0 }\nb0e0 = { sync_binlog = 0, innodb_flush_log_at_trx_commit = 0 }\n"
	r := &record.Run{Manifest: manifest, ManifestPath: "fp.toml", Baseline: "b1e1", Cells: cells}
	rep := profileReport(dir, r)
	type pair struct{ cell, ref string }
	want := map[pair][2]float64{ // predicted, measured
		{"b0e1", "b1e1"}: {1 / 0.6, 1.7},
		{"b0e0", "b1e1"}: {1 / 0.3, 3.3},
		{"b0e0", "b0e1"}: {2, 3300.0 / 1700},
	}
	if len(rep.Comparisons) != len(want) {
		t.Fatalf("%d comparisons, want %d: %+v", len(rep.Comparisons), len(want), rep.Comparisons)
	}
	for _, c := range rep.Comparisons {
		w, ok := want[pair{c.Cell, c.Baseline}]
		if !ok || c.CPU == nil {
			t.Fatalf("unexpected comparison %s vs %s (%+v)", c.Cell, c.Baseline, c.CPU)
		}
		if math.Abs(c.CPU.Ratio-w[0]) > 1e-9 || math.Abs(c.Measured-w[1]) > 1e-9 {
			t.Errorf("%s vs %s: predicted %.4f, measured %.4f; want %.4f, %.4f", c.Cell, c.Baseline, c.CPU.Ratio, c.Measured, w[0], w[1])
		}
		if c.DiffCPU == "" {
			t.Errorf("%s vs %s: no differential graph", c.Cell, c.Baseline)
		} else if _, err := os.Stat(filepath.Join(dir, c.DiffCPU)); err != nil {
			t.Error(err)
		}
	}
	r.Profiles = rep
	linked := strings.Join(profileLinkedLines(r), "\n")
	for _, w := range []string{
		"b0e1 against b1e1, from the profiles (on-CPU time): 40.0% of b1e1's time is in call paths b0e1 no longer runs (binlog_sync 40%), which predicts 1.67x; measured 1.70x (profiled cells): the time gone accounts for the difference",
		"b0e0 against b0e1, from the profiles (on-CPU time): 50.0% of b0e1's time is in call paths b0e0 no longer runs (commit 50%), which predicts 2.00x; measured 1.94x (profiled cells): the time gone accounts for the difference",
	} {
		if !strings.Contains(linked, w) {
			t.Errorf("the Conclusion's lines lack %q:\n%s", w, linked)
		}
	}
	var b bytes.Buffer
	writeProfiles(&b, r)
	for _, row := range []string{"| b0e1 | b1e1 | on-CPU | 40.0% | 1.667 | 1.700 |", "| b0e0 | b1e1 | on-CPU | 70.0% | 3.333 | 3.300 |", "| b0e0 | b0e1 | on-CPU | 50.0% | 2.000 | 1.941 |"} {
		if !strings.Contains(b.String(), row) {
			t.Errorf("summary lacks %q:\n%s", row, b.String())
		}
	}
}
