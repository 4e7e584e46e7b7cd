package results

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"benchmatrix/analysis"
	"benchmatrix/experiment"
	"benchmatrix/record"
	"benchmatrix/section"
)

// What compare knows beyond the figures (issue 26): what changed in each
// cell between the runs, what else loaded the host while each run measured
// it, and each cell's ratio to its baseline within each run.
//
// The gate and the host. A worsening measured under contention in one run
// and not in the other (or under more of it: a larger share of contended
// repeats, or, contended throughout, other processes' CPU or steal higher
// by the thresholds that flag an interval) may be the host's doing; so may
// one measured under contention in both runs, since contention comes and
// goes and its medians say little about the moments that hit one cell. It
// still counts as a regression when it survives the contention, that is
// when either
//
//  1. it persists in the uncontended repeats alone: the same test (median,
//     Mann-Whitney U, threshold) over the repeats neither run measured
//     under contention still finds it; or
//  2. the cell's settings changed and it lost more than the cells whose
//     settings did not change, measured in the same rounds under the same
//     contention: per round, within each run, the cell's figure divided by
//     the control's (the unchanged cell the contention hurt most, so that a
//     cell more sensitive to contention than the others is not taken for a
//     regression), compared between the runs with the U test; significant
//     and worse by more than the threshold. The within-run pairing cancels
//     what the host did to the round, the most-hurt control bounds what the
//     recorded contention can explain.
//
// A cell whose settings did not change has no cause but the host (or the
// tool, whose version compare lists): only rule 1 can make its worsening
// count. A worsening that survives neither rule is reported, with both
// runs' contention, and not counted; `compare` then exits 0 and says why.
// Rule 2 also finds a slowdown of a changed cell that contention hid (not
// significant on the raw figures, significant against the control).

// HostLoad is what else used the host while a run measured a cell: its
// repeats' contention records (observe.Contention) summed up.
type HostLoad struct {
	// Repeats is the number of successful repeats with a contention
	// record; 0 when the run recorded none (the figures are then 0).
	Repeats   int `json:"repeats"`
	Contended int `json:"contended"` // repeats flagged as contended
	// Medians over the repeats of each repeat's median: CPU used by other
	// processes (% of one CPU), steal (% of all CPUs), other IO (KiB/s).
	CPUOtherPct float64 `json:"cpu_other_pct"`
	StealPct    float64 `json:"steal_pct"`
	IOOtherKBs  float64 `json:"disk_other_kb_s"`
	Why         string  `json:"why,omitempty"` // of the first contended repeat
}

func hostLoad(cells []*record.Cell) HostLoad {
	var h HostLoad
	var cpu, steal, io []float64
	for _, c := range cells {
		ct := c.Contention
		if ct == nil || ct.Intervals == 0 {
			continue
		}
		h.Repeats++
		cpu, steal, io = append(cpu, ct.CPUOtherPct), append(steal, ct.StealPct), append(io, ct.IOOtherKBs)
		if ct.Contended {
			h.Contended++
			if h.Why == "" {
				h.Why = ct.Why
			}
		}
	}
	h.CPUOtherPct, h.StealPct, h.IOOtherKBs = record.Median(cpu), record.Median(steal), record.Median(io)
	return h
}

// String is "contended in 4 of 4 repeats (other CPU 150%, steal 0%, other
// IO 12 KiB/s)", "quiet (...)" or "not recorded".
func (h HostLoad) String() string {
	if h.Repeats == 0 {
		return "not recorded"
	}
	figs := fmt.Sprintf("other CPU %.0f%%, steal %.0f%%, other IO %.0f KiB/s", h.CPUOtherPct, h.StealPct, h.IOOtherKBs)
	if h.Contended == 0 {
		return fmt.Sprintf("quiet in %d repeat%s (%s)", h.Repeats, section.Plural(h.Repeats), figs)
	}
	return fmt.Sprintf("contended in %d of %d repeats (%s)", h.Contended, h.Repeats, figs)
}

// cellChanges lists what differs in one cell between the runs: the server
// variables read back (else the parameters asked for) and the limits, as
// "sync_binlog 0 -> 1".
func cellChanges(b, n *cellGroup, bLimits, nLimits map[string]string) []string {
	var out []string
	seen := map[string]bool{}
	be, ne := b.effective(), n.effective()
	if len(be) > 0 && len(ne) > 0 {
		for _, k := range record.UnionKeys(be, ne) {
			seen[k] = true
			if bv, nv := record.ValueOr(be, k), record.ValueOr(ne, k); bv != nv {
				out = append(out, k+" "+bv+" -> "+nv)
			}
		}
	}
	bp, np := paramMap(b.params), paramMap(n.params)
	for _, k := range record.UnionKeys(bp, np) {
		if seen[k] {
			continue
		}
		if bv, nv := record.ValueOr(bp, k), record.ValueOr(np, k); bv != nv {
			out = append(out, k+" "+bv+" -> "+nv)
		}
	}
	bl, nl := bLimits[b.name], nLimits[n.name]
	if bl == "" {
		bl = "none"
	}
	if nl == "" {
		nl = "none"
	}
	if bl != nl {
		out = append(out, "limits "+bl+" -> "+nl)
	}
	return out
}

