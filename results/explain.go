package results

import (
	"fmt"
	"io"
	"strings"

	"benchmatrix/features"
	"benchmatrix/record"
	"benchmatrix/section"
)

// cellNotes are the notes on a cell, in the order they are written:
// results' own, each named, and after each the features' that follow it
// (features.Reports).
func cellNotes() []section.Note {
	own := []struct {
		name string
		section.Note
	}{
		{"stalls", section.Note{Shows: func(c record.Cell) bool { return c.Stalls != nil }, Write: writeStallNote}},
		{"contention", section.Note{Write: writeContentionNote}},
		{"warmth", section.Note{Shows: func(c record.Cell) bool { return c.ColdStart != nil || c.Steady != nil }, Write: writeWarmthNote}},
		{"growth", section.Note{Shows: func(c record.Cell) bool { return c.Growth != nil }, Write: writeGrowthNote}},
		{"waits", section.Note{Shows: func(c record.Cell) bool { return len(c.Waits) > 0 }, Write: writeWaitsNote}},
	}
	var out []section.Note
	for _, n := range own {
		out = append(out, n.Note)
		for _, f := range features.Reports {
			for _, fn := range f.Notes {
				if fn.After == n.name {
					out = append(out, fn)
				}
			}
		}
	}
	return out
}

// writeExplain says, per cell run, what the observers saw (cellNotes):
// stalls and the metrics that moved at their onsets, table growth, the
// top waits.
func writeExplain(w io.Writer, r *record.Run) {
	notes := cellNotes()
	shown := func(c record.Cell) bool {
		for _, n := range notes {
			if n.Shows != nil && n.Shows(c) {
				return true
			}
		}
		return false
	}
	any := false
	for _, c := range r.Cells {
		any = any || shown(c)
	}
	if !any {
		return
	}
	fmt.Fprintf(w, "\n## What happened in each cell\n\n")
	for _, c := range r.Cells {
		if !shown(c) {
			continue
		}
		fmt.Fprintf(w, "**%s** (repeat %d)\n\n", c.Name, c.Repeat)
		for _, n := range notes {
			n.Write(w, c)
		}
		fmt.Fprintln(w)
	}
}

func writeStallNote(w io.Writer, c record.Cell) {
	st := c.Stalls
	if st == nil {
		return
	}
	fmt.Fprintf(w, "- stalls: %s", st.Text)
	if ev := c.StallEvidence; len(ev) > 0 {
		if len(ev) > 5 {
			ev = ev[:5]
		}
		fmt.Fprintf(w, "; at the onsets: %s", strings.Join(ev, ", "))
	}
	if c.Detector != nil {
		fmt.Fprintf(w, "; %s", c.Detector.Text)
	} else if len(c.Injected) > 0 {
		fmt.Fprintf(w, " (%d injected)", len(c.Injected))
	}
	fmt.Fprintln(w)
	causes := c.StallCauses
	if len(causes) > 5 {
		causes = causes[:5]
	}
	for _, cause := range causes {
		fmt.Fprintf(w, "  - %s\n", cause)
	}
	if n := len(c.StallCauses) - len(causes); n > 0 {
		fmt.Fprintf(w, "  - (%d more in run.json, stall_causes)\n", n)
	}
}

func writeContentionNote(w io.Writer, c record.Cell) {
	if ct := c.Contention; ct != nil && ct.Contended {
		fmt.Fprintf(w, "- **contention**: %s\n", ct.Why)
	}
}

func writeGrowthNote(w io.Writer, c record.Cell) {
	g := c.Growth
	if g == nil {
		return
	}
	how := "estimated"
	if g.RowsExact {
		how = "counted"
	}
	fmt.Fprintf(w, "- table growth: %d -> %d rows (%+d, %s), %s -> %s, max(id) %d -> %d\n",
		g.RowsBefore, g.RowsAfter, g.RowsDelta, how, mib(g.BytesBefore), mib(g.BytesAfter), g.MaxIDBefore, g.MaxIDAfter)
}

func writeWaitsNote(w io.Writer, c record.Cell) {
	if len(c.Waits) == 0 {
		return
	}
	var ws []string
	for i, e := range c.Waits {
		if i == 5 {
			break
		}
		ws = append(ws, waitText(e)) // mechanism.go
	}
	fmt.Fprintf(w, "- top waits (performance_schema; total, count, average, longest): %s\n", strings.Join(ws, "; "))
}
