package analysis

import (
	"fmt"
	"sort"
	"strings"

	"benchmatrix/engine"
	"benchmatrix/record"
)

// Which figure a comparison decides on: the one place that says it. The
// Conclusion's ratios, the rounds' decisions (and so when a conclusive run
// stops), the Results table's ratio column and the plots all ask
// ComparisonFigure. Each cell run's result records its engine's headline
// (engine.Descriptor.Headline: tps for oltp and slap, NOPM for tpcc); a cell
// run that searched its capacity at a latency target is compared on that
// capacity instead (the run at the capacity is offered the rate found, so
// its tps only echoes it, and two ratios would answer one question); two
// cells are compared on the headline they share, and on tps when their
// headlines differ (every engine reports tps), with a note saying so. A
// run.json written before results recorded a headline concludes on tps, as
// it did when it was written.

// headlineOf is the headline a cell run is compared on: its capacity when
// it searched one, else the headline it recorded (tps when it recorded
// none).
func headlineOf(c *record.Cell) engine.Headline {
	if c.Capacity != nil && c.Capacity.Searched {
		return capacityHeadline(c.Capacity.SLO.String())
	}
	if c.Result != nil && c.Result.Headline != nil && c.Result.Headline.Name != "" {
		return *c.Result.Headline
	}
	return engine.TPS
}

// ComparisonFigure is the figure cells x and y are compared on: the
// headline their successful runs share, else tps and a sentence saying
// why.
func ComparisonFigure(r *record.Run, x, y string) (engine.Headline, string) {
	seen := map[string]engine.Headline{}
	by := map[string][]string{} // headline name -> cells
	for i := range r.Cells {
		c := &r.Cells[i]
		if (c.Name != x && c.Name != y) || c.Status != record.CellOK || c.Result == nil {
			continue
		}
		h := headlineOf(c)
		seen[h.Name] = h
		if !containsString(by[h.Name], c.Name) {
			by[h.Name] = append(by[h.Name], c.Name)
		}
	}
	switch len(seen) {
	case 0:
		return engine.TPS, ""
	case 1:
		for _, h := range seen {
			return h, ""
		}
	}
	var parts []string
	for name, cells := range by {
		parts = append(parts, fmt.Sprintf("%s's is %s", strings.Join(cells, " and "), seen[name].Label))
	}
	sort.Strings(parts)
	return engine.TPS, fmt.Sprintf("%s vs %s is compared on tps, which every engine reports: their headline figures differ (%s)",
		x, y, strings.Join(parts, ", "))
}

// RunFigure is the figure the run's cells are drawn on side by side (the
// bar chart): the headline every successful cell run shares, else tps.
func RunFigure(r *record.Run) engine.Headline {
	var h *engine.Headline
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Status != record.CellOK || c.Result == nil {
			continue
		}
		ch := headlineOf(c)
		if h != nil && h.Name != ch.Name {
			return engine.TPS
		}
		h = &ch
	}
	if h == nil {
		return engine.TPS
	}
	return *h
}

// FigureLabel is how sentences name a figure a decision was made on ("" or
// "tps": tps; a headline some cell recorded: its label, "NOPM"; any other
// column: its name).
func FigureLabel(r *record.Run, name string) string {
	if name == "" || name == engine.TPS.Name {
		return engine.TPS.Label
	}
	for i := range r.Cells {
		if h := headlineOf(&r.Cells[i]); h.Name == name {
			return h.Label
		}
	}
	return name
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// capacityHeadline is the figure of cells that searched their capacity at
// slo: cells.csv's capacity column.
func capacityHeadline(slo string) engine.Headline {
	return engine.Headline{Name: "capacity", Label: "capacity at " + slo, Unit: "events per second", HigherIsBetter: true}
}
