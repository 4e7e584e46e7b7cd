package results

import (
	"crypto/sha256"
	"encoding/csv"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"benchmatrix/analysis"
	"benchmatrix/engine"
	"benchmatrix/features"
	"benchmatrix/figure"
	"benchmatrix/record"
	"benchmatrix/section"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PlotsDir is the folder of a results directory that holds the plots.
const PlotsDir = "plots"

// PlotFile is one figure of a results directory.
type PlotFile struct {
	Title string
	Path  string // relative to the results directory, slash-separated
}

// IntervalPoint is one row of intervals.csv, as the plots need it.
type IntervalPoint struct {
	T     float64 // seconds since the cell's clocks started (end of the interval)
	Phase string  // "warmup" or "run"
	TPS   float64
	P95   float64 // ms
	// Metrics holds the sampled metric columns that have a value, or nil.
	Metrics map[string]float64
	// Engine holds the engine's own columns that have a value (TPC-C's
	// nopm, tpm, each type's rate and p95), or nil.
	Engine map[string]float64
}

// ReadIntervals reads intervals.csv from a results directory, keyed by
// RunKey(cell, repeat), each cell run's rows in file order. Columns are
// found by name, so files with extra or reordered columns read too; a row
// with the wrong number of fields (a half row left by a crash) is skipped.
func ReadIntervals(dir string) (map[string][]IntervalPoint, error) {
	path := filepath.Join(dir, IntervalsFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", path, err)
	}
	header = append([]string(nil), header...)
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	var missing []string
	for _, name := range []string{"cell", "repeat", "t", "phase", "tps", "lat_p95_ms"} {
		if _, ok := col[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: no column %s", path, strings.Join(missing, ", "))
	}
	known, engineCol := map[string]bool{}, map[string]bool{}
	for _, c := range IntervalColumns {
		known[c] = true
	}
	for _, c := range engineIntervalColumns() {
		engineCol[c] = true
	}
	var metricCols, engineCols []int
	for i, h := range header {
		switch {
		case engineCol[h]:
			engineCols = append(engineCols, i)
		case !known[h]:
			metricCols = append(metricCols, i)
		}
	}
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return math.NaN()
		}
		return v
	}
	out := map[string][]IntervalPoint{}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount) {
				continue
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(rec) != len(header) {
			continue
		}
		rep, err := strconv.Atoi(rec[col["repeat"]])
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: repeat %q: %w", path, line, rec[col["repeat"]], err)
		}
		t, err := strconv.ParseFloat(rec[col["t"]], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: t %q: %w", path, line, rec[col["t"]], err)
		}
		p := IntervalPoint{T: t, Phase: rec[col["phase"]], TPS: num(rec[col["tps"]]), P95: num(rec[col["lat_p95_ms"]])}
		for _, i := range metricCols {
			if rec[i] == "" {
				continue
			}
			if v, err := strconv.ParseFloat(rec[i], 64); err == nil {
				if p.Metrics == nil {
					p.Metrics = make(map[string]float64, len(metricCols))
				}
				p.Metrics[header[i]] = v
			}
		}
		for _, i := range engineCols {
			if v, err := strconv.ParseFloat(rec[i], 64); err == nil && rec[i] != "" {
				if p.Engine == nil {
					p.Engine = make(map[string]float64, len(engineCols))
				}
				p.Engine[header[i]] = v
			}
		}
		k := RunKey(rec[col["cell"]], rep)
		out[k] = append(out[k], p)
	}
	return out, nil
}

// A plotGroup is the cells drawn in one time-series figure: those that
// differ only by scenario (every cell when the run has no scenarios).
type plotGroup struct {
	key   string   // the non-scenario parameters, "threads=8/engine=innodb"; "" for all
	cells []string // cell names in run order
	// part of parts: a group of many cells drawn as small multiples
	// (plot_layout.go); parts is 0 for a group drawn whole.
	part, parts int
}

func plotGroups(r *record.Run) []plotGroup {
	var groups []plotGroup
	at := map[string]int{}
	seen := map[string]bool{}
	for _, c := range r.Cells {
		if seen[c.Name] {
			continue
		}
		seen[c.Name] = true
		key := ""
		if c.Scenario != "" {
			key = analysis.TrimScenario(c.Name, c.Scenario)
		}
		i, ok := at[key]
		if !ok {
			i = len(groups)
			at[key] = i
			groups = append(groups, plotGroup{key: key})
		}
		groups[i].cells = append(groups[i].cells, c.Name)
	}
	return splitGroups(groups) // plot_layout.go
}

