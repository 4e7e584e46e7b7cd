// Package report is what the capacity at a latency target adds to a run's
// reports (issue 30): the Conclusion's lines (each cell's capacity over its
// repeats, each cell against its baseline cell as a ratio with its
// interval) and their warnings, and one latency-throughput curve per cell,
// plots/capacity-CELL.png. It is not package capacity, which the record
// imports.
package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"benchmatrix/analysis"
	"benchmatrix/capacity"
	"benchmatrix/figure"
	"benchmatrix/record"
	"benchmatrix/section"
)

// Report is the capacity's part of the reports.
var Report = section.Feature{
	Name:      "capacity",
	Paragraph: writeParagraph,
	Warnings: []section.Warnings{{After: "data", Lines: func(in section.Conclusion) []string {
		_, warnings := Lines(in.Run, in.ByRepeat)
		return warnings
	}}},
	Figures: figures,
}

// writeParagraph is the Conclusion's capacity lines.
func writeParagraph(w io.Writer, r *record.Run) {
	lines, _ := Lines(r, analysis.ByRepeat(r))
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "Capacity: the highest open-loop rate each cell sustains within its latency target (docs/capacity.md):\n\n")
	for _, l := range lines {
		fmt.Fprintf(w, "- %s\n", l)
	}
	fmt.Fprintln(w)
}

// capacityCells is, per cell name in run order, its successful repeats
// that carry a capacity record.
func capacityCells(r *record.Run) ([]string, map[string][]*record.Cell) {
	var names []string
	by := map[string][]*record.Cell{}
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Capacity == nil || c.Status != record.CellOK {
			continue
		}
		if by[c.Name] == nil {
			names = append(names, c.Name)
		}
		by[c.Name] = append(by[c.Name], c)
	}
	return names, by
}

