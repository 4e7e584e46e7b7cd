package results

import (
	"strings"
	"testing"

	"benchmatrix/catalog"
	"benchmatrix/engine"
	"benchmatrix/limits"
	"benchmatrix/oltp"
	"benchmatrix/record"
	"benchmatrix/record/parts"
	"benchmatrix/section"
)

// bindingWarnings and writeBindingNote are the limits feature's warnings
// and cell note, as results calls them (features.Reports).
func bindingWarnings(r *record.Run) []string {
	return limits.Report.Warnings[0].Lines(section.Conclusion{Run: r})
}

var writeBindingNote = limits.Report.Notes[0].Write

// A cell's limits judged on its sampled cgroup columns (the path the runner
// takes through Observe), and the Conclusion's warning for one that never
// bound, with the data against the buffer pool for a read limit.
func TestBindingWarnings(t *testing.T) {
	cols := []string{"cg_cpu_throttled_periods_s", "cg_cpu_throttled_ms_s", "cg_reads_s", "cg_writes_s", "cpu_server_pct", "cg_memory_mb"}
	mk := func(name string, lim catalog.LimitSet, row []float64) record.Cell {
		c := record.Cell{Name: name, Status: record.CellOK, Result: &engine.Result{Events: 100},
			Limits: &parts.LimitsInForce{Requested: lim}, Effective: map[string]string{},
			Workload: engine.Spec{Engine: "oltp", Options: oltp.Options{Workload: "oltp_read_write", Tables: 4, TableSize: 100000}},
			Growth:   &record.Growth{BytesBefore: 100 << 20, BytesAfter: 100 << 20}}
		for i := 0; i < 20; i++ {
			c.Intervals = append(c.Intervals, engine.Interval{Phase: engine.PhaseRun, Start: 0, End: 1e9, Events: 100})
			c.Metrics = append(c.Metrics, row)
		}
		Observe(&c, cols)
		return c
	}
	r := &record.Run{Host: record.Host{Cores: 2}, Variables: map[string]string{"innodb_buffer_pool_size": "536870912"}}
	r.Cells = []record.Cell{
		mk("big-quota", catalog.LimitSet{CPUs: 8}, []float64{0, 0, 0, 0, 130, 150}),
		mk("read-cap", catalog.LimitSet{DiskReadIOPS: 200}, []float64{0, 0, 1, 0, 130, 150}),
		mk("small-quota", catalog.LimitSet{CPUs: 0.2}, []float64{9, 700, 0, 0, 20, 150}),
		mk("write-cap", catalog.LimitSet{DiskWriteIOPS: 50}, []float64{0, 0, 0, 50, 20, 150}),
		mk("small-vm", catalog.LimitSet{Memory: 2 << 30}, []float64{0, 0, 0, 0, 50, 150}),
	}
	for _, c := range r.Cells {
		if c.Binding == nil || len(c.Binding.Limits) != 1 {
			t.Fatalf("%s: binding %+v", c.Name, c.Binding)
		}
	}
	ws := bindingWarnings(r)
	all := strings.Join(ws, "\n")
	t.Log(all)
	if len(ws) != 3 {
		t.Fatalf("%d warnings, want 3 (the quota of 8, the read cap, the memory limit)", len(ws))
	}
	for _, want := range []string{
		"big-quota: cpus = 8 never throttled",
		"the host has 2 CPUs, fewer than the quota: the 8-CPU machine was not created",
		"read-cap: disk_read_iops = 200 never at the cap",
		"the 4 x 100k data (100 MiB) fits the 512M buffer pool: the disk read limit could not touch reads",
		"small-vm: memory = 2G never bound: the server's group peaked at 150 MiB of 2048 MiB (page cache included): the 2G machine was not created; the 512M buffer pool and the 4 x 100k data (100 MiB) fit in it with room to spare",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings do not say %q", want)
		}
	}
	if strings.Contains(all, "small-quota") || strings.Contains(all, "write-cap") {
		t.Error("a limit that bound is warned about")
	}
	if !strings.Contains(strings.Join(Conclude(r).Warnings, "\n"), "cpus = 8 never throttled") {
		t.Error("the Conclusion does not carry the warning")
	}
	var note strings.Builder
	writeBindingNote(&note, r.Cells[0])
	writeBindingNote(&note, r.Cells[2])
	for _, want := range []string{"- limits: **cpus = 8: throttled in 0 of 20 s (0 ms/s held back): did not bind**", "- limits: cpus = 0.2: throttled in 20 of 20 s (700 ms/s held back)\n"} {
		if !strings.Contains(note.String(), want) {
			t.Errorf("cell notes %q do not say %q", note.String(), want)
		}
	}
	// The same limit unbound in several cells is one line naming them.
	r.Cells = append(r.Cells, mk("small-vm-b", catalog.LimitSet{Memory: 2 << 30}, []float64{0, 0, 0, 0, 50, 180}),
		mk("small-vm-b", catalog.LimitSet{Memory: 2 << 30}, []float64{0, 0, 0, 0, 50, 160}))
	ws = bindingWarnings(r)
	all = strings.Join(ws, "\n")
	if len(ws) != 3 || !strings.Contains(all, "2 cells (small-vm, small-vm-b): memory = 2G never bound: the server's group peaked at 180 MiB of 2048 MiB") ||
		!strings.Contains(all, "(over all 3 runs of them)") {
		t.Errorf("grouped warnings:\n%s", all)
	}
	col, _ := record.ColumnNamed("limits_unbound")
	if got := col.Field(&r.Cells[0]); got != "cpus" {
		t.Errorf("limits_unbound = %q, want cpus", got)
	}
	if got := col.Field(&r.Cells[2]); got != "" {
		t.Errorf("limits_unbound of a binding quota = %q", got)
	}
}
