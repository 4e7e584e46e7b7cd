package observe

import "testing"

func TestTopWaits(t *testing.T) {
	t.Parallel()
	before := WaitSnapshot{"a": {"a", 10, 1}, "b": {"b", 5, 2}, "c": {"c", 1, 0.1}}
	after := WaitSnapshot{"a": {"a", 20, 4}, "b": {"b", 6, 2.5}, "c": {"c", 1, 0.1}, "d": {"d", 3, 1}}
	got := TopWaits(before, after, 2)
	if len(got) != 2 || got[0].Event != "a" || got[0].Seconds != 3 || got[0].Count != 10 || got[1].Event != "d" {
		t.Fatalf("TopWaits = %+v", got)
	}
	if TopWaits(before, nil, 5) != nil {
		t.Fatal("no snapshot (performance_schema off) must give no waits")
	}
}