// Lines are the Conclusion's capacity sentences, and the warnings they
// raise (a confirmation that missed, a client that could not keep up).
func Lines(r *record.Run, br map[string]map[int]*record.Cell) (lines, warnings []string) {
	names, by := capacityCells(r)
	if len(names) == 0 {
		return nil, nil
	}
	for _, n := range names {
		cs := by[n]
		slo := cs[0].Capacity.SLO.String()
		if !cs[0].Capacity.Searched {
			var parts []string
			for _, c := range cs {
				parts = append(parts, fmt.Sprintf("%s (repeat %d: %s)", c.Capacity.State(), c.Repeat, c.Capacity.Run.Why))
			}
			lines = append(lines, fmt.Sprintf("%s at its own rate %s/s against %s: %s", n, capacity.FmtRate(cs[0].Capacity.Rate), slo, strings.Join(parts, "; ")))
			continue
		}
		var caps []float64
		below, unconfirmed, client := 0, 0, 0
		lo, hi := math.Inf(1), 0.0
		lowest := 0.0
		for _, c := range cs {
			k := c.Capacity
			if v, ok := k.Value(); ok {
				caps = append(caps, v)
			}
			switch k.State() {
			case record.CapacityBelow:
				below++
				lowest = k.Search.High
			case record.CapacityUnconfirmed:
				unconfirmed++
				warnings = append(warnings, fmt.Sprintf("%s (repeat %d): the run at the rate the search found (%s/s) missed %s, so it is not counted as a capacity: %s", n, c.Repeat, capacity.FmtRate(k.Rate), slo, runWhy(k)))
			}
			if k.Search.ClientBound {
				client++
			}
			if k.Search.Status != capacity.Below {
				lo = min(lo, k.Search.Low)
				if k.Search.High > 0 {
					hi = max(hi, k.Search.High)
				}
			}
		}
		if below == len(cs) {
			lines = append(lines, fmt.Sprintf("%s: **%s** (%s missed even at %s/s, the lowest rate tried)", n, capacity.Below, slo, capacity.FmtRate(lowest)))
			continue
		}
		if len(caps) == 0 {
			lines = append(lines, fmt.Sprintf("%s: **no confirmed capacity** at %s: the full-length run at the rate each search found missed it (%d of %d repeat%s; see the warnings)",
				n, slo, unconfirmed, len(cs), section.Plural(len(cs))))
			continue
		}
		s := fmt.Sprintf("%s: **%s/s** at %s (median of %d repeat%s", n, capacity.FmtRate(record.Median(caps)), slo, len(caps), section.Plural(len(caps)))
		if len(caps) > 1 {
			sort.Float64s(caps)
			var vs []string
			for _, v := range caps {
				vs = append(vs, capacity.FmtRate(v))
			}
			s += ": " + strings.Join(vs, ", ")
		}
		if mi := analysis.MedianCI(caps, 0.95); mi.OK {
			s += fmt.Sprintf("; 95%% CI %s-%s/s over the rounds", capacity.FmtRate(mi.Lo), capacity.FmtRate(mi.Hi))
		}
		s += fmt.Sprintf("; the searches bracket it in %s-%s/s", capacity.FmtRate(lo), capacity.FmtRate(hi))
		if hi == 0 {
			s = strings.TrimSuffix(s, fmt.Sprintf("%s-%s/s", capacity.FmtRate(lo), capacity.FmtRate(hi))) + "met up to the highest rate tried"
		}
		if unconfirmed > 0 {
			s += fmt.Sprintf("; %d confirmation%s missed the target, not counted", unconfirmed, section.Plural(unconfirmed))
		}
		if below > 0 {
			s += fmt.Sprintf("; %d repeat%s met it at no rate", below, section.Plural(below))
		}
		s += ")"
		lines = append(lines, s)
		if client > 0 {
			warnings = append(warnings, fmt.Sprintf("%s: in %d of %d searches the client could not keep up above the capacity found (its own delay alone made the target miss): the limit found may be the client's, not the server's", n, client, len(cs)))
		}
	}
	// Without a baseline, two capacities one line apart still make a
	// ratio: each searched cell against the first searched (plan order).
	if r.Baseline == "" {
		var searched []string
		for _, n := range names {
			if by[n][0].Capacity.Searched {
				searched = append(searched, n)
			}
		}
		for _, n := range searched[min(1, len(searched)):] {
			base := searched[0]
			slo := by[n][0].Capacity.SLO.String()
			xs, ys := analysis.PairedValues(br, n, base, "capacity")
			pr := analysis.RatioFromPairs(xs, ys)
			if pr.Rounds == 0 {
				lines = append(lines, capacityRatioSentence(n, base, slo, xs, ys, by))
				continue
			}
			line := fmt.Sprintf("%s against %s at %s (no baseline named: against the first cell searched): **%.2fx** capacity over %d paired round%s",
				n, base, slo, pr.Ratio, pr.Rounds, section.Plural(pr.Rounds))
			if pr.CIOK {
				line += fmt.Sprintf(" (95%% CI %.2f–%.2f, p=%s)", pr.Lo, pr.Hi, analysis.FormatP(pr.P))
			} else if more := capacityRatioSentence(n, base, slo, xs, ys, by); more != "" {
				line += "; " + strings.TrimPrefix(more, fmt.Sprintf("%s against %s at %s: ", n, base, slo))
			}
			lines = append(lines, line)
		}
	}
	// Each cell against its baseline cell, paired by round.
	if r.Baseline != "" {
		sums := r.Summaries()
		for _, s := range sums {
			b := analysis.BaselineFor(r.Baseline, s, sums)
			if b == "" || b == s.Name || by[s.Name] == nil || by[b] == nil || !by[s.Name][0].Capacity.Searched {
				continue
			}
			xs, ys := analysis.PairedValues(br, s.Name, b, "capacity")
			if line := capacityRatioSentence(s.Name, b, by[s.Name][0].Capacity.SLO.String(), xs, ys, by); line != "" {
				lines = append(lines, line)
			}
		}
	}
	return lines, warnings
}

func runWhy(k *record.CellCapacity) string {
	if k.Run == nil {
		return "no run"
	}
	return k.Run.Why
}