// PlotFiles returns the figures WritePlots draws for r, in order: the bar
// chart of the cells' headline figure (tps, NOPM), then one time-series figure per group of cells that differ
// only by scenario. It depends on r alone, so summary.md can link them.
func PlotFiles(r *record.Run) []PlotFile {
	anyOK := false
	for _, c := range r.Cells {
		anyOK = anyOK || c.Status == record.CellOK
	}
	if !anyOK {
		return nil
	}
	fig := analysis.RunFigure(r) // analysis/headline.go: NOPM for tpcc cells
	files := []PlotFile{{Title: fig.Label + " by cell", Path: PlotsDir + "/" + figure.SafeName(fig.Name) + ".png"}}
	used := map[string]bool{figure.SafeName(fig.Name): true}
	for _, g := range plotGroups(r) {
		title := "tps and p95 latency over time"
		name := "series"
		if g.key != "" {
			title += ": " + groupLabel(g.key)
			name += "-" + figure.SafeName(g.key)
		} else if _, common := shortLabels(g.cells); len(common) > 0 {
			title += ": " + strings.Join(common, ", ")
		}
		pt, pn := g.partSuffix()
		title += pt
		name += pn
		for used[name] { // sanitising made two keys equal
			sum := sha256.Sum256([]byte(g.key + name))
			name += fmt.Sprintf("-%x", sum[:3])
		}
		used[name] = true
		files = append(files, PlotFile{Title: title, Path: PlotsDir + "/" + name + ".png"})
	}
	if f, ok := repeatsFile(r); ok { // plot_repeats.go
		files = append(files, f)
	}
	for _, f := range featureFigures(r) {
		files = append(files, f.file)
	}
	return files
}

// featureFigure is a feature's figure as a file of the plots directory.
type featureFigure struct {
	section.Figure
	file PlotFile
}

// featureFigures are the features' figures (features.Reports: the capacity
// curves), after results' own.
func featureFigures(r *record.Run) []featureFigure {
	var out []featureFigure
	for _, f := range features.Reports {
		if f.Figures == nil {
			continue
		}
		for _, fig := range f.Figures(r) {
			out = append(out, featureFigure{Figure: fig, file: PlotFile{Title: fig.Title, Path: PlotsDir + "/" + fig.Name}})
		}
	}
	return out
}

func groupLabel(key string) string { return strings.ReplaceAll(key, "/", ", ") }

// WritePlots draws the figures of PlotFiles(r) as PNG files under
// dir/plots, reading the per-second series from dir/intervals.csv, so it
// works on stored results. Each file is replaced atomically. It returns the
// files written; on an error it still writes the figures it can.
func WritePlots(dir string, r *record.Run) ([]PlotFile, error) {
	files := PlotFiles(r)
	if len(files) == 0 {
		return nil, nil
	}
	ivs, err := ReadIntervals(dir)
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, PlotsDir), 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	pal := newPalette(r)
	var written []PlotFile
	var errs []error
	draw := func(f PlotFile, render func() ([]byte, error)) {
		b, err := render()
		if err == nil {
			err = section.WriteFileAtomic(filepath.Join(dir, filepath.FromSlash(f.Path)), b)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("plot %s: %w", f.Path, err))
			return
		}
		written = append(written, f)
	}
	draw(files[0], func() ([]byte, error) { return barChart(r, pal) })
	groups := plotGroups(r)
	for i, g := range groups {
		draw(files[i+1], func() ([]byte, error) { return seriesFigure(r, g, ivs, pal) })
	}
	if _, ok := repeatsFile(r); ok {
		draw(files[len(groups)+1], func() ([]byte, error) { return repeatsFigure(r) })
	}
	for _, f := range featureFigures(r) {
		draw(f.file, f.Draw)
	}
	return written, errors.Join(errs...)
}

// Colours: Tableau 10, distinguishable and readable on white.
var plotColors = []color.RGBA{
	{0x4e, 0x79, 0xa7, 0xff}, {0xf2, 0x8e, 0x2b, 0xff}, {0x59, 0xa1, 0x4f, 0xff}, {0xe1, 0x57, 0x59, 0xff},
	{0xb0, 0x7a, 0xa1, 0xff}, {0x76, 0xb7, 0xb2, 0xff}, {0xed, 0xc9, 0x48, 0xff}, {0x9c, 0x75, 0x5f, 0xff},
	{0xff, 0x9d, 0xa7, 0xff}, {0x79, 0x70, 0x6e, 0xff},
}

// palette gives each scenario (each cell, when there are no scenarios) the
// same colour in every figure.
type palette struct {
	byScenario bool
	index      map[string]int
}

func newPalette(r *record.Run) palette {
	p := palette{index: map[string]int{}}
	for _, c := range r.Cells {
		p.byScenario = p.byScenario || c.Scenario != ""
	}
	for _, c := range r.Cells {
		k := p.key(c)
		if _, ok := p.index[k]; !ok {
			p.index[k] = len(p.index)
		}
	}
	return p
}

func (p palette) key(c record.Cell) string {
	if p.byScenario {
		return c.Scenario
	}
	return c.Name
}

func (p palette) color(c record.Cell) color.RGBA {
	return plotColors[p.index[p.key(c)]%len(plotColors)]
}

