// Package limits is what resource limits add to a run's reports:
// summary.md's Environment rows (which cells ran under which limits, how
// they were applied, the disk self-check), the Conclusion's warnings for a
// limit that never bound, and each cell's line on how much its limits
// bound.
package limits

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"benchmatrix/catalog"
	"benchmatrix/record"
	"benchmatrix/record/parts"
	"benchmatrix/section"
)

// Report is the limits' part of the reports.
//
// Conditions that bind, or a warning: each limit in force is judged on the
// server's own cgroup counters over the measured window
// (parts.AssessBinding, analysis.ObserveBinding), and a limit that never
// bound in any repeat of a cell is a Conclusion warning, because the
// machine it stands for was not created. A read limit on data that fits
// the buffer pool says so with the sizes.
var Report = section.Feature{
	Name:     "limits",
	Env:      writeEnv,
	Warnings: []section.Warnings{{After: "wait_quiet", Lines: func(in section.Conclusion) []string { return bindingWarnings(in.Run) }}},
	Notes: []section.Note{
		{After: "contention", Shows: func(c record.Cell) bool { return c.Binding != nil }, Write: writeBindingNote},
	},
}

// writeEnv writes summary.md's environment rows about limits: which cells
// ran under which limits, the mechanism that applied them, and the disk
// self-check's figures. Nothing when no cell had a limit.
func writeEnv(w io.Writer, r *record.Run) {
	type group struct {
		text  string
		cells []string
	}
	var groups []*group
	by := map[string]*group{}
	seen := map[string]bool{}
	limited := false
	for _, c := range r.Plan {
		if seen[c.Name] {
			continue
		}
		seen[c.Name] = true
		text := c.Limits.Text()
		limited = limited || text != "none"
		g, ok := by[text]
		if !ok {
			g = &group{text: text}
			by[text] = g
			groups = append(groups, g)
		}
		g.cells = append(g.cells, c.Name)
	}
	if !limited {
		return
	}
	var parts []string
	for _, g := range groups {
		if len(groups) == 1 {
			parts = append(parts, g.text+" (every cell)")
			continue
		}
		who := strings.Join(g.cells, ", ")
		if len(g.cells) > 4 {
			who = fmt.Sprintf("%d cells: %s, ...", len(g.cells), strings.Join(g.cells[:3], ", "))
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", g.text, who))
	}
	fmt.Fprintf(w, "| resource limits | %s |\n", strings.Join(parts, "; "))

	var how, checks []string
	seenHow, seenCheck := map[string]bool{}, map[string]bool{}
	for _, c := range r.Cells {
		if l := c.Limits; l != nil && l.Mechanism != "" && l.Mechanism != "none" {
			h := l.Mechanism
			if l.Device != "" {
				h += " on " + l.Device
			}
			if !seenHow[h] {
				seenHow[h] = true
				how = append(how, h)
			}
		}
		if d := c.DiskCheck; d != nil {
			s := fmt.Sprintf("cap %d write IOPS: %.1f device writes/s", d.CapWriteIOPS, d.DeviceWriteIOPS)
			if d.CapWriteIOPS == 0 {
				s = fmt.Sprintf("no write cap: %.1f device writes/s", d.DeviceWriteIOPS)
			}
			s += fmt.Sprintf(", %.0f write+fsync/s, fsync avg %.1f ms, max %.1f ms", d.LoopsPerSec, d.FsyncAvgMs, d.FsyncMaxMs)
			if !seenCheck[s] {
				seenCheck[s] = true
				checks = append(checks, s)
			}
		}
	}
	if len(how) > 0 {
		fmt.Fprintf(w, "| limits applied by | %s (read back before each cell) |\n", strings.Join(how, "; "))
	}
	if len(checks) > 0 {
		fmt.Fprintf(w, "| disk self-check | %s (O_DIRECT 4 KiB writes, an fsync each, in the server's cgroup) |\n", strings.Join(checks, "; "))
	}
}

// bindingWarnings are the Conclusion's warnings for limits that did not
// bind in any successful repeat of a cell: one line per limit and value
// across the cells that had it (warmup.toml had 24 lines, one per limit per
// cell), naming the cells, with the server's peak and mean over them all.
func bindingWarnings(r *record.Run) []string {
	type key struct{ limit, value string }
	type group struct {
		cells []string                        // in the order they ran
		runs  map[string][]parts.LimitBinding // per cell
		first *record.Cell
	}
	var order []key
	groups := map[key]*group{}
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Status != record.CellOK || c.Binding == nil {
			continue
		}
		for _, lb := range c.Binding.Limits {
			if !lb.Measured {
				continue
			}
			k := key{lb.Key, lb.Limit}
			g := groups[k]
			if g == nil {
				g = &group{runs: map[string][]parts.LimitBinding{}, first: c}
				groups[k] = g
				order = append(order, k)
			}
			if g.runs[c.Name] == nil {
				g.cells = append(g.cells, c.Name)
			}
			g.runs[c.Name] = append(g.runs[c.Name], lb)
		}
	}
	var out []string
	for _, k := range order {
		g := groups[k]
		var unbound []string
		var lb parts.LimitBinding
		runs, meanSum := 0, 0.0
		for _, name := range g.cells {
			if slices.ContainsFunc(g.runs[name], func(x parts.LimitBinding) bool { return x.Bound }) {
				continue
			}
			unbound = append(unbound, name)
			for _, x := range g.runs[name] {
				if runs == 0 {
					lb = x
					lb.Seconds, lb.BoundSeconds, lb.Peak = 0, 0, 0
				}
				runs++
				lb.Seconds += x.Seconds
				lb.BoundSeconds += x.BoundSeconds
				lb.Peak = max(lb.Peak, x.Peak)
				meanSum += x.Mean
			}
		}
		if len(unbound) == 0 {
			continue
		}
		lb.Mean = meanSum / float64(runs)
		who := unbound[0]
		if len(unbound) > 1 {
			who = fmt.Sprintf("%d cells (%s)", len(unbound), strings.Join(unbound, ", "))
		}
		w := fmt.Sprintf("%s: %s", who, unboundText(lb, r.Host.Cores))
		if runs > 1 {
			w += fmt.Sprintf(" (over all %d runs of %s)", runs, map[bool]string{true: "it", false: "them"}[len(unbound) == 1])
		}
		if d := dataFits(r, g.first, k.limit); d != "" {
			w += "; " + d
		}
		out = append(out, w)
	}
	return out
}