// capacityRatioSentence adds to the Conclusion's ratio line of a cell
// against its baseline (on capacity: analysis/headline.go) what the searches say
// when the rounds are too few for an interval: the range their brackets
// allow (each capacity lies between its search's capacity and lowest
// missing rate). With enough rounds the ratio line says it all, and there
// is no sentence ("").
func capacityRatioSentence(cell, base, slo string, xs, ys []float64, by map[string][]*record.Cell) string {
	pr := analysis.RatioFromPairs(xs, ys)
	if pr.Rounds == 0 {
		return fmt.Sprintf("%s against %s at %s: no round in which both sustained a rate (a capacity of 0 has no ratio)", cell, base, slo)
	}
	if pr.CIOK {
		return ""
	}
	blo, bhi := math.Inf(1), 0.0
	for _, x := range by[cell] {
		for _, y := range by[base] {
			if x.Repeat != y.Repeat {
				continue
			}
			sx, sy := x.Capacity.Search, y.Capacity.Search
			if sx == nil || sy == nil || sx.Low <= 0 || sy.Low <= 0 {
				continue
			}
			blo = min(blo, sx.Low/nonzero(sy.High, sy.Low))
			bhi = max(bhi, nonzero(sx.High, sx.Low)/sy.Low)
		}
	}
	if bhi == 0 {
		return ""
	}
	return fmt.Sprintf("%s against %s at %s: %d paired round%s, too few for a 95%% interval; the searches' brackets allow %.2f–%.2fx",
		cell, base, slo, pr.Rounds, section.Plural(pr.Rounds), blo, bhi)
}

func nonzero(v, alt float64) float64 {
	if v > 0 {
		return v
	}
	return alt
}

// figures are the curve figures: one per cell that searched.
func figures(r *record.Run) []section.Figure {
	names, by := capacityCells(r)
	var out []section.Figure
	for _, n := range names {
		if !by[n][0].Capacity.Searched {
			continue
		}
		out = append(out, section.Figure{
			Title: "capacity at " + by[n][0].Capacity.SLO.String() + ": " + n,
			Name:  "capacity-" + figure.SafeName(n) + ".png",
			Draw:  func() ([]byte, error) { return Figure(r, n) },
		})
	}
	return out
}

var (
	meetColor  = color.RGBA{0x59, 0xa1, 0x4f, 0xff}
	missColor  = color.RGBA{0xe1, 0x57, 0x59, 0xff}
	stallColor = color.RGBA{0xf2, 0x8e, 0x2b, 0xff}
	kneeColor  = color.RGBA{0x4e, 0x79, 0xa7, 0xff}
)

