package htmlreport

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Chart is one panel of lines over a shared x axis, drawn as SVG by Go;
// the page's script adds hover values, zoom (on the x axis, shared by every
// chart of the same Axis) and cells switched on and off (by Series.Key).
type Chart struct {
	ID     string // unique in the page
	Title  string
	YLabel string
	XLabel string
	// Axis names the x axis the chart shares with others: zooming one
	// zooms all of them ("time"); XMin and XMax are its full range.
	Axis       string
	XMin, XMax float64
	// Log draws the y axis on a log scale (see NeedsLog); values <= 0 sit
	// on the axis' floor.
	Log bool
	// Integer x ticks (repeat numbers), and markers on every point.
	IntegerX, Markers bool
	Series            []Series
	Bands             []Band
	Marks             []Mark
	Note              string // a line under the chart (plain text)
}

// Series is one line: a cell run's values over x.
type Series struct {
	Key   string // the cell it belongs to: the legend's toggle
	Label string // in the hover box
	Color string // CSS colour
	Thin  bool   // a later repeat: drawn thinner
	// X and Y are the points (NaN in Y: no value, a gap in the line);
	// points with X <= DashUntil (the warm-up) are drawn dashed.
	X, Y      []float64
	DashUntil float64
}

// Band shades [From, To] of x: the warm-up (Key "") or a cell's stall.
type Band struct {
	Key      string
	From, To float64
	Color    string
	Title    string
}

// Mark is a vertical line at X: a node event.
type Mark struct {
	Key   string
	X     float64
	Label string
}

// Geometry of a chart's SVG, in its viewBox units (px at 100% zoom).
const (
	chartW     = 1000
	chartH     = 240
	padLeft    = 72
	padRight   = 12
	padTop     = 8
	padBottom  = 34
	plotW      = chartW - padLeft - padRight
	plotH      = chartH - padTop - padBottom
	maxYTicks  = 6
	coordScale = 10 // path coordinates are written in tenths of a unit
)

// NeedsLog says whether series that differ by more than ten times (the
// ratio of the largest to the smallest per-key median of positive values)
// should share a log axis: on a linear one the small ones lie flat on zero.
func NeedsLog(series []Series) bool {
	byKey := map[string][]float64{}
	for _, s := range series {
		for _, v := range s.Y {
			if v > 0 && !math.IsInf(v, 0) {
				byKey[s.Key] = append(byKey[s.Key], v)
			}
		}
	}
	lo, hi := math.Inf(1), 0.0
	for _, vs := range byKey {
		slices.Sort(vs)
		m := vs[len(vs)/2]
		lo, hi = math.Min(lo, m), math.Max(hi, m)
	}
	return hi > 0 && lo > 0 && hi/lo > 10
}

// yRange is the y axis: its bounds in data units (log10 of them on a log
// axis) and its ticks.
type yRange struct {
	log    bool
	lo, hi float64
	ticks  []float64 // data values
}

