package results

import "testing"

// On a cluster the Conclusion's stall line names the node columns that
// moved at the onsets (at most three, in the evidence's order); a single
// server's movers stay in the cell's notes.
func TestNodeMoversInTheConclusion(t *testing.T) {
	t.Parallel()
	cases := []struct {
		evidence []string
		want     string
	}{
		{nil, ""},
		{[]string{"row_lock_current_waits ↑ (0 → 4)", "dirty_pages ×3.1 (420 → 1302)"}, ""},
		{[]string{"node1.wsrep_local_state ×0.5 (4 → 2)", "row_lock_current_waits ↑ (0 → 4)", "node2.gr_rows_validating ×0.1 (9000 → 900)"},
			"; at the onsets: node1.wsrep_local_state ×0.5 (4 → 2), node2.gr_rows_validating ×0.1 (9000 → 900)"},
		{[]string{"node1.a ↑ (0 → 1)", "node2.b ↑ (0 → 1)", "node3.c ↑ (0 → 1)", "node1.d ↑ (0 → 1)"},
			"; at the onsets: node1.a ↑ (0 → 1), node2.b ↑ (0 → 1), node3.c ↑ (0 → 1)"},
	}
	for _, c := range cases {
		if got := nodeMovers(c.evidence); got != c.want {
			t.Errorf("nodeMovers(%q) = %q, want %q", c.evidence, got, c.want)
		}
	}
}