// unboundText says what a limit that did not bind failed to create.
func unboundText(lb parts.LimitBinding, hostCores int) string {
	never := lb.BoundSeconds == 0
	switch lb.Key {
	case "cpus":
		s := fmt.Sprintf("cpus = %s never throttled", lb.Limit)
		if !never {
			s = fmt.Sprintf("cpus = %s throttled in only %d of %d s", lb.Limit, lb.BoundSeconds, lb.Seconds)
		}
		s += fmt.Sprintf(" (the server used %.2f CPUs on average, %.2f at most)", lb.Mean, lb.Peak)
		if f, err := strconv.ParseFloat(lb.Limit, 64); err == nil && hostCores > 0 && f >= float64(hostCores) {
			s += fmt.Sprintf("; the host has %d CPU%s, fewer than the quota", hostCores, section.Plural(hostCores))
		}
		return s + fmt.Sprintf(": the %s-CPU machine was not created", lb.Limit)
	case "server_cpus":
		return fmt.Sprintf("server_cpus = %s was never full (the server used %.2f CPUs at most): the cpuset did not limit it", lb.Limit, lb.Peak)
	case "memory":
		return fmt.Sprintf("memory = %s never bound: the server's group peaked at %.0f MiB of %.0f MiB (page cache included): the %s machine was not created",
			lb.Limit, lb.Peak/(1<<20), limitBytes(lb)/(1<<20), lb.Limit)
	}
	at := "never at the cap"
	if !never {
		at = fmt.Sprintf("at the cap in only %d of %d s", lb.BoundSeconds, lb.Seconds)
	}
	return fmt.Sprintf("%s = %s %s: the server's %s peaked at %s (mean %s): the disk limit did not slow it",
		lb.Key, lb.Limit, at, directionOf(lb.Key), rateOf(lb, lb.Peak), rateOf(lb, lb.Mean))
}

