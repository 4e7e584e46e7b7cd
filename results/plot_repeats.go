package results

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"benchmatrix/analysis"
	"benchmatrix/figure"
	"benchmatrix/record"
)

// The repeats figure, plots/repeats.png: each cell's tps in the order its
// repeats ran, relative to the cell's median, so that a climb or a fall
// over back-to-back repeats (an order effect such as warm-up) shows beside
// the Mann-Kendall test the repeats table gives. Drawn when some cell has
// at least 3 successful repeats; at most maxSeries lines per panel.

// repeatSeriesOf is the cells with enough repeats to draw.
func repeatSeriesOf(r *record.Run) []repeatSeries {
	var out []repeatSeries
	for _, s := range tpsByRepeat(r) {
		if len(s.tps) >= analysis.MinRepeatsForTrend {
			out = append(out, s)
		}
	}
	return out
}

// repeatsFile is the figure's entry in PlotFiles, or false when no cell
// has enough repeats.
func repeatsFile(r *record.Run) (PlotFile, bool) {
	if len(repeatSeriesOf(r)) == 0 {
		return PlotFile{}, false
	}
	return PlotFile{Title: "tps by repeat, relative to each cell's median", Path: PlotsDir + "/repeats.png"}, true
}

func repeatsFigure(r *record.Run) ([]byte, error) {
	series := repeatSeriesOf(r)
	var names []string
	for _, s := range series {
		names = append(names, s.name)
	}
	labels, common := shortLabels(names)
	var rows [][]*plot.Plot
	var legend []figure.Legend
	maxN := 0
	for _, s := range series {
		maxN = max(maxN, len(s.tps))
	}
	contended, cold := analysis.RepeatFlags(r) // analysis/trend.go
	anyContended, anyCold := false, false
	for lo := 0; lo < len(series); lo += maxSeries {
		part := series[lo:min(lo+maxSeries, len(series))]
		p := plot.New()
		gr := plotter.NewGrid()
		gr.Vertical.Color, gr.Horizontal.Color = figure.GridColor, figure.GridColor
		p.Add(gr)
		one, _ := plotter.NewLine(plotter.XYs{{X: 1, Y: 1}, {X: float64(maxN), Y: 1}})
		one.Color, one.Width, one.Dashes = figure.TextColor, vg.Points(0.8), []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(one)
		for i, s := range part {
			med := record.Median(s.tps)
			xys := make(plotter.XYs, len(s.tps))
			for k, v := range s.tps {
				xys[k].X, xys[k].Y = float64(k+1), v/med
			}
			clr := plotColors[i%len(plotColors)]
			l, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, err
			}
			l.Color, l.Width = clr, vg.Points(lineWidth)
			pts.Color, pts.Shape = clr, draw.CircleGlyph{}
			p.Add(l, pts)
			// Ring the repeats measured under contention.
			var ringed plotter.XYs
			for k, c := range contended[s.name] {
				if c && k < len(xys) {
					ringed = append(ringed, xys[k])
				}
			}
			if len(ringed) > 0 {
				anyContended = true
				sc, err := plotter.NewScatter(ringed)
				if err != nil {
					return nil, err
				}
				sc.Color, sc.Shape, sc.Radius = figure.TextColor, draw.RingGlyph{}, vg.Points(5.5)
				p.Add(sc)
			}
			label := labels[s.name]
			if cold[s.name] {
				anyCold = true
				label += " (cold)"
			}
			if tr := analysis.MannKendall(s.tps); tr.P < DefaultAlpha {
				dir := "rising"
				if tr.S < 0 {
					dir = "falling"
				}
				label += fmt.Sprintf(" (%s, p=%s)", dir, analysis.FormatP(tr.P))
			}
			legend = append(legend, figure.Legend{Label: figure.Clip(label, maxLegendText), Thumb: l})
		}
		p.X.Min, p.X.Max = 0.8, float64(maxN)+0.2
		p.X.Tick.Marker = integerTicks{}
		p.Y.Label.Text = "tps / cell median"
		figure.Restyle(&p.Y.Label.TextStyle, 11, figure.TextColor)
		figure.Restyle(&p.X.Tick.Label, 10, figure.TextColor)
		figure.Restyle(&p.Y.Tick.Label, 10, figure.TextColor)
		rows = append(rows, []*plot.Plot{p})
	}
	last := rows[len(rows)-1][0]
	last.X.Label.Text = "repeat, in the order run"
	figure.Restyle(&last.X.Label.TextStyle, 11, figure.TextColor)
	title := r.Experiment + ": tps by repeat"
	if len(common) > 0 {
		title += " (" + strings.Join(common, ", ") + ")"
	}
	caption := "Each cell's tps in the order its repeats ran, divided by its median (1 = the median). " +
		"A cell whose repeats rise or fall with significance (Mann-Kendall, p < 0.05) is marked: " +
		"an order effect, not noise."
	if anyContended {
		caption += " Ringed: repeats measured under contention (other load on the host)."
	}
	if anyCold {
		caption += " (cold): restarted before every repeat."
	}
	if j, ok := analysis.JudgeRepeats(r); ok {
		caption += " Together: " + repeatsText(j) + "."
	}
	h := seriesHeight * vg.Length(math.Max(1, float64(len(rows)))) * 0.55
	return figure.Render(seriesWidth, max(h, 4*vg.Inch), title, caption, rows, legend)
}

// integerTicks labels whole numbers only (repeat 1, 2, 3...).
type integerTicks struct{}

func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	step := math.Max(1, math.Ceil((hi-lo)/12))
	for v := math.Ceil(lo); v <= hi; v += step {
		out = append(out, plot.Tick{Value: v, Label: fmt.Sprint(int(v))})
	}
	return out
}