func withAlpha(c color.RGBA, a uint8) color.NRGBA { return color.NRGBA{R: c.R, G: c.G, B: c.B, A: a} }

var (
	warmupShade = color.NRGBA{R: 0x80, G: 0x80, B: 0x80, A: 0x30}
)

// Figure geometry: 1100 x 700 px for the time series.
const (
	seriesWidth   = 10 * vg.Inch
	seriesHeight  = 7 * vg.Inch
	lineWidth     = 1.6
	repeatWidth   = 0.7
	maxLegendText = 44
)

// cellRun is one repeat of one cell, ready to draw.
type cellRun struct {
	cell   record.Cell
	points []IntervalPoint
}

// segment is a run of consecutive intervals of one phase, as step-line
// points: the first point is the start of the first interval, so that each
// value covers its whole interval (plotter.PreStep).
// plotFragment is the shortest interval the time-series lines draw.
const plotFragment = 0.1 // seconds

// drawn is pts less the fragments segments leaves out, for the axes.
func drawn(pts []IntervalPoint) []IntervalPoint {
	out := make([]IntervalPoint, 0, len(pts))
	prev := 0.0
	for _, p := range pts {
		if p.T-prev >= plotFragment {
			out = append(out, p)
		}
		prev = math.Max(prev, p.T)
	}
	return out
}

func segments(pts []IntervalPoint, value func(IntervalPoint) float64) (warm, run []plotter.XYs) {
	prev := 0.0
	var cur plotter.XYs
	curPhase := ""
	flush := func() {
		if len(cur) > 0 {
			if curPhase == string(engine.PhaseWarmup) {
				warm = append(warm, cur)
			} else {
				run = append(run, cur)
			}
		}
		cur = nil
	}
	for _, p := range pts {
		v := value(p)
		if math.IsNaN(v) || math.IsInf(v, 0) || p.T <= prev {
			flush()
			if p.T > prev {
				prev = p.T
			}
			continue
		}
		if p.T-prev < plotFragment {
			// A few milliseconds left at the warm-up's or the run's end:
			// a rate over them (5 events in 2 ms, 2,500 tps) says nothing
			// and would set the axis.
			prev = p.T
			continue
		}
		if p.Phase != curPhase {
			flush()
			curPhase = p.Phase
		}
		if len(cur) == 0 {
			cur = append(cur, plotter.XY{X: prev, Y: v})
		}
		cur = append(cur, plotter.XY{X: p.T, Y: v})
		prev = p.T
	}
	flush()
	return warm, run
}

// stallSpans translates a cell run's stall episodes (indexes into its
// measured intervals, those with phase=run and a positive length, as the
// detector saw them) to [from, to] ranges of t.
func stallSpans(c record.Cell, pts []IntervalPoint) [][2]float64 {
	if c.Stalls == nil || len(c.Stalls.Episodes) == 0 {
		return nil
	}
	type span struct{ from, to float64 }
	var runIv []span
	prev := 0.0
	for _, p := range pts {
		if p.Phase == string(engine.PhaseRun) && p.T > prev {
			runIv = append(runIv, span{prev, p.T})
		}
		if p.T > prev {
			prev = p.T
		}
	}
	var out [][2]float64
	for _, e := range c.Stalls.Episodes {
		if e.Start < 0 || e.End <= e.Start || e.End > len(runIv) {
			continue
		}
		out = append(out, [2]float64{runIv[e.Start].from, runIv[e.End-1].to})
	}
	return out
}

// bands shades vertical spans of x over the whole height of a panel.
type bands struct {
	spans [][2]float64
	color color.Color
}

func (b *bands) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, s := range b.spans {
		x0 := max(trX(s[0]), c.Min.X)
		x1 := min(trX(s[1]), c.Max.X)
		if x1 <= x0 {
			continue
		}
		c.FillPolygon(b.color, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
	}
}

func (b *bands) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(b.color, []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}})
}