func paramMap(ps []experiment.Param) map[string]string {
	m := make(map[string]string, len(ps))
	for _, p := range ps {
		m[p.Name] = p.Value
	}
	return m
}

// runChanges are the differences that concern every cell: the server.
func runChanges(base, new *record.Run) []string {
	var out []string
	if b, n := string(base.Server.Flavor), string(new.Server.Flavor); b != n {
		out = append(out, "server flavor "+b+" -> "+n)
	}
	if b, n := base.Server.Version, new.Server.Version; b != n {
		out = append(out, "server version "+b+" -> "+n)
	}
	return out
}

// judgeHost applies the rules above to every matched cell: it fills each
// cell's host figures and, where one run only was contended, decides
// whether each worsening survives. i indexes c.Cells, bg and ng the runs'
// cell groups.
func judgeHost(c *Comparison, bg, ng cellGroups, opt CompareOptions) {
	type pair struct{ b, n *cellGroup }
	groups := make([]pair, len(c.Cells))
	for i, cc := range c.Cells {
		groups[i] = pair{bg.byName(cc.Name), ng.byName(cc.Name)}
		c.Cells[i].BaseHost, c.Cells[i].NewHost = hostLoad(groups[i].b.cells), hostLoad(groups[i].n.cells)
	}
	for i := range c.Cells {
		cc := &c.Cells[i]
		side, where := contendedSide(cc.BaseHost, cc.NewHost)
		if where != "" {
			cc.Contention = "measured under contention " + where
		}
		for mi := range cc.Metrics {
			mc := &cc.Metrics[mi]
			mc.ContendedSide = side
			if side == "" {
				continue
			}
			changed := len(cc.Changes) > 0 || len(c.RunChanges) > 0
			if !mc.Regression && !(changed && mc.Verdict != Better) {
				continue
			}
			// Rule 1: the uncontended repeats alone.
			bq, nq := uncontended(groups[i].b), uncontended(groups[i].n)
			q := compareMetric(compareMetrics[mi], bq.cells, nq.cells, opt)
			if q.Regression {
				mc.Regression = true
				mc.HostNote = fmt.Sprintf("survives it: persists in the uncontended repeats (%d vs %d: %s, p=%s)",
					len(bq.ok), len(nq.ok), formatDelta(q.DeltaPct), analysis.FormatP(q.P))
				continue
			}
			// Rule 2: against the most-hurt unchanged cell, per round.
			if changed && len(c.RunChanges) == 0 {
				if ok, why := survivesControl(c, i, mi, bg, ng, opt); ok {
					mc.Regression = true
					mc.HostNote = "survives it: " + why
					continue
				} else if mc.Regression {
					mc.HostNote = fmt.Sprintf("does not survive it: %s, and %s", quietText(bq, nq, q), why)
				}
			} else if mc.Regression {
				mc.HostNote = fmt.Sprintf("does not survive it: %s, and the cell's settings did not change (nothing but the host explains it)", quietText(bq, nq, q))
				if len(c.RunChanges) > 0 {
					mc.HostNote = fmt.Sprintf("does not survive it: %s (every cell's server changed, so no unchanged cell measures what the contention did)", quietText(bq, nq, q))
				}
			}
			if mc.Regression {
				mc.Regression, mc.Discounted = false, true
			}
		}
	}
}

// Levels of contention that differ: other processes' CPU by more than
// this many % of one CPU, steal by more than this many % of all CPUs (the
// thresholds observe.AssessContention flags an interval at).
const (
	cpuLevelDiff   = 25.0
	stealLevelDiff = 10.0
)

