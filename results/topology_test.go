package results

import (
	"bytes"
	"strings"
	"testing"

	"benchmatrix/record"
)

func TestTopologyLinesInSummary(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeTopology(&b, record.Cell{Topology: &record.TopologyResult{Kind: "galera",
		Events: []record.NodeEvent{{At: 10.02, Node: 2, Action: "pause"}, {At: 14, Node: 2, Action: "start", Error: "node2 did not come back"}},
		Healed: []string{"node2 resumed"},
		Checks: []record.DataCheck{{When: "after the cell", Equal: true, Summary: "data after the cell: equal on 3 nodes"}}}})
	want := "- node events: t=10.0s node2 pause, t=14.0s node2 start FAILED: node2 did not come back; after the cell: node2 resumed\n" +
		"- data after the cell: equal on 3 nodes\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	writeTopology(&b, record.Cell{})
	if b.Len() != 0 {
		t.Fatalf("a single-server cell wrote %q", b.String())
	}
}

func TestUserPanelsBounded(t *testing.T) {
	t.Parallel()
	var cols []string
	for i := 0; i < maxUserPanels+3; i++ {
		cols = append(cols, "node"+string(rune('1'+i))+".m")
	}
	ups, _ := userPanels(&record.Run{UserMetrics: cols}, nil)
	if len(ups) != maxUserPanels || ups[0].label != "node1.m" {
		t.Fatalf("%d panels, first %q", len(ups), ups[0].label)
	}
	if _, c := userPanels(&record.Run{UserMetrics: cols[:2]}, nil); !strings.Contains(c, "node1.m, node2.m") {
		t.Fatalf("caption %q", c)
	}
	if v := ups[0].value(IntervalPoint{Metrics: map[string]float64{"node1.m": 7}}); v != 7 {
		t.Fatalf("value %v", v)
	}
}
