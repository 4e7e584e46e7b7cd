package results

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"benchmatrix/record"
)

// How many cells' lines one series figure holds, and how its colours and
// labels stay readable: a group of more cells is drawn as small multiples
// (several figures of at most maxSeries lines each); within one figure
// every line has its own colour (the run-wide colour of its scenario or
// cell when those are distinct within the figure, else one by position);
// and the legend names each cell by what differs within the figure, the
// parameters they share going to the title.
const maxSeries = 8

// splitGroups cuts every group of more than maxSeries cells into parts of
// nearly equal size, in run order.
func splitGroups(groups []plotGroup) []plotGroup {
	var out []plotGroup
	for _, g := range groups {
		n := len(g.cells)
		if n <= maxSeries {
			out = append(out, g)
			continue
		}
		parts := (n + maxSeries - 1) / maxSeries
		size := (n + parts - 1) / parts
		for p := 0; p < parts; p++ {
			lo, hi := p*size, min((p+1)*size, n)
			out = append(out, plotGroup{key: g.key, cells: g.cells[lo:hi], part: p + 1, parts: parts})
		}
	}
	return out
}

// figureColors gives each cell of a figure its colour: the palette's when
// no two of the figure's cells share one, else one per distinct key by
// position (a figure has at most maxSeries keys, fewer than the colours).
func figureColors(r *record.Run, g plotGroup, pal palette) map[string]color.RGBA {
	in := map[string]bool{}
	for _, n := range g.cells {
		in[n] = true
	}
	var keys []string
	cellKey := map[string]string{}
	seenKey := map[string]bool{}
	for _, c := range r.Cells {
		if !in[c.Name] {
			continue
		}
		k := pal.key(c)
		cellKey[c.Name] = k
		if !seenKey[k] {
			seenKey[k] = true
			keys = append(keys, k)
		}
	}
	used := map[color.RGBA]bool{}
	distinct := true
	for _, k := range keys {
		clr := plotColors[pal.index[k]%len(plotColors)]
		if used[clr] {
			distinct = false
		}
		used[clr] = true
	}
	byKey := map[string]color.RGBA{}
	for i, k := range keys {
		if distinct {
			byKey[k] = plotColors[pal.index[k]%len(plotColors)]
		} else {
			byKey[k] = plotColors[i%len(plotColors)]
		}
	}
	out := map[string]color.RGBA{}
	for name, k := range cellKey {
		out[name] = byKey[k]
	}
	return out
}

// shortLabels names each cell of a figure by the "key=value" parts of its
// name that differ within the figure, and returns the parts all of them
// share (for the title). Names that are not key=value paths (a cell_name
// template) are kept whole.
func shortLabels(names []string) (labels map[string]string, common []string) {
	labels = map[string]string{}
	split := make([][]string, len(names))
	for i, n := range names {
		split[i] = strings.Split(n, "/")
		for _, part := range split[i] {
			if !strings.Contains(part, "=") {
				split = nil
				break
			}
		}
		if split == nil {
			break
		}
	}
	if split == nil || len(names) < 2 {
		for _, n := range names {
			labels[n] = n
		}
		return labels, nil
	}
	count := map[string]int{}
	for _, parts := range split {
		for _, p := range parts {
			count[p]++
		}
	}
	for _, p := range split[0] {
		if count[p] == len(names) {
			common = append(common, p)
		}
	}
	for i, parts := range split {
		var keep []string
		for _, p := range parts {
			if count[p] != len(names) {
				keep = append(keep, p)
			}
		}
		labels[names[i]] = strings.Join(keep, "/")
		if labels[names[i]] == "" {
			labels[names[i]] = names[i]
		}
	}
	return labels, common
}

// partSuffix is the title and file-name suffix of one part of a group
// drawn as small multiples.
func (g plotGroup) partSuffix() (title, name string) {
	if g.parts < 2 {
		return "", ""
	}
	return fmt.Sprintf(" (%d of %d)", g.part, g.parts), fmt.Sprintf("-part%d", g.part)
}

// logSpread is the ratio beyond which cells share a log axis: on a linear
// one a 43-tps cell lies flat on zero next to a 25,000-tps one.
const logSpread = 10

// spread is the ratio of the largest to the smallest per-cell median of
// the positive values; 1 when fewer than two cells have one.
func spread(perCell map[string][]float64) float64 {
	lo, hi := math.Inf(1), 0.0
	for _, vs := range perCell {
		var pos []float64
		for _, v := range vs {
			if v > 0 && !math.IsInf(v, 0) {
				pos = append(pos, v)
			}
		}
		if len(pos) == 0 {
			continue
		}
		slices.Sort(pos)
		m := pos[len(pos)/2]
		lo, hi = math.Min(lo, m), math.Max(hi, m)
	}
	if hi <= 0 || math.IsInf(lo, 1) {
		return 1
	}
	return hi / lo
}

// logFloor is the bottom of a log axis for values down to lo: the decade
// at or below it.
func logFloor(lo float64) float64 { return math.Pow(10, math.Floor(math.Log10(lo))) }
