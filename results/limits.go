package results

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"benchmatrix/catalog"
	"benchmatrix/record"
)

// Resource limits in summary.md's environment and in the fingerprint: the
// conditions a cell ran under (a slow disk, a small machine, pinned CPUs),
// as the plan asked for them, how they were applied, and what the disk
// self-check measured.

// LimitsText prints a limit set for people: sizes with a unit ("2G",
// "8M/s"), "none" when no limit is set.
func LimitsText(l catalog.LimitSet) string {
	var parts []string
	for _, k := range catalog.LimitKeys {
		v := l.Get(k)
		if v == "" {
			continue
		}
		switch k {
		case "disk_write_bps", "disk_read_bps":
			n, _ := strconv.ParseInt(v, 10, 64)
			v = catalog.FormatBytes(n) + "/s"
		case "memory":
			n, _ := strconv.ParseInt(v, 10, 64)
			v = catalog.FormatBytes(n)
		}
		parts = append(parts, k+"="+v)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// planLimits is each planned cell's limits, in plan order: only cells with
// a limit, under the cell's name.
func planLimits(r *record.Run) map[string]string {
	out := map[string]string{}
	for _, c := range r.Plan {
		if _, seen := out[c.Name]; !seen && !c.Limits.IsZero() {
			out[c.Name] = LimitsText(c.Limits)
		}
	}
	return out
}

// writeLimitsEnv writes summary.md's environment rows about limits: which
// cells ran under which limits, the mechanism that applied them, and the
// disk self-check's figures. Nothing when no cell had a limit.
func writeLimitsEnv(w io.Writer, r *record.Run) {
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
		text := LimitsText(c.Limits)
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