// contendedSide says whether the two runs measured a cell under different
// contention, and which run had more: "base" or "new" when the share of
// contended repeats differs, or, both runs contended in every repeat
// alike, when the level differs (other CPU by more than cpuLevelDiff,
// steal by more than stealLevelDiff); "both" when both were contended
// alike; "" when neither was (or a run recorded nothing). where is how
// the notes say it.
func contendedSide(bh, nh HostLoad) (side, where string) {
	if bh.Repeats == 0 || nh.Repeats == 0 || (bh.Contended == 0 && nh.Contended == 0) {
		return "", ""
	}
	bf, nf := float64(bh.Contended)/float64(bh.Repeats), float64(nh.Contended)/float64(nh.Repeats)
	switch {
	case bf > nf && nh.Contended == 0:
		return "base", "in the base run only"
	case nf > bf && bh.Contended == 0:
		return "new", "in the new run only"
	case bf > nf:
		return "base", fmt.Sprintf("in more repeats of the base run (%d of %d, new %d of %d)", bh.Contended, bh.Repeats, nh.Contended, nh.Repeats)
	case nf > bf:
		return "new", fmt.Sprintf("in more repeats of the new run (%d of %d, base %d of %d)", nh.Contended, nh.Repeats, bh.Contended, bh.Repeats)
	}
	dc, ds := nh.CPUOtherPct-bh.CPUOtherPct, nh.StealPct-bh.StealPct
	level := func(more string) string {
		hi, lo := nh, bh
		if more == "base" {
			hi, lo = bh, nh
		}
		return fmt.Sprintf("that was heavier in the %s run (other CPU %.0f%% vs %.0f%% of a CPU, steal %.0f%% vs %.0f%%)",
			more, hi.CPUOtherPct, lo.CPUOtherPct, hi.StealPct, lo.StealPct)
	}
	switch {
	case dc > cpuLevelDiff || ds > stealLevelDiff:
		return "new", level("new")
	case -dc > cpuLevelDiff || -ds > stealLevelDiff:
		return "base", level("base")
	}
	return "both", "in both runs, alike"
}

func quietText(bq, nq *cellGroup, q MetricComparison) string {
	if len(bq.ok) == 0 || len(nq.ok) == 0 {
		return "no uncontended repeat is left on one side to check it"
	}
	return fmt.Sprintf("gone in the uncontended repeats (%d vs %d: %s, p=%s)", len(bq.ok), len(nq.ok), formatDelta(q.DeltaPct), analysis.FormatP(q.P))
}

// uncontended is g without its contended repeats.
func uncontended(g *cellGroup) *cellGroup {
	out := &cellGroup{name: g.name}
	for k, c := range g.cells {
		if c.Contention != nil && c.Contention.Contended {
			continue
		}
		out.ok, out.cells = append(out.ok, g.ok[k]), append(out.cells, c)
	}
	return out
}

// survivesControl is rule 2 for metric mi of cell i.
func survivesControl(c *Comparison, i, mi int, bg, ng cellGroups, opt CompareOptions) (bool, string) {
	m := compareMetrics[mi]
	b, n := bg.byName(c.Cells[i].Name), ng.byName(c.Cells[i].Name)
	// The unchanged cell the contention hurt most on this metric.
	control, worst := -1, 0.0
	for j, o := range c.Cells {
		if j == i || len(o.Changes) > 0 || mi >= len(o.Metrics) {
			continue
		}
		om := o.Metrics[mi]
		if om.Base.N == 0 || om.New.N == 0 || om.Base.Median == 0 {
			continue
		}
		r := om.New.Median / om.Base.Median
		if !m.higherIsBetter {
			r = 1 / r
		}
		if control < 0 || r < worst {
			control, worst = j, r
		}
	}
	if control < 0 {
		return false, "no cell kept its settings to measure what the contention did"
	}
	name := c.Cells[control].Name
	bx := perRoundLogRatio(b, bg.byName(name), m.value)
	nx := perRoundLogRatio(n, ng.byName(name), m.value)
	if len(bx) == 0 || len(nx) == 0 {
		return false, fmt.Sprintf("no round measured both it and %s", name)
	}
	u, err := analysis.MannWhitneyU(bx, nx)
	shift := math.Exp(record.Median(nx) - record.Median(bx)) // new over base, of the cell/control ratio
	delta := (shift - 1) * 100
	worse := delta < -opt.Threshold
	if !m.higherIsBetter {
		worse = delta > opt.Threshold
	}
	p := 1.0
	if err == nil {
		p = u.P
	}
	text := fmt.Sprintf("against %s (unchanged, the cell the contention hurt most), measured in the same rounds, it moved %s (p=%s, %d vs %d rounds)",
		name, formatDelta(delta), analysis.FormatP(p), len(bx), len(nx))
	return worse && p < opt.Alpha, text
}