// seriesFigure draws one group: tps over time on top, p95 latency below,
// a line per scenario (per cell without scenarios) and per repeat, the
// warm-up shaded grey and dashed, stall episodes shaded in the line's
// colour, the legend beside the panels.
func seriesFigure(r *record.Run, g plotGroup, ivs map[string][]IntervalPoint, pal palette) ([]byte, error) {
	colors := figureColors(r, g, pal) // plot_layout.go
	short, _ := shortLabels(g.cells)
	inGroup := map[string]bool{}
	for _, n := range g.cells {
		inGroup[n] = true
	}
	var runs []cellRun
	repeats := map[string]int{}
	failed := map[string]int{}
	for _, c := range r.Cells {
		if !inGroup[c.Name] {
			continue
		}
		if c.Status != record.CellOK {
			failed[c.Name]++
			continue
		}
		repeats[c.Name]++
		runs = append(runs, cellRun{cell: c, points: ivs[RunKey(c.Name, c.Repeat)]})
	}

	tpsP, latP := plot.New(), plot.New()
	// The features' panels under them (the mechanism's IO, the user's
	// metrics): each source contributes its own.
	var extra []seriesPanel
	var extraCaption string
	for _, src := range seriesPanelSources() {
		ps, caption := src(r, runs)
		extra = append(extra, ps...)
		extraCaption += caption
	}
	panels := []*plot.Plot{tpsP, latP}
	for i := range extra {
		extra[i].p = plot.New()
		extra[i].p.Y.Label.Text = extra[i].label
		panels = append(panels, extra[i].p)
	}
	maxT, maxTPS, warmEnd := 0.0, 0.0, 0.0
	minLat, maxLat := math.Inf(1), 0.0
	for _, cr := range runs {
		for _, p := range cr.points {
			maxT = math.Max(maxT, p.T)
			if p.Phase == string(engine.PhaseWarmup) {
				warmEnd = math.Max(warmEnd, p.T)
			}
		}
		for _, p := range drawn(cr.points) {
			if p.TPS > maxTPS {
				maxTPS = p.TPS
			}
			if p.TPS > 0 && p.P95 > 0 {
				minLat, maxLat = math.Min(minLat, p.P95), math.Max(maxLat, p.P95)
			}
		}
	}
	if maxT <= 0 {
		maxT = 1
	}
	logLat := maxLat > 0 && maxLat/minLat >= 30
	// tps on a log axis when the cells differ by more than logSpread
	// times; a second without a transaction sits on the axis' floor.
	perCell := map[string][]float64{}
	minTPS := math.Inf(1)
	for _, cr := range runs {
		for _, p := range drawn(cr.points) {
			if p.Phase == string(engine.PhaseRun) {
				perCell[cr.cell.Name] = append(perCell[cr.cell.Name], p.TPS)
			}
			if p.TPS > 0 {
				minTPS = math.Min(minTPS, p.TPS)
			}
		}
	}
	logTPS := spread(perCell) > logSpread && !math.IsInf(minTPS, 1)
	tpsFloor := 0.0
	if logTPS {
		tpsFloor = logFloor(minTPS)
	}

	// Shading first, so the lines are drawn over it.
	var warmBand *bands
	if warmEnd > 0 {
		warmBand = &bands{spans: [][2]float64{{0, warmEnd}}, color: warmupShade}
		for _, p := range panels {
			p.Add(warmBand)
		}
	}
	var stallColors stripes
	stalled := map[color.RGBA]bool{}
	for _, cr := range runs {
		spans := stallSpans(cr.cell, cr.points)
		if len(spans) == 0 {
			continue
		}
		if clr := colors[cr.cell.Name]; !stalled[clr] {
			stalled[clr] = true
			stallColors = append(stallColors, withAlpha(clr, 0x50))
		}
		a := uint8(0x50)
		if cr.cell.Repeat > 1 {
			a = 0x20
		}
		b := &bands{spans: spans, color: withAlpha(colors[cr.cell.Name], a)}
		for _, p := range panels {
			p.Add(b)
		}
	}
	for _, cr := range runs {
		for _, mark := range seriesMarkSources() {
			mark(panels, cr.cell)
		}
	}
	for _, p := range panels {
		gr := plotter.NewGrid()
		gr.Vertical.Color, gr.Horizontal.Color = figure.GridColor, figure.GridColor
		p.Add(gr)
	}

	var legend []figure.Legend
	legended := map[string]bool{}
	for _, cr := range runs {
		clr := colors[cr.cell.Name]
		width := vg.Points(lineWidth)
		if cr.cell.Repeat > 1 {
			width = vg.Points(repeatWidth)
		}
		var thumb plot.Thumbnailer
		type panelValue struct {
			p     *plot.Plot
			value func(IntervalPoint) float64
		}
		pvs := []panelValue{
			{tpsP, func(p IntervalPoint) float64 { return math.Max(p.TPS, tpsFloor) }},
			{latP, func(p IntervalPoint) float64 {
				if !(p.TPS > 0) || !(p.P95 > 0) {
					return math.NaN() // nothing completed: no latency to show
				}
				return p.P95
			}},
		}
		for _, sp := range extra {
			pvs = append(pvs, panelValue{sp.p, sp.value})
		}
		for _, panel := range pvs {
			warm, run := segments(cr.points, panel.value)
			for i, xys := range append(warm, run...) {
				l, err := plotter.NewLine(xys)
				if err != nil {
					return nil, err
				}
				l.StepStyle = plotter.PreStep
				l.Color = clr
				l.Width = width
				if i < len(warm) {
					l.Dashes = []vg.Length{vg.Points(4), vg.Points(2.5)}
					l.Color = withAlpha(clr, 0xb0)
				} else if thumb == nil {
					thumb = l
				}
				panel.p.Add(l)
			}
		}
		name := short[cr.cell.Name]
		if pal.byScenario {
			name = cr.cell.Scenario
		}
		if legended[cr.cell.Name] {
			continue
		}
		legended[cr.cell.Name] = true
		label := name
		if n := repeats[cr.cell.Name]; n > 1 {
			label += fmt.Sprintf(" (%d repeats)", n)
		}
		if n := failed[cr.cell.Name]; n > 0 {
			label += fmt.Sprintf(" (%d failed)", n)
		}
		if len(cr.points) == 0 {
			label += " (no intervals)"
		}
		if thumb == nil {
			thumb = &lineThumb{color: clr}
		}
		legend = append(legend, figure.Legend{Label: figure.Clip(label, maxLegendText), Thumb: thumb})
	}
	for _, n := range g.cells {
		if !legended[n] && failed[n] > 0 {
			label := n
			for _, c := range r.Cells {
				if c.Name == n && pal.byScenario {
					label = c.Scenario
				}
			}
			legend = append(legend, figure.Legend{Label: figure.Clip(label+" (failed)", maxLegendText), Thumb: &lineThumb{color: color.Gray{Y: 0xb0}}})
		}
	}
	if warmBand != nil {
		legend = append(legend, figure.Legend{Label: "warm-up (excluded from the results)", Thumb: warmBand})
	}
	if len(stallColors) > 0 {
		legend = append(legend, figure.Legend{Label: "stall (shaded in the line's colour)", Thumb: stallColors})
	}

	tpsP.Y.Label.Text = "tps"
	tpsP.Y.Min, tpsP.Y.Max = 0, math.Max(maxTPS*1.05, 1)
	if logTPS {
		tpsP.Y.Scale = plot.LogScale{}
		tpsP.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		tpsP.Y.Min, tpsP.Y.Max = tpsFloor, maxTPS*1.3
		tpsP.Y.Label.Text = "tps, log scale"
	}
	latP.Y.Label.Text = "p95 latency, ms"
	latP.X.Label.Text = "seconds since the cell started (warm-up included)"
	for _, sp := range extra {
		if sp.min0 {
			sp.p.Y.Min = 0
		}
	}
	if len(panels) > 2 {
		latP.X.Label.Text = ""
		panels[len(panels)-1].X.Label.Text = "seconds since the cell started (warm-up included)"
	}
	if logLat {
		latP.Y.Scale = plot.LogScale{}
		latP.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		latP.Y.Min, latP.Y.Max = minLat/1.3, maxLat*1.3
		latP.Y.Label.Text = "p95 ms, log scale"
	} else {
		latP.Y.Min, latP.Y.Max = 0, math.Max(maxLat*1.05, 0.001)
	}
	for i, p := range panels {
		p.X.Tick.Marker = timeTicks{labels: i == len(panels)-1}
	}
	for _, p := range panels {
		p.X.Min, p.X.Max = 0, maxT
		figure.Restyle(&p.X.Label.TextStyle, 11, figure.TextColor)
		figure.Restyle(&p.Y.Label.TextStyle, 11, figure.TextColor)
		figure.Restyle(&p.X.Tick.Label, 10, figure.TextColor)
		figure.Restyle(&p.Y.Tick.Label, 10, figure.TextColor)
	}

	title := r.Experiment + ": tps and p95 latency over time"
	if g.key != "" {
		title += ", " + groupLabel(g.key)
	}
	caption := "Each value covers its 1 s interval (step lines). "
	if len(runs) > len(legended) {
		caption += "Every repeat is drawn: the first thick, later ones thin, same colour. "
	}
	caption += "Warm-up dashed on grey."
	if len(stallColors) > 0 {
		caption += " Stalls found in the measured window shaded."
	}
	if logTPS {
		caption += fmt.Sprintf(" tps on a log scale: the cells differ by more than %dx (a second without a transaction sits on the axis' floor).", logSpread)
	}
	caption += extraCaption
	rows := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		rows[i] = []*plot.Plot{p}
	}
	height := seriesHeight
	if len(panels) > 2 {
		height = seriesHeight * vg.Length(len(panels)) / 2 * 0.8
	}
	return figure.Render(seriesWidth, height, title, caption, rows, legend)
}

