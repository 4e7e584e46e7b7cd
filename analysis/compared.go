package analysis

import "benchmatrix/record"

// CellPair is two cells to compare: Cell against Ref.
type CellPair struct{ Cell, Ref string }

// EqualTPS: below this relative difference of tps there is nothing for a
// mechanism or a profile to account for.
const EqualTPS = 0.02

// ComparedPairs are the pairs a run's mechanism and profiles are judged
// on: its ratio lines' pairs, then each adjacent pair of the expected
// orderings not among them, in order.
func ComparedPairs(r *record.Run, ratios []RatioLine) []CellPair {
	var out []CellPair
	seen := map[[2]string]bool{}
	add := func(cell, ref string) {
		if cell == ref || seen[[2]string{cell, ref}] || seen[[2]string{ref, cell}] {
			return
		}
		seen[[2]string{cell, ref}] = true
		out = append(out, CellPair{Cell: cell, Ref: ref})
	}
	for _, l := range ratios {
		add(l.Cell, l.Baseline)
	}
	sums := r.Summaries()
	for _, e := range Expectations(r) {
		for _, g := range ExpectGroups(e, sums) {
			for i := 0; i+1 < len(g.Cells); i++ {
				// "a < b": b against a; "a > b": a against b.
				cell, ref := g.Cells[i+1], g.Cells[i]
				if i < len(e.Ops) && e.Ops[i] == ">" {
					cell, ref = ref, cell
				}
				add(cell, ref)
			}
		}
	}
	return out
}