// perRoundLogRatio is ln(cell/control) per round (repeat) both finished,
// in repeat order.
func perRoundLogRatio(cell, control *cellGroup, value func(*record.Cell) float64) []float64 {
	ctl := map[int]float64{}
	for k, c := range control.cells {
		ctl[c.Repeat] = value(control.cells[k])
	}
	var reps []int
	vals := map[int]float64{}
	for k, c := range cell.cells {
		if y, ok := ctl[c.Repeat]; ok {
			x := value(cell.cells[k])
			if x > 0 && y > 0 {
				vals[c.Repeat] = math.Log(x / y)
				reps = append(reps, c.Repeat)
			}
		}
	}
	sort.Ints(reps)
	out := make([]float64, len(reps))
	for k, rep := range reps {
		out[k] = vals[rep]
	}
	return out
}

// hostLines is the per-cell text under the comparison table: what changed,
// the host in each run, the ratio to the baseline within each run, and how
// the contention was judged; one entry per cell, its first line the cell.
func hostLines(c *Comparison) [][]string {
	var out [][]string
	for _, cc := range c.Cells {
		var parts []string
		if len(cc.Changes) > 0 {
			parts = append(parts, "changed: "+strings.Join(cc.Changes, ", "))
		}
		if cc.BaseHost.Repeats > 0 || cc.NewHost.Repeats > 0 {
			parts = append(parts, "host: base "+cc.BaseHost.String()+"; new "+cc.NewHost.String())
		}
		if cc.BaseRatio != nil || cc.NewRatio != nil {
			var bl, fig string
			var b, n = "-", "-"
			if cc.BaseRatio != nil {
				bl, b, fig = cc.BaseRatio.Baseline, RatioText(cc.BaseRatio.Ratio), cc.BaseRatio.Headline().Label
			}
			if cc.NewRatio != nil {
				bl, n, fig = cc.NewRatio.Baseline, RatioText(cc.NewRatio.Ratio), cc.NewRatio.Headline().Label
			}
			if cc.BaseRatio != nil && cc.NewRatio != nil && cc.BaseRatio.Headline().Label != cc.NewRatio.Headline().Label {
				fig = "base " + cc.BaseRatio.Headline().Label + ", new " + cc.NewRatio.Headline().Label // a run.json from before headlines against a new one
			}
			parts = append(parts, fmt.Sprintf("%s vs %s within each run (paired rounds, as in summary.md): base %s, new %s", fig, bl, b, n))
		}
		// Metrics with the same note share it: "tps, p95, p99 ...".
		var notes []string
		byNote := map[string][]string{}
		for _, mc := range cc.Metrics {
			if mc.HostNote == "" {
				continue
			}
			if _, ok := byNote[mc.HostNote]; !ok {
				notes = append(notes, mc.HostNote)
			}
			byNote[mc.HostNote] = append(byNote[mc.HostNote], mc.Metric)
		}
		if len(notes) > 0 {
			parts = append(parts, cc.Contention)
		}
		for _, n := range notes {
			parts = append(parts, strings.Join(byNote[n], ", ")+" "+n)
		}
		if len(parts) > 0 {
			out = append(out, append([]string{cc.Name}, parts...))
		}
	}
	return out
}

// hostSummary is one paragraph on the host under the verdict: where each
// run was contended and what that does to the gate; "" when neither run
// recorded contention.
func hostSummary(c *Comparison) string {
	var recorded, bc, nc int
	by := map[string][]string{}
	for _, cc := range c.Cells {
		if cc.BaseHost.Repeats == 0 && cc.NewHost.Repeats == 0 {
			continue
		}
		recorded++
		if cc.BaseHost.Contended > 0 {
			bc++
		}
		if cc.NewHost.Contended > 0 {
			nc++
		}
		side, _ := contendedSide(cc.BaseHost, cc.NewHost)
		by[side] = append(by[side], cc.Name)
	}
	if recorded == 0 {
		return ""
	}
	if bc == 0 && nc == 0 {
		return fmt.Sprintf("Host: quiet in both runs (no contention recorded in %d cell%s).", recorded, section.Plural(recorded))
	}
	out := fmt.Sprintf("Host: other load (CPU, steal or other IO) in the base run in %d of %d cells, in the new run in %d of %d.", bc, recorded, nc, recorded)
	for _, sd := range []string{"new", "base"} {
		if cells := by[sd]; len(cells) > 0 {
			out += fmt.Sprintf(" More contention in the %s run in %s: a worsening there counts only when it survives the contention (the uncontended repeats alone, or a changed cell against the unchanged cells of the same rounds).", sd, strings.Join(cells, ", "))
		}
	}
	if cells := by["both"]; len(cells) > 0 {
		out += fmt.Sprintf(" Contended alike in both runs in %s: contention comes and goes, so a worsening there counts only when it survives it too.", strings.Join(cells, ", "))
	}
	return out
}