// stripes is a legend swatch of vertical stripes, one per colour.
type stripes []color.Color

func (s stripes) Thumbnail(c *draw.Canvas) {
	w := (c.Max.X - c.Min.X) / vg.Length(len(s))
	for i, clr := range s {
		x0 := c.Min.X + vg.Length(i)*w
		c.FillPolygon(clr, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x0 + w, Y: c.Min.Y}, {X: x0 + w, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
	}
}

// lineThumb is a legend swatch for a series without a drawn line.
type lineThumb struct{ color color.Color }

func (t *lineThumb) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(draw.LineStyle{Color: t.color, Width: vg.Points(lineWidth)}, c.Min.X, y, c.Max.X, y)
}

// timeTicks marks seconds at a round step (1, 2, 5, 10, 15, 30 s, 1, 2, 5,
// 10, 15, 30 min, 1 h...) that gives at most 12 labelled ticks; without
// labels for a panel that shares the x axis of the one below.
type timeTicks struct{ labels bool }

func (t timeTicks) Ticks(lo, hi float64) []plot.Tick {
	steps := []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 43200, 86400}
	step := steps[len(steps)-1]
	for _, s := range steps {
		if (hi-lo)/s <= 12 {
			step = s
			break
		}
	}
	minor := step / 5
	if step == 15 || step == 900 {
		minor = step / 3
	} else if step == 30 || step == 60 || step == 1800 || step == 3600 {
		minor = step / 6
	}
	var ticks []plot.Tick
	for i := math.Ceil(lo / minor); i*minor <= hi+1e-9 && len(ticks) < 500; i++ {
		v := i * minor
		tk := plot.Tick{Value: v}
		if r := math.Mod(v, step); math.Abs(r) < 1e-9 || math.Abs(r-step) < 1e-9 {
			tk.Label = " " // a major tick, its label blank unless labels
			if t.labels {
				tk.Label = strconv.FormatFloat(v, 'f', -1, 64)
			}
		}
		ticks = append(ticks, tk)
	}
	return ticks
}