func directionOf(key string) string {
	if strings.Contains(key, "read") {
		return "reads"
	}
	return "writes"
}

func rateOf(lb parts.LimitBinding, v float64) string {
	if strings.HasSuffix(lb.Key, "_bps") {
		if v >= 1<<20 {
			return fmt.Sprintf("%.1f MiB/s", v/(1<<20))
		}
		return fmt.Sprintf("%.0f KiB/s", v/1024)
	}
	return fmt.Sprintf("%.0f/s", v)
}

func limitBytes(lb parts.LimitBinding) float64 {
	n, err := catalog.ParseBytes(lb.Limit)
	if err != nil {
		return 0
	}
	return float64(n)
}

// dataFits explains a read or memory limit that could not bind: the
// workload's tables (data and indexes, as the cell began) against the
// buffer pool.
func dataFits(r *record.Run, c *record.Cell, key string) string {
	if key != "disk_read_iops" && key != "disk_read_bps" && key != "memory" {
		return ""
	}
	if d := c.Binding.Data; d != nil && d.Engine != "" && d.Engine != "innodb" && d.Sizes != "" {
		// Not InnoDB: the OS page cache holds the data, not the pool
		// (steady.go).
		return d.Sizes
	}
	if c.Growth == nil || c.Growth.BytesBefore <= 0 {
		return ""
	}
	bp := c.Effective["innodb_buffer_pool_size"]
	if bp == "" {
		bp = r.Variables["innodb_buffer_pool_size"]
	}
	pool, err := strconv.ParseInt(bp, 10, 64)
	if err != nil || pool <= 0 {
		if n, err2 := catalog.ParseBytes(bp); err2 == nil {
			pool, err = n, nil
		}
	}
	if err != nil || pool <= 0 {
		return ""
	}
	data := c.Growth.BytesBefore
	if c.Growth.BytesAfter > data {
		data = c.Growth.BytesAfter
	}
	shape := ""
	if d := c.Workload.Data(); len(d.Tables) > 0 && d.RowsPerTable > 0 {
		shape = fmt.Sprintf("%d x %s ", len(d.Tables), rowsText(int(d.RowsPerTable)))
	}
	if key == "memory" {
		limit := c.Limits.Requested.Memory
		if limit <= 0 || pool+data >= limit {
			return ""
		}
		return fmt.Sprintf("the %s buffer pool and the %sdata (%.0f MiB) fit in it with room to spare", catalog.FormatBytes(pool), shape, float64(data)/(1<<20))
	}
	if data > pool {
		return fmt.Sprintf("the %sdata (%.0f MiB) is larger than the %s buffer pool", shape, float64(data)/(1<<20), catalog.FormatBytes(pool))
	}
	return fmt.Sprintf("the %sdata (%.0f MiB) fits the %s buffer pool: the disk read limit could not touch reads", shape, float64(data)/(1<<20), catalog.FormatBytes(pool))
}

func rowsText(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

// writeBindingNote is the cell's line in "What happened in each cell": how
// much each limit in force bound in the measured window.
func writeBindingNote(w io.Writer, c record.Cell) {
	if c.Binding == nil {
		return
	}
	var parts []string
	for _, lb := range c.Binding.Limits {
		t := lb.Text
		if lb.Measured && !lb.Bound {
			t = "**" + t + ": did not bind**"
		}
		parts = append(parts, t)
	}
	fmt.Fprintf(w, "- limits: %s\n", strings.Join(parts, "; "))
}