func (c *Chart) yRange() yRange {
	lo, hi := math.Inf(1), math.Inf(-1)
	minPos := math.Inf(1)
	for _, s := range c.Series {
		for _, v := range s.Y {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
			if v > 0 {
				minPos = math.Min(minPos, v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
	}
	if c.Log && !math.IsInf(minPos, 1) {
		// From a little under the smallest positive value to a little over
		// the largest; ticks at 1, 2 and 5 times the decades when the axis
		// spans few of them, at decades otherwise.
		a, b := math.Log10(minPos), math.Log10(math.Max(hi, minPos))
		pad := math.Max((b-a)*0.04, 0.05)
		a, b = a-pad, b+pad
		var ticks []float64
		mult := []float64{1}
		if b-a < 2.5 {
			mult = []float64{1, 2, 5}
		}
		step := math.Max(1, math.Ceil((b-a)/maxYTicks))
		for e := math.Floor(a); e <= b; e += step {
			for _, m := range mult {
				v := m * math.Pow(10, e)
				if l := math.Log10(v); l >= a && l <= b {
					ticks = append(ticks, v)
				}
			}
		}
		return yRange{log: true, lo: a, hi: b, ticks: ticks}
	}
	lo = math.Min(lo, 0)
	if hi <= lo {
		hi = lo + 1
	}
	hi += (hi - lo) * 0.03 // a point at the maximum is not hidden by the frame
	step := niceStep((hi - lo) / maxYTicks)
	top := math.Ceil(hi/step) * step
	bottom := math.Floor(lo/step) * step
	var ticks []float64
	for v := bottom; v <= top+step/2; v += step {
		ticks = append(ticks, v)
	}
	return yRange{lo: bottom, hi: top, ticks: ticks}
}

// niceStep rounds a step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// y maps a value to the plot's y (0 at the top).
func (r yRange) y(v float64) float64 {
	if r.log {
		if v <= 0 {
			return plotH
		}
		v = math.Log10(v)
	}
	f := (v - r.lo) / (r.hi - r.lo)
	return plotH - f*plotH
}

func (c *Chart) x(v float64) float64 {
	span := c.XMax - c.XMin
	if span <= 0 {
		span = 1
	}
	return (v - c.XMin) / span * plotW
}

// coord writes a coordinate in tenths, as a short decimal.
func coord(v float64) string {
	return strconv.FormatFloat(math.Round(v*coordScale)/coordScale, 'f', -1, 64)
}

func axisLabel(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(v/1e6, 'f', 2, 64), "0"), ".") + "M"
	case a >= 1e4:
		return strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(v/1e3, 'f', 1, 64), "0"), ".") + "k"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// svg draws the chart. Every element of a cell carries data-k (its key),
// so the script switches a cell off by hiding them.
func (c *Chart) svg(b *strings.Builder) {
	yr := c.yRange()
	fmt.Fprintf(b, `<svg class="chart" id="%s" viewBox="0 0 %d %d" role="img" aria-label="%s" data-axis="%s" data-x0="%s" data-x1="%s"%s>`,
		attr(c.ID), chartW, chartH, attr(c.Title), attr(c.Axis), num(c.XMin), num(c.XMax), boolAttr(" data-int", c.IntegerX))
	// Axes, grid and y ticks: outside the zoomable area.
	fmt.Fprintf(b, `<g transform="translate(%d %d)">`, padLeft, padTop)
	for _, t := range yr.ticks {
		y := coord(yr.y(t))
		fmt.Fprintf(b, `<line class="grid" x1="0" x2="%d" y1="%s" y2="%s"/><text class="ytick" x="-6" y="%s">%s</text>`,
			plotW, y, y, y, html.EscapeString(axisLabel(t)))
	}
	fmt.Fprintf(b, `<rect class="frame" width="%d" height="%d"/>`, plotW, plotH)
	ylabel := c.YLabel
	if yr.log {
		ylabel += " (log scale)"
	}
	fmt.Fprintf(b, `<text class="ylabel" transform="translate(-58 %d) rotate(-90)">%s</text>`, plotH/2, html.EscapeString(ylabel))
	fmt.Fprintf(b, `<g class="xticks" transform="translate(0 %d)"></g>`, plotH)
	fmt.Fprintf(b, `<text class="xlabel" x="%d" y="%d">%s</text>`, plotW/2, plotH+30, html.EscapeString(c.XLabel))
	// The data, in an inner SVG whose viewBox the script narrows to zoom.
	fmt.Fprintf(b, `<svg class="plot" width="%d" height="%d" viewBox="0 0 %d %d" preserveAspectRatio="none">`, plotW, plotH, plotW, plotH)
	for _, bd := range c.Bands {
		x0, x1 := c.x(bd.From), c.x(bd.To)
		if x1 <= x0 {
			continue
		}
		fmt.Fprintf(b, `<rect class="band" x="%s" y="0" width="%s" height="%d" fill="%s"%s><title>%s</title></rect>`,
			coord(x0), coord(x1-x0), plotH, attr(bd.Color), keyAttr(bd.Key), html.EscapeString(bd.Title))
	}
	for _, m := range c.Marks {
		x := coord(c.x(m.X))
		fmt.Fprintf(b, `<line class="mark" x1="%s" x2="%s" y1="0" y2="%d"%s><title>%s</title></line>`, x, x, plotH, keyAttr(m.Key), html.EscapeString(m.Label))
	}
	for i, s := range c.Series {
		warm, run := c.paths(s, yr)
		cls := "line"
		if s.Thin {
			cls += " thin"
		}
		if warm != "" {
			fmt.Fprintf(b, `<path class="%s warm" d="%s" stroke="%s"%s/>`, cls, warm, attr(s.Color), keyAttr(s.Key))
		}
		if run != "" {
			fmt.Fprintf(b, `<path class="%s" d="%s" stroke="%s"%s data-i="%d"/>`, cls, run, attr(s.Color), keyAttr(s.Key), i)
		}
		if c.Markers {
			for j, x := range s.X {
				if j < len(s.Y) && !math.IsNaN(s.Y[j]) {
					fmt.Fprintf(b, `<circle class="dot" cx="%s" cy="%s" r="3.5" fill="%s"%s/>`, coord(c.x(x)), coord(yr.y(s.Y[j])), attr(s.Color), keyAttr(s.Key))
				}
			}
		}
	}
	fmt.Fprintf(b, `<line class="cursor" x1="-10" x2="-10" y1="0" y2="%d"/>`, plotH)
	fmt.Fprintf(b, `<rect class="zoomsel" x="0" y="0" width="0" height="%d"/>`, plotH)
	b.WriteString(`</svg></g></svg>`)
}