// Figure draws a cell's latency-throughput curve: every step of
// its searches (and its measured runs) as rate offered against p99 and p50
// achieved (ms, log scale), green where the step met the target and red
// where it missed, the target's limit as a horizontal line and the
// capacity found (the knee) as a vertical one.
func Figure(r *record.Run, cell string) ([]byte, error) {
	_, by := capacityCells(r)
	cs := by[cell]
	if len(cs) == 0 {
		return nil, fmt.Errorf("no capacity for %s", cell)
	}
	slo := cs[0].Capacity.SLO
	limit := float64(slo.Limit) / 1e6
	p := plot.New()
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks125{}
	gr := plotter.NewGrid()
	gr.Vertical.Color, gr.Horizontal.Color = figure.GridColor, figure.GridColor
	p.Add(gr)
	var meet99, miss99, stall99, meet50, miss50, runs plotter.XYs
	ymin, ymax := limit, limit
	xmin, xmax := math.Inf(1), 0.0
	var caps []float64
	add := func(st capacity.Step) {
		y99, y50 := math.Max(st.Pct, 0.01), math.Max(st.P50, 0.01)
		if st.Events == 0 {
			return
		}
		ymin, ymax = math.Min(ymin, y50), math.Max(ymax, y99)
		xmin, xmax = math.Min(xmin, st.Rate), math.Max(xmax, st.Rate)
		switch st.Verdict {
		case capacity.Meets:
			meet99, meet50 = append(meet99, plotter.XY{X: st.Rate, Y: y99}), append(meet50, plotter.XY{X: st.Rate, Y: y50})
		case capacity.Stalled:
			stall99, meet50 = append(stall99, plotter.XY{X: st.Rate, Y: y99}), append(meet50, plotter.XY{X: st.Rate, Y: y50})
		default:
			miss99, miss50 = append(miss99, plotter.XY{X: st.Rate, Y: y99}), append(miss50, plotter.XY{X: st.Rate, Y: y50})
		}
	}
	for _, c := range cs {
		k := c.Capacity
		if k.Search != nil {
			for _, st := range k.Search.Steps {
				add(st)
			}
			if k.Search.Status != capacity.Below {
				caps = append(caps, k.Search.Capacity)
			}
		}
		if k.Run != nil && k.Run.Events > 0 {
			runs = append(runs, plotter.XY{X: k.Rate, Y: math.Max(k.Run.Pct, 0.01)})
			ymax = math.Max(ymax, k.Run.Pct)
		}
	}
	var legend []figure.Legend
	scatter := func(pts plotter.XYs, c color.Color, shape draw.GlyphDrawer, radius vg.Length, label string) {
		if len(pts) == 0 {
			return
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return
		}
		s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: radius, Shape: shape}
		p.Add(s)
		legend = append(legend, figure.Legend{Label: label, Thumb: s})
	}
	pct := fmt.Sprintf("p%g", slo.Percentile)
	scatter(meet99, meetColor, draw.CircleGlyph{}, 3.5, pct+", step met the target")
	scatter(miss99, missColor, draw.CircleGlyph{}, 3.5, pct+", step missed it (overload)")
	scatter(stall99, stallColor, draw.CircleGlyph{}, 3.5, pct+", step stalled (missed, the queue drained)")
	scatter(meet50, meetColor, draw.RingGlyph{}, 2.5, "p50 (ring)")
	scatter(miss50, missColor, draw.RingGlyph{}, 2.5, "")
	scatter(runs, color.Black, draw.CrossGlyph{}, 5, pct+" of the full-length run at the capacity")
	if xmax <= 0 {
		xmin, xmax = 1, 10
	}
	lim, err := plotter.NewLine(plotter.XYs{{X: xmin / 1.3, Y: limit}, {X: xmax * 1.3, Y: limit}})
	if err == nil {
		lim.LineStyle = draw.LineStyle{Color: figure.TextColor, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
		p.Add(lim)
		legend = append(legend, figure.Legend{Label: "target: " + slo.String(), Thumb: lim})
	}
	if len(caps) > 0 {
		knee := record.Median(caps)
		kl, err := plotter.NewLine(plotter.XYs{{X: knee, Y: ymin / 1.5}, {X: knee, Y: ymax * 1.5}})
		if err == nil {
			kl.LineStyle = draw.LineStyle{Color: kneeColor, Width: vg.Points(1.5)}
			p.Add(kl)
			legend = append(legend, figure.Legend{Label: "knee: capacity " + capacity.FmtRate(knee) + "/s", Thumb: kl})
		}
	}
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks125{}
	p.X.Min, p.X.Max = xmin/1.3, xmax*1.3
	p.Y.Min, p.Y.Max = ymin/1.5, ymax*1.5
	p.X.Label.Text = "rate offered (events/s, open loop; log scale)"
	p.Y.Label.Text = "latency, ms (log scale)"
	figure.Restyle(&p.X.Label.TextStyle, 11, figure.TextColor)
	figure.Restyle(&p.Y.Label.TextStyle, 11, figure.TextColor)
	figure.Restyle(&p.X.Tick.Label, 10, figure.TextColor)
	figure.Restyle(&p.Y.Tick.Label, 10, figure.TextColor)
	caption := fmt.Sprintf("Every step of the capacity search of %s (%d repeat%s): each a short run at one offered rate, judged on every arrival (served, still queued at its end, or dropped). "+
		"The knee is where the %s crosses the target; the cross marks the full-length run at the capacity found.", cell, len(cs), section.Plural(len(cs)), pct)
	return figure.Render(figure.BarWidth, 6.5*vg.Inch, r.Experiment+": latency against rate offered, "+cell, caption, [][]*plot.Plot{{p}}, legend)
}

// logTicks125 marks a log axis at 1, 2 and 5 times the powers of ten in
// its range, with minor marks at the other digits, so an axis spanning
// less than a decade (a slow disk's steps from 8/s to 32/s) still has
// labels (narrower still, whole steps of the decade below); over more
// than three decades it labels the powers of ten only,
// as gonum's LogTicks does.
type logTicks125 struct{}

func (logTicks125) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || math.IsInf(hi, 0) || hi/lo > 1e3 {
		return plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	}
	var ticks []plot.Tick
	labelled := 0
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		for m := 1.0; m <= 9; m++ {
			v := m * math.Pow(10, e)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', 4, 64)
				labelled++
			}
			ticks = append(ticks, t)
		}
	}
	if labelled >= 2 {
		return ticks
	}
	// Less than a 1-2-5 step wide: every whole step of the decade below,
	// at most about eight of them labelled.
	step := math.Pow(10, math.Floor(math.Log10(hi-lo)))
	ticks = ticks[:0]
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		ticks = append(ticks, plot.Tick{Value: v})
	}
	stride := (len(ticks) + 7) / 8
	for i := range ticks {
		if i%stride == 0 {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'g', 4, 64)
		}
	}
	return ticks
}
