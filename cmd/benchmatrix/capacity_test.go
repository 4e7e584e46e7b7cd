package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// floodManifest: two cells against a latency target, both offered far more
// than one worker serves on any machine: flood at its own rate (judged
// only), and above, searched from a first rate 200,000/s down for three
// steps (every one of them above capacity, so nothing meets the target and
// the run is offered the lowest rate tried). The target is p95 < 1ms: with
// p95 < 1s, a search step at 50,000/s met it twice on a quiet host (one
// worker served about 33,000/s; the run at that rate then had p95 1.3 s),
// with 1 s steps and with 6 s ones. A queue behind a worker that cannot
// keep up passes 1 ms within milliseconds, whatever the host.
const floodManifest = `
[experiment]
name = "flood"
duration = "4s"
warmup = "1s"
slo = "p95 < 1ms"
slo_start = 200000
slo_step = "6s"
slo_max_steps = 3
slo_retests = 0
drain = false

[workload]
name = "oltp_point_select"
tables = 1
table_size = 1000
threads = 1

[scenarios]
flood = { rate = 100000 }
above = { }
`

// A rate far above capacity, through the command: the run finishes, exits
// 0 with every cell ok, each cell failed for its target (misses; above the
// SLO even at the lowest rate), the backlog reported in cells.csv and
// run.json and the Conclusion; no panic, no server left behind.
func TestCapacityFloodExitsZero(t *testing.T) {
	needServer(t)
	out := filepath.Join(t.TempDir(), "r")
	cmd := exec.Command(binary, "run", writeManifest(t, floodManifest), "-o", out)
	got, err := cmd.CombinedOutput()
	if code := exitStatus(err); code != 0 {
		t.Fatalf("exit %d (want 0: a flood is a measurement, not a failure):\n%s", code, got)
	}
	if strings.Contains(string(got), "panic") || strings.Contains(string(got), "event queue is full") {
		t.Fatalf("the run crashed or aborted:\n%s", got)
	}
	if left := serversOf(cmd.Process.Pid); len(left) > 0 {
		t.Errorf("server processes left: %v", left)
	}
	if left := sandboxDirsOf(cmd.Process.Pid); len(left) > 0 {
		t.Errorf("sandbox directories left: %v", left)
	}

	f, err := os.Open(filepath.Join(out, "cells.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	cells := map[string][]string{}
	for _, r := range rows[1:] {
		cells[r[col["cell"]]] = r
	}
	for name, want := range map[string][]string{
		"flood": {"p95 < 1ms: misses; at 100000/s"},
		"above": {"p95 < 1ms: above the SLO even at the lowest rate (50000/s missed it)", "at 50000/s"},
	} {
		r, ok := cells[name]
		if !ok {
			t.Fatalf("cells.csv has no cell %s:\n%v", name, rows)
		}
		if r[col["status"]] != "ok" {
			t.Errorf("%s: status %q %q, want ok", name, r[col["status"]], r[col["error"]])
		}
		text := r[col["capacity_slo"]]
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: capacity_slo %q lacks %q", name, text, w)
			}
		}
		// The arrivals never served are reported: a backlog or drops, or
		// (when no event of the window completed) the queue's count.
		if !strings.Contains(text, "backlog") && !strings.Contains(text, "queued") {
			t.Errorf("%s: capacity_slo %q reports no backlog", name, text)
		}
	}
	if v := cells["above"][col["capacity"]]; v != "0" && v != "0.0" {
		t.Errorf("above: capacity %q, want 0 (no rate met the target)", v)
	}
	if v := cells["flood"][col["capacity"]]; v != "" {
		t.Errorf("flood: capacity %q, want none (a cell with its own rate is only judged)", v)
	}

	b, err := os.ReadFile(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cells []struct {
			Name     string `json:"name"`
			Capacity *struct {
				Run *struct {
					Events  int64  `json:"events"`
					Backlog int64  `json:"backlog"`
					Dropped int64  `json:"dropped"`
					Verdict string `json:"verdict"`
				} `json:"run"`
			} `json:"capacity"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range doc.Cells {
		if c.Capacity == nil || c.Capacity.Run == nil {
			t.Errorf("run.json: %s has no judged run", c.Name)
			continue
		}
		r := c.Capacity.Run
		if r.Verdict != "misses" || r.Backlog+r.Dropped == 0 {
			t.Errorf("run.json: %s's run: verdict %q, backlog %d, dropped %d; want a miss with its backlog", c.Name, r.Verdict, r.Backlog, r.Dropped)
		}
		t.Logf("%s: %d events served, %d queued at the end, %d dropped", c.Name, r.Events, r.Backlog, r.Dropped)
	}
	sum, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"flood at its own rate 100000/s against p95 < 1ms: misses", "above: **" + "above the SLO even at the lowest rate" + "**"} {
		if !strings.Contains(string(sum), w) {
			t.Errorf("summary.md lacks %q", w)
		}
	}
}