// paths is a series as SVG path data: the dashed part (X <= DashUntil) and
// the rest; NaN values break the line. On a time axis each value covers
// its interval, from the point before (0 for the first) to its own X, as
// a step, as in plots/series*.png; with Markers (repeats) points are
// joined by straight lines.
func (c *Chart) paths(s Series, yr yRange) (warm, run string) {
	var w, r strings.Builder
	pen, prevWarm := false, false
	var penX, penY float64 // where the pen is, rounded as written
	round := func(v float64) float64 { return math.Round(v*coordScale) / coordScale }
	for i, x := range s.X {
		if i >= len(s.Y) {
			break
		}
		v := s.Y[i]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			pen = false
			continue
		}
		isWarm := s.DashUntil > 0 && x <= s.DashUntil
		out := &r
		if isWarm {
			out = &w
		}
		xe, y := round(c.x(x)), round(yr.y(v))
		if c.Markers {
			switch {
			case pen && prevWarm == isWarm:
				fmt.Fprintf(out, "l%s", pair(xe-penX, y-penY))
			default:
				fmt.Fprintf(out, "M%s", pair(xe, y))
			}
			pen, prevWarm, penX, penY = true, isWarm, xe, y
			continue
		}
		start := c.XMin
		if i > 0 && s.X[i-1] < x {
			start = s.X[i-1]
		}
		xs := round(c.x(start))
		switch {
		case pen && prevWarm == isWarm:
			fmt.Fprintf(out, "%sh%s", vstep(y-penY), coord(xe-penX))
		case pen && prevWarm: // the measured window goes on from the warm-up
			fmt.Fprintf(out, "M%s%sh%s", pair(penX, penY), vstep(y-penY), coord(xe-penX))
		default:
			fmt.Fprintf(out, "M%sh%s", pair(xs, y), coord(xe-xs))
		}
		pen, prevWarm, penX, penY = true, isWarm, xe, y
	}
	return w.String(), r.String()
}

// vstep is a relative vertical step, nothing when there is none.
func vstep(dy float64) string {
	if math.Abs(dy) < 0.5/coordScale {
		return ""
	}
	return "v" + coord(dy)
}

// pair writes two coordinates, the separator left out before a minus.
func pair(a, b float64) string {
	sb := coord(b)
	if strings.HasPrefix(sb, "-") {
		return coord(a) + sb
	}
	return coord(a) + " " + sb
}

func attr(s string) string { return html.EscapeString(s) }

func keyAttr(k string) string {
	if k == "" {
		return ""
	}
	return ` data-k="` + html.EscapeString(k) + `"`
}

func boolAttr(a string, on bool) string {
	if on {
		return a
	}
	return ""
}

func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// jsonNum is a value for the page's data: 4 significant digits, null for
// no value.
func jsonNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "null"
	}
	if math.Abs(v) >= 1000 && math.Abs(v) < 1e15 {
		// 4 significant digits, written out: 15530, not 1.553e+04.
		r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
