package results

import (
	"fmt"
	"io"
	"math"
	"strings"

	"benchmatrix/catalog"
	"benchmatrix/record"
	"benchmatrix/record/parts"
)

// What a cell's time to a steady state and its data against memory were,
// in words (decided by analysis/steady.go: SettleRule, ObserveWarmth).

// steadyText is a cell's time to a steady state in words.
func steadyText(st *parts.SteadyState) string {
	if st == nil {
		return ""
	}
	var what []string
	for _, s := range st.Series {
		t := fmt.Sprintf("%s %s", s.Series, settledText(s))
		what = append(what, t)
	}
	head := fmt.Sprintf("reached steady state after %.0f s", st.Seconds)
	if st.Seconds == 0 {
		head = "was steady from its first second"
	}
	if !st.Settled {
		head = "did not reach a steady state within its run"
	}
	if st.AutoWarmup {
		head += fmt.Sprintf(" (warmup = \"auto\" ended the warm-up after %.0f s by the same rule)", st.AutoSeconds)
	}
	return head + ": " + strings.Join(what, ", ")
}

func settledText(s parts.Settled) string {
	level := func(v float64) string {
		if math.Abs(v) >= 10 {
			return fmt.Sprintf("%.0f", v)
		}
		return fmt.Sprintf("%.1f", v)
	}
	if !s.Settled {
		return fmt.Sprintf("still moving (%s/s at first, %s/s at the end)", level(s.First), level(s.Level))
	}
	if s.Seconds == 0 {
		return fmt.Sprintf("steady from the first second (%s/s ± %s)", level(s.Level), level(s.Band))
	}
	return fmt.Sprintf("settled at %.0f s (%s/s at first, %s/s ± %s from then)", s.Seconds, level(s.First), level(s.Level), level(s.Band))
}

// writeWarmthNote is the cell's line in "What happened in each cell": the
// cold start, the time to a steady state and the data against memory.
func writeWarmthNote(w io.Writer, c record.Cell) {
	if cs := c.ColdStart; cs != nil {
		fmt.Fprintf(w, "- cold start: %s\n", coldStartText(cs))
	}
	if t := steadyText(c.Steady); t != "" {
		fmt.Fprintf(w, "- %s\n", t)
	}
	if c.Binding != nil && c.Binding.Data != nil {
		fmt.Fprintf(w, "- data against memory: %s\n", c.Binding.Data.Text)
	}
}

func coldStartText(cs *parts.ColdStart) string {
	var parts []string
	if cs.Restarted {
		parts = append(parts, "restarted once the data was in place")
	}
	if cs.Why != "" {
		parts = append(parts, cs.Why)
	}
	if cs.PageCache {
		parts = append(parts, fmt.Sprintf("%d datadir files dropped from the page cache (%.1f MiB cached before, %.1f MiB after)",
			cs.Files, float64(cs.CachedBefore)/(1<<20), float64(cs.CachedAfter)/(1<<20)))
	} else if cs.PageCacheWhy != "" {
		parts = append(parts, "page cache not dropped: "+cs.PageCacheWhy)
	}
	if cs.PoolDataBytes >= 0 {
		parts = append(parts, fmt.Sprintf("the buffer pool then held %.1f MiB of data", float64(cs.PoolDataBytes)/(1<<20)))
	}
	return strings.Join(parts, "; ")
}

// dataWarnings are the Conclusion's warnings for cells under a memory
// limit (a preset that stands for a small machine, there to create memory
// pressure) whose data fit what holds it in every repeat: the memory
// pressure of that machine was not created.
func dataWarnings(r *record.Run) []string {
	var order []string
	fits := map[string]bool{}
	first := map[string]*parts.DataMemory{}
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Status != record.CellOK || c.Binding == nil || c.Binding.Data == nil || c.Limits == nil || c.Limits.Requested.Memory <= 0 {
			continue
		}
		d := c.Binding.Data
		if d.DataBytes <= 0 || d.Ratio <= 0 {
			continue
		}
		if _, ok := first[c.Name]; !ok {
			order = append(order, c.Name)
			first[c.Name], fits[c.Name] = d, true
		}
		fits[c.Name] = fits[c.Name] && d.Fits
	}
	var out []string
	for _, name := range order {
		if fits[name] {
			out = append(out, fmt.Sprintf("%s: %s: the memory pressure of a %s machine was not created",
				name, first[name].Text, catalog.FormatBytes(memoryOf(r, name))))
		}
	}
	return out
}

func memoryOf(r *record.Run, name string) int64 {
	for _, c := range r.Cells {
		if c.Name == name && c.Limits != nil {
			return c.Limits.Requested.Memory
		}
	}
	return 0
}

// readsPanel draws the server's reads from the disk per second (its
// cgroup's, else the buffer pool's misses) in runs that start cells cold
// or warm up until steady: the climb from cold is the pool filling.
func readsPanel(r *record.Run, runs []cellRun) ([]seriesPanel, string) {
	cold := false
	for _, c := range r.Cells {
		cold = cold || c.ColdStart != nil || (c.Steady != nil && c.Steady.AutoWarmup)
	}
	if !cold {
		return nil, ""
	}
	col := ""
	for _, name := range []string{"cg_reads_s", "bp_disk_reads_s"} {
		for _, cr := range runs {
			for _, p := range cr.points {
				if _, ok := p.Metrics[name]; ok && col == "" {
					col = name
				}
			}
		}
	}
	if col == "" {
		return nil, ""
	}
	label, caption := "server reads/s (cgroup)", " Last: the server's reads from the disk per second (its cgroup's): a cold start's climb is the buffer pool or the page cache filling."
	if col == "bp_disk_reads_s" {
		label, caption = "buffer pool misses/s", " Last: buffer-pool misses per second (pages read from the disk): a cold start's climb is the pool filling."
	}
	return []seriesPanel{{label: label, min0: true, value: func(p IntervalPoint) float64 {
		if v, ok := p.Metrics[col]; ok {
			return v
		}
		return math.NaN()
	}}}, caption
}
