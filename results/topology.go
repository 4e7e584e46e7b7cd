package results

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"benchmatrix/record"
)

// eventMarks draws a cell's node events as vertical lines labelled with
// the node and action ("node2 pause"), over the whole panel.
type eventMarks struct {
	events []record.NodeEvent
	color  color.Color
}

func (e *eventMarks) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	line := draw.LineStyle{Color: e.color, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
	sty := textStyle(vg.Points(7), e.color)
	for _, ev := range e.events {
		x := trX(ev.At)
		if x < c.Min.X || x > c.Max.X {
			continue
		}
		c.StrokeLine2(line, x, c.Min.Y, x, c.Max.Y)
		label := fmt.Sprintf("node%d %s", ev.Node, ev.Action)
		if ev.Error != "" {
			label += " (failed)"
		}
		c.FillText(sty, vg.Point{X: x + vg.Points(2), Y: c.Max.Y - vg.Points(9)}, label)
	}
}

// addEventMarks marks a cell's node events on every panel.
func addEventMarks(panels []*plot.Plot, c record.Cell) {
	if c.Topology == nil || len(c.Topology.Events) == 0 {
		return
	}
	m := &eventMarks{events: c.Topology.Events, color: color.RGBA{R: 0x80, G: 0x20, B: 0x20, A: 0xff}}
	for _, p := range panels {
		p.Add(m)
	}
}

// writeTopology adds a topology cell's nodes, events and data checks to
// summary.md's "What happened in each cell".
func writeTopology(w io.Writer, c record.Cell) {
	t := c.Topology
	if t == nil {
		return
	}
	if len(t.Events) > 0 {
		var evs []string
		for _, ev := range t.Events {
			s := fmt.Sprintf("t=%.1fs node%d %s", ev.At, ev.Node, ev.Action)
			if ev.Error != "" {
				s += " FAILED: " + ev.Error
			}
			evs = append(evs, s)
		}
		fmt.Fprintf(w, "- node events: %s", strings.Join(evs, ", "))
		if len(t.Healed) > 0 {
			fmt.Fprintf(w, "; after the cell: %s", strings.Join(t.Healed, ", "))
		}
		fmt.Fprintln(w)
	}
	for _, ck := range t.Checks {
		fmt.Fprintf(w, "- %s\n", ck.Summary)
	}
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
