package history

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The trend plots follow results/plot.go's look: Liberation Sans, 110 dpi,
// light grid, the title top left.
var (
	plotFont   = font.Font{Typeface: "Liberation", Variant: "Sans"}
	lineColor  = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	badColor   = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	goodColor  = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	gridColor  = color.Gray{Y: 0xe4}
	textColor  = color.Gray{Y: 0x40}
	levelColor = color.RGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xff}
)

const plotDPI = 110

func textStyle(size vg.Length, c color.Color) text.Style {
	return text.Style{Color: c, Font: font.From(plotFont, size), Handler: plot.DefaultTextHandler}
}

// PlotFile is the file name of a series' trend plot.
func PlotFile(sc SeriesCheck) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, sc.Series.Experiment+"-"+sc.Series.Cell)
	return "trend-" + name + "-" + sc.Series.ID + ".png"
}

// WritePlots writes one PNG per series into dir and returns the paths.
func WritePlots(dir string, checks []SeriesCheck, last int) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []string
	for _, sc := range checks {
		b, err := TrendPlot(sc, last)
		if err != nil {
			return out, fmt.Errorf("plot %s: %w", sc.Series.Name(), err)
		}
		p := filepath.Join(dir, PlotFile(sc))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}

// TrendPlot draws a series: one panel per metric, runs on x (labelled with
// their commit or label), the value with its interval as a whisker, the
// level between change points as a grey step, and each change point as a
// vertical line (red for a regression, green for an improvement) with its
// size.
func TrendPlot(sc SeriesCheck, last int) ([]byte, error) {
	from := 0
	if last > 0 && len(sc.Points) > last {
		from = len(sc.Points) - last
	}
	var panels []*plot.Plot
	for _, mc := range sc.Metrics {
		p := plot.New()
		p.Title.Text = mc.Metric.Name
		p.Title.TextStyle = textStyle(11, color.Black)
		p.Title.TextStyle.XAlign = draw.XLeft
		p.Y.Label.Text = mc.Metric.Unit
		p.Y.Label.TextStyle = textStyle(10, textColor)
		p.X.Tick.Label = textStyle(8, textColor)
		p.Y.Tick.Label = textStyle(9, textColor)
		grid := plotter.NewGrid()
		grid.Vertical.Color, grid.Horizontal.Color = gridColor, gridColor
		p.Add(grid)
		var pts plotter.XYs
		var errs plotter.YErrors
		var withErr plotter.XYs
		for _, i := range mc.Points {
			if i < from {
				continue
			}
			v, lo, hi, _ := mc.Metric.Value(sc.Points[i])
			pts = append(pts, plotter.XY{X: float64(i + 1), Y: v})
			if lo != 0 || hi != 0 {
				withErr = append(withErr, plotter.XY{X: float64(i + 1), Y: v})
				errs = append(errs, struct{ Low, High float64 }{v - lo, hi - v})
			}
		}
		if len(pts) == 0 {
			continue
		}
		if len(withErr) > 0 {
			eb := &yErrorBars{XYs: withErr, errs: errs}
			p.Add(eb)
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = lineColor, vg.Points(1.2)
		s.Color, s.Shape, s.Radius = lineColor, draw.CircleGlyph{}, vg.Points(2.5)
		p.Add(l, s)
		// The levels between change points.
		bounds := []int{0}
		for _, c := range mc.Changes {
			bounds = append(bounds, indexOf(mc.Points, c.Index))
		}
		bounds = append(bounds, len(mc.Points))
		for b := 0; b+1 < len(bounds); b++ {
			seg := mc.Values[bounds[b]:bounds[b+1]]
			if len(seg) == 0 {
				continue
			}
			lv := geoMean(seg)
			x0 := float64(mc.Points[bounds[b]]+1) - 0.4
			x1 := float64(mc.Points[bounds[b+1]-1]+1) + 0.4
			if x1 < float64(from+1) {
				continue
			}
			x0 = max(x0, float64(from+1)-0.4)
			ll, err := plotter.NewLine(plotter.XYs{{X: x0, Y: lv}, {X: x1, Y: lv}})
			if err != nil {
				return nil, err
			}
			ll.Color, ll.Width, ll.Dashes = levelColor, vg.Points(1), []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(ll)
		}
		for _, c := range mc.Changes {
			if c.Index < from {
				continue
			}
			col := goodColor
			if c.Regression {
				col = badColor
			}
			p.Add(&vLine{x: float64(c.Index+1) - 0.5, color: col, label: fmt.Sprintf("%+.0f%%", 100*c.Change)})
		}
		p.X.Tick.Marker = runTicks{points: sc.Points, from: from}
		p.X.Min, p.X.Max = float64(from+1)-0.6, float64(len(sc.Points))+0.6
		p.Y.Min = 0
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		return nil, fmt.Errorf("no values to plot")
	}
	w, h := 10*vg.Inch, vg.Length(1.2+2.6*float64(len(panels)))*vg.Inch
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(plotDPI))
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	pad := vg.Points(8)
	ts := textStyle(14, color.Black)
	ts.XAlign, ts.YAlign = draw.XLeft, draw.YTop
	y := dc.Max.Y - pad
	title := fmt.Sprintf("%s: %d runs (series %s)", sc.Series.Name(), len(sc.Points), sc.Series.ID)
	dc.FillText(ts, vg.Point{X: dc.Min.X + pad, Y: y}, title)
	y -= ts.Rectangle(title).Size().Y + vg.Points(4)
	cs := textStyle(9.5, textColor)
	cs.XAlign, cs.YAlign = draw.XLeft, draw.YTop
	for _, line := range []string{
		"x: runs in the order they started, with their commit or label where it changes. Whiskers: the range of the run's repeats (ratio: its 95 % interval).",
		"Dashed grey: the level between change points. Vertical lines: change points (red a regression, green an improvement) and their size.",
	} {
		dc.FillText(cs, vg.Point{X: dc.Min.X + pad, Y: y}, line)
		y -= cs.Rectangle(line).Size().Y
	}
	y -= vg.Points(10)
	area := draw.Crop(dc, 0, 0, 0, -(dc.Max.Y - y))
	grid := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		grid[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadY: vg.Points(8), PadLeft: pad, PadRight: 2 * pad, PadBottom: pad, PadTop: pad / 2}
	canvases := plot.Align(grid, tiles, area)
	for i, p := range panels {
		p.Draw(canvases[i][0])
	}
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func indexOf(xs []int, v int) int {
	for i, x := range xs {
		if x == v {
			return i
		}
	}
	return -1
}

func geoMean(xs []float64) float64 {
	z := make([]float64, len(xs))
	for i, x := range xs {
		z[i] = math.Log(x)
	}
	return math.Exp(mean(z))
}

// runTicks labels each run with its number and commit or label.
type runTicks struct {
	points []Point
	from   int
}

func (t runTicks) Ticks(lo, hi float64) []plot.Tick {
	n := len(t.points) - t.from
	step := 1
	for n/step > 25 {
		step++
	}
	var out []plot.Tick
	for i := t.from; i < len(t.points); i++ {
		x := float64(i + 1)
		if x < lo || x > hi {
			continue
		}
		if (i-t.from)%step != 0 && i != len(t.points)-1 {
			out = append(out, plot.Tick{Value: x})
			continue
		}
		// The commit or label under a run's number where it changes (a
		// run of nights on one commit is labelled once).
		label := fmt.Sprint(i + 1)
		if r := t.points[i].Ref(); r != t.points[i].RunID && (i == t.from || r != t.points[i-1].Ref()) {
			if len(r) > 7 {
				r = r[:7]
			}
			label += "\n" + r
		}
		out = append(out, plot.Tick{Value: x, Label: label})
	}
	return out
}

// vLine is a change point: a vertical line across the panel with its size
// written at the top.
type vLine struct {
	x     float64
	color color.Color
	label string
}

func (v *vLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(v.x)
	c.StrokeLine2(draw.LineStyle{Color: v.color, Width: vg.Points(1.5)}, x, c.Min.Y, x, c.Max.Y)
	ts := textStyle(9, v.color)
	ts.XAlign, ts.YAlign = draw.XLeft, draw.YTop
	c.FillText(ts, vg.Point{X: x + vg.Points(3), Y: c.Max.Y - vg.Points(2)}, v.label)
}

// yErrorBars draws whiskers for the points that have an interval.
type yErrorBars struct {
	plotter.XYs
	errs plotter.YErrors
}

func (e *yErrorBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	st := draw.LineStyle{Color: color.NRGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0x90}, Width: vg.Points(1)}
	w := vg.Points(3)
	for i, pt := range e.XYs {
		x := trX(pt.X)
		y0, y1 := trY(pt.Y-e.errs[i].Low), trY(pt.Y+e.errs[i].High)
		c.StrokeLine2(st, x, y0, x, y1)
		c.StrokeLine2(st, x-w, y0, x+w, y0)
		c.StrokeLine2(st, x-w, y1, x+w, y1)
	}
}

// DataRange makes the whiskers part of the axis range.
func (e *yErrorBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = plotter.XYRange(e.XYs)
	for i, pt := range e.XYs {
		ymin = min(ymin, pt.Y-e.errs[i].Low)
		ymax = max(ymax, pt.Y+e.errs[i].High)
	}
	return
}