// barChart draws plots/tps.png (plots/nopm.png for tpcc cells: the
// run's headline figure, analysis.RunFigure): one horizontal bar per cell, the
// median over its successful repeats, with a min–max whisker when
// repeated, coloured like the cell's lines in the time-series figures, and
// beside it the Conclusion's ratio, on the same figure.
func barChart(r *record.Run, pal palette) ([]byte, error) {
	fig := analysis.RunFigure(r)
	sums := r.Summaries()
	bars, names, repeated, withRatio := headlineBars(r, pal, fig)
	// NominalY counts from the bottom: the first cell goes on top.
	for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
		names[i], names[j] = names[j], names[i]
	}
	p := plot.New()
	gr := plotter.NewGrid()
	gr.Vertical.Color = figure.GridColor
	gr.Horizontal.Width = 0
	p.Add(gr, bars)
	p.NominalY(names...)
	p.X.Min = 0
	p.X.Label.Text = fig.Label + " (median over the successful repeats)"
	if fig.Name != engine.TPS.Name && fig.Unit != "" {
		p.X.Label.Text = fig.Label + ", " + fig.Unit + " (median over the successful repeats)"
	}
	if bars.floor > 0 {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.X.Min = bars.floor
		p.X.Label.Text += ", log scale"
	}
	if repeated {
		p.X.Label.Text += "; whiskers: min to max"
	}
	figure.Restyle(&p.X.Label.TextStyle, 11, figure.TextColor)
	figure.Restyle(&p.X.Tick.Label, 10, figure.TextColor)
	figure.Restyle(&p.Y.Tick.Label, 10, color.Black)
	h := vg.Inch + vg.Length(len(sums))*0.34*vg.Inch
	caption := "Measured window only (warm-up excluded)."
	if withRatio {
		caption += " Beside each bar, its ratio to the baseline as in the Conclusion: paired by round, with its 95% interval from " +
			strconv.Itoa(analysis.MinRoundsForRatioCI()) + " rounds on."
	}
	return figure.Render(figure.BarWidth, max(h, 2.4*vg.Inch), r.Experiment+": "+fig.Label+" by cell", caption, [][]*plot.Plot{{p}}, nil)
}

// headlineBars is the bars of barChart (figure fig) in run order, their
// names, whether any cell was repeated and whether any bar carries a
// ratio.
func headlineBars(r *record.Run, pal palette, fig engine.Headline) (*hbars, []string, bool, bool) {
	sums := r.Summaries()
	bars := &hbars{}
	var names []string
	repeated := false
	ratios := baselineRatios(r) // ratio.go: the Conclusion's, as in the table
	for i, s := range sums {
		b := hbar{y: float64(len(sums) - 1 - i), median: s.TPS, lo: math.Inf(1), hi: math.Inf(-1), runs: s.Runs, failed: s.Failed}
		if l := ratios[s.Name]; l != nil && l.Ratio.Rounds > 0 {
			b.ratio = RatioText(l.Ratio) + " vs " + l.Baseline
			if f := l.Headline(); f.Name != fig.Name {
				b.ratio = f.Label + " " + b.ratio // the bar is one figure, the ratio another
			}
		}
		var vals []float64
		for _, c := range r.Cells {
			if c.Name != s.Name {
				continue
			}
			b.color = pal.color(c)
			if len(pal.index) > len(plotColors) {
				// More scenarios or cells than colours: one colour, so
				// none repeats; the axis names every bar.
				b.color = plotColors[0]
			}
			if c.Status == record.CellOK && c.Result != nil {
				v := c.Result.TPS()
				if fig.Name != engine.TPS.Name {
					v = record.CellValue(&c, fig.Name)
				}
				if math.IsNaN(v) {
					continue
				}
				vals = append(vals, v)
				b.lo, b.hi = math.Min(b.lo, v), math.Max(b.hi, v)
			}
		}
		if fig.Name != engine.TPS.Name {
			b.median = record.Median(vals)
		}
		repeated = repeated || s.Runs > 1
		bars.bars = append(bars.bars, b)
		names = append(names, figure.Clip(s.Name, 60))
	}
	// A log axis when the cells differ by more than logSpread times: the
	// bars start at the decade below the smallest.
	perCell := map[string][]float64{}
	lo := math.Inf(1)
	for _, b := range bars.bars {
		if b.runs > 0 && b.median > 0 {
			perCell[strconv.Itoa(len(perCell))] = []float64{b.median}
			lo = math.Min(lo, math.Min(b.median, b.lo))
		}
	}
	if spread(perCell) > logSpread && lo > 0 && !math.IsInf(lo, 1) {
		bars.floor = logFloor(lo)
	}
	return bars, names, repeated, len(ratios) > 0
}

