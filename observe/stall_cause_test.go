package observe

import (
	"math"
	"strings"
	"testing"
)

// causeRows is 30 seconds of every column at its normal value, with the
// stall seconds [10, 13) given their own.
func causeRows(normal, stall map[string]float64) ([]string, []Row) {
	names := Columns()
	rows := make([]Row, 30)
	for i := range rows {
		rows[i].Values = make([]float64, len(names))
		for j, n := range names {
			v, ok := normal[n]
			if !ok {
				v = math.NaN()
			}
			if s, ok := stall[n]; ok && i >= 10 && i < 13 {
				v = s
			}
			rows[i].Values[j] = v
		}
	}
	return names, rows
}

// Each mechanism is named with its evidence when its counters moved in the
// stall seconds against those around, and nothing is named when none did.
func TestLikelyCauses(t *testing.T) {
	t.Parallel()
	base := map[string]float64{"cpu_server_pct": 120, "redo_kb_s": 900, "disk_iops": 400, "threads_running": 2,
		"checkpoint_age_kb": 20000, "pages_flushed_s": 100, "dirty_pages": 3000, "disk_await_ms": 1.5,
		"row_lock_current_waits": 0, "disk_util_pct": 30, "cg_writes_s": 40, "disk_other_kb_s": 0}
	eps := []Episode{{Start: 10, End: 13, Min: 0, Zero: true}}
	cases := []struct {
		name  string
		stall map[string]float64
		cx    CauseContext
		want  []string // all in the one cause, in this order
	}{
		{"checkpoint age and flushing", map[string]float64{"checkpoint_age_kb": 94000, "pages_flushed_s": 800, "cpu_server_pct": 40, "redo_kb_s": 0},
			CauseContext{LogCapacityKB: 100 * 1024},
			[]string{"stall at 10-13 s: likely cause: checkpoint age at 92% of the log capacity (94000 of 102400 KiB)", "pages flushed 8.0x the median around (100 → 800)"}},
		{"checkpoint age without a capacity", map[string]float64{"checkpoint_age_kb": 90000}, CauseContext{},
			[]string{"checkpoint age 4.5x the median around (20000 → 90000)"}},
		{"row lock waits", map[string]float64{"row_lock_current_waits": 4, "cpu_server_pct": 10, "redo_kb_s": 0},
			CauseContext{}, []string{"row lock waits 4 in the stall seconds (0 around)"}},
		{"a lock no counter sees", map[string]float64{"cpu_server_pct": 3, "redo_kb_s": 0, "disk_iops": 5, "threads_running": 3},
			CauseContext{}, []string{"a lock the row lock counters do not see", "CPU 120% → 3%, redo KiB/s 900 → 0) with 3 sessions inside statements (2 around)"}},
		{"IO at the cap", map[string]float64{"cg_writes_s": 99, "cpu_server_pct": 10, "redo_kb_s": 50, "disk_await_ms": 1.5},
			CauseContext{WriteIOPS: 100}, []string{"IO at the cap: the server's write IOs/s at 99 of 100 in 3 of 3 stall seconds"}},
		{"a cap that binds throughout", map[string]float64{"pages_flushed_s": 900}, CauseContext{WriteIOPS: 40},
			[]string{"pages flushed 9.0x", "IO at the cap: the server's write IOs/s at 40 of 40 in 3 of 3 stall seconds (and in 20 of 20 seconds around: the cap binds throughout)"}},
		{"device latency", map[string]float64{"disk_await_ms": 40}, CauseContext{},
			[]string{"device await (ms) 27x the median around (1.5 → 40)"}},
		{"a stalled client (the sampler alone in a statement)", map[string]float64{"cpu_server_pct": 3, "redo_kb_s": 0, "threads_running": 1},
			CauseContext{}, []string{"stall at 10-13 s: cause not visible in the sampled counters"}},
		{"device latency with other IO", map[string]float64{"disk_await_ms": 40, "disk_other_kb_s": 90000}, CauseContext{},
			[]string{"device await (ms) 27x the median around (1.5 → 40), with other processes' IO on the device (KiB/s) 90000 in the stall seconds (0 around)"}},
		{"nothing moved", map[string]float64{"cpu_server_pct": 110}, CauseContext{},
			[]string{"stall at 10-13 s: cause not visible in the sampled counters"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			names, rows := causeRows(base, c.stall)
			got := LikelyCauses(names, rows, eps, c.cx)
			if len(got) != 1 {
				t.Fatalf("%d causes, want 1", len(got))
			}
			text := got[0].Text()
			at := 0
			for _, w := range c.want {
				i := strings.Index(text[at:], w)
				if i < 0 {
					t.Fatalf("%q\ndoes not say %q (in this order)", text, w)
				}
				at += i + len(w)
			}
			if strings.Contains(strings.Join(c.want, ""), "not visible") != (len(got[0].Causes) == 0) {
				t.Errorf("causes %q", got[0].Causes)
			}
		})
	}
	// A node's flow control (a node column after the server's).
	names, rows := causeRows(base, nil)
	names = append(names, "node2.wsrep_flow_control_paused")
	for i := range rows {
		v := 0.0
		if i >= 10 && i < 13 {
			v = 0.8
		}
		rows[i].Values = append(rows[i].Values, v)
	}
	got := LikelyCauses(names, rows, eps, CauseContext{})
	if len(got) != 1 || !strings.Contains(got[0].Text(), "flow control: node2.wsrep_flow_control_paused 80% of the stall seconds (0% around)") {
		t.Errorf("flow control: %+v", got)
	}
	if LikelyCauses(names, rows, nil, CauseContext{}) != nil || LikelyCauses(names, nil, eps, CauseContext{}) != nil {
		t.Error("no stall or no rows must give no cause")
	}
}
