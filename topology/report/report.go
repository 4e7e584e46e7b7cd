// Package report is what a topology adds to a run's reports: each cell's
// node events and data checks in summary.md's "What happened in each
// cell", and its node events marked on the time figures and charts. It is
// not package topology, which starts the clusters.
package report

import (
	"fmt"
	"io"
	"strings"

	"benchmatrix/record"
	"benchmatrix/section"
)

// Report is the topology's part of the reports.
var Report = section.Feature{
	Name:  "topology",
	Notes: []section.Note{{After: "stalls", Write: writeNote}},
	Marks: marks,
}

// marks are a cell's node events ("node2 pause").
func marks(c record.Cell) []section.Mark {
	if c.Topology == nil {
		return nil
	}
	var out []section.Mark
	for _, ev := range c.Topology.Events {
		out = append(out, section.Mark{At: ev.At, Label: fmt.Sprintf("node%d %s", ev.Node, ev.Action), Failed: ev.Error != ""})
	}
	return out
}

// writeNote adds a topology cell's nodes, events and data checks to
// summary.md's "What happened in each cell".
func writeNote(w io.Writer, c record.Cell) {
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