type hbar struct {
	y, median, lo, hi float64
	runs, failed      int
	color             color.RGBA
	ratio             string // "1.13x (0.98-1.30) vs b1e1", or ""
}

// label is the text beside the bar: the median, failures, the ratio.
func (b hbar) label() string {
	label := strconv.FormatFloat(b.median, 'f', 1, 64)
	if b.median >= 1000 {
		label = strconv.FormatFloat(b.median, 'f', 0, 64)
	}
	if b.failed > 0 {
		label += fmt.Sprintf(" (%d of %d failed)", b.failed, b.failed+b.runs)
	}
	if b.ratio != "" {
		label += ", " + b.ratio
	}
	return label
}

// hbars draws the bars of barChart, their whiskers and values; floor
// > 0 is a log axis's bottom, where the bars start.
type hbars struct {
	bars  []hbar
	floor float64
}

func (h *hbars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmax = 1
	room := 1.22
	for _, b := range h.bars {
		xmax = math.Max(xmax, math.Max(b.median, b.hi))
		if b.ratio != "" {
			room = 1.7 // the ratio's text
		}
	}
	if h.floor > 0 {
		// The same share of the width for the labels, in decades.
		decades := math.Log10(xmax / h.floor)
		return h.floor, xmax * math.Pow(10, decades*(room-1)), -0.6, float64(len(h.bars)) - 0.4
	}
	return 0, xmax * room, -0.6, float64(len(h.bars)) - 0.4
}

func (h *hbars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	ts := figure.TextStyle(9.5, figure.TextColor)
	ts.YAlign = draw.YCenter
	for _, b := range h.bars {
		y := trY(b.y)
		half := (trY(b.y+0.32) - trY(b.y-0.32)) / 2
		if b.runs == 0 {
			c.FillText(ts, vg.Point{X: trX(math.Max(h.floor, 0)) + vg.Points(4), Y: y}, "failed")
			continue
		}
		x0, x1 := trX(h.floor), trX(math.Max(b.median, h.floor))
		c.FillPolygon(b.color, []vg.Point{{X: x0, Y: y - half}, {X: x1, Y: y - half}, {X: x1, Y: y + half}, {X: x0, Y: y + half}})
		end := x1
		if b.runs > 1 && b.hi > b.lo {
			ls := draw.LineStyle{Color: color.Black, Width: vg.Points(1.1)}
			lo, hi := trX(b.lo), trX(b.hi)
			c.StrokeLine2(ls, lo, y, hi, y)
			c.StrokeLine2(ls, lo, y-half/2, lo, y+half/2)
			c.StrokeLine2(ls, hi, y-half/2, hi, y+half/2)
			end = max(end, hi)
		}
		c.FillText(ts, vg.Point{X: end + vg.Points(4), Y: y}, b.label())
	}
}

// seriesPanel is one panel under tps and p95 latency in plots/series*.png:
// a per-second figure a feature contributes.
type seriesPanel struct {
	label string                      // the Y axis
	value func(IntervalPoint) float64 // NaN: nothing that second
	min0  bool                        // the axis starts at 0
	p     *plot.Plot                  // drawn by seriesFigure
}

// seriesPanelSource contributes a feature's panels, and what the caption
// says of them, for the cell runs one figure draws.
type seriesPanelSource func(r *record.Run, runs []cellRun) (panels []seriesPanel, caption string)

// seriesPanelSources are the features' panels, in figure order: a new one
// is its function and one line here.
func seriesPanelSources() []seriesPanelSource {
	return []seriesPanelSource{
		headlinePanel, // plot.go: the figure the Conclusion compares, when not tps
		ioPanels,      // plot.go: the mechanism next to the throughput
		userPanels,    // plot.go: [[observe.metric]] columns
		readsPanel,    // steady.go: reads from the disk, in runs with a cold start
	}
}

// seriesMarkSources are the marks drawn over every panel for each cell
// run.
func seriesMarkSources() []func(panels []*plot.Plot, c record.Cell) {
	return []func([]*plot.Plot, record.Cell){
		addFeatureMarks, // the features' (a topology's node events)
	}
}

// markLines draws a cell run's marks as vertical lines labelled with what
// happened ("node2 pause"), over the whole panel.
type markLines struct {
	marks []section.Mark
	color color.Color
}

func (m *markLines) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	line := draw.LineStyle{Color: m.color, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
	sty := figure.TextStyle(vg.Points(7), m.color)
	for _, mk := range m.marks {
		x := trX(mk.At)
		if x < c.Min.X || x > c.Max.X {
			continue
		}
		c.StrokeLine2(line, x, c.Min.Y, x, c.Max.Y)
		label := mk.Label
		if mk.Failed {
			label += " (failed)"
		}
		c.FillText(sty, vg.Point{X: x + vg.Points(2), Y: c.Max.Y - vg.Points(9)}, label)
	}
}

// addFeatureMarks marks a cell run's features' marks (features.Reports)
// on every panel.
func addFeatureMarks(panels []*plot.Plot, c record.Cell) {
	var ms []section.Mark
	for _, f := range features.Reports {
		if f.Marks != nil {
			ms = append(ms, f.Marks(c)...)
		}
	}
	if len(ms) == 0 {
		return
	}
	m := &markLines{marks: ms, color: color.RGBA{R: 0x80, G: 0x20, B: 0x20, A: 0xff}}
	for _, p := range panels {
		p.Add(m)
	}
}

// headlinePanel is the run's headline figure per interval (NOPM for tpcc
// cells, from intervals.csv's column), under tps: the Conclusion compares
// it, so the figure that explains a ratio shows it over time.
func headlinePanel(r *record.Run, runs []cellRun) ([]seriesPanel, string) {
	fig := analysis.RunFigure(r) // analysis/headline.go
	if fig.Name == engine.TPS.Name {
		return nil, ""
	}
	value := func(p IntervalPoint) float64 {
		if v, ok := p.Engine[fig.Name]; ok {
			return v
		}
		return math.NaN()
	}
	for _, cr := range runs {
		for _, p := range cr.points {
			if !math.IsNaN(value(p)) {
				return []seriesPanel{{label: fig.Label, value: value, min0: true}},
					" Below tps: " + fig.Label + " (" + fig.Unit + ") per interval, the figure the Conclusion compares."
			}
		}
	}
	return nil, ""
}

// ioPanels are fsyncs per second and the device's await, when the sampler
// recorded them: the mechanism next to the throughput.
func ioPanels(_ *record.Run, runs []cellRun) ([]seriesPanel, string) {
	fsyncs, await := false, false
	for _, cr := range runs {
		for _, p := range cr.points {
			fsyncs = fsyncs || !math.IsNaN(fsyncsOf(p))
			_, ok := p.Metrics["disk_await_ms"]
			await = await || ok
		}
	}
	var out []seriesPanel
	if fsyncs {
		out = append(out, seriesPanel{label: "fsyncs/s (data+redo+binlog)", value: fsyncsOf, min0: true})
	}
	if await {
		out = append(out, seriesPanel{label: "disk await, ms", min0: true, value: func(p IntervalPoint) float64 {
			if v, ok := p.Metrics["disk_await_ms"]; ok {
				return v
			}
			return math.NaN()
		}})
	}
	if len(out) == 0 {
		return nil, ""
	}
	return out, " Below: fsyncs per second (InnoDB's, the redo log's where counted apart, the binary log's) and the datadir device's await."
}

// fsyncsOf is an interval's fsyncs per second: InnoDB's (data_fsyncs_s,
// the redo log's included on MariaDB), the redo log's where counted apart
// (MySQL) and the binary log's; NaN when none was sampled.
func fsyncsOf(p IntervalPoint) float64 {
	sum, any := 0.0, false
	for _, k := range []string{"data_fsyncs_s", "redo_fsyncs_s", "binlog_fsyncs_s"} {
		if v, ok := p.Metrics[k]; ok {
			sum, any = sum+v, true
		}
	}
	if !any {
		return math.NaN()
	}
	return sum
}

// maxUserPanels bounds the user-metric panels of plots/series.png.
const maxUserPanels = 6

// userPanels are the [[observe.metric]] columns (Run.UserMetrics) drawn
// under the built-in panels of plots/series.png, at most maxUserPanels.
func userPanels(r *record.Run, _ []cellRun) ([]seriesPanel, string) {
	var out []seriesPanel
	var cols []string
	for _, col := range r.UserMetrics {
		if len(out) == maxUserPanels {
			break
		}
		out = append(out, seriesPanel{label: col, value: func(p IntervalPoint) float64 {
			if v, ok := p.Metrics[col]; ok {
				return v
			}
			return math.NaN()
		}})
		cols = append(cols, col)
	}
	if len(out) == 0 {
		return nil, ""
	}
	return out, " Then your [[observe.metric]] columns: " + strings.Join(cols, ", ") + "."
}
