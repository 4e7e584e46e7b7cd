package observe

import "testing"

func TestTopWaits(t *testing.T) {
	t.Parallel()
	w := func(name string, n int64, s, mx float64) WaitEvent {
		return WaitEvent{Event: name, Count: n, Seconds: s, MaxSeconds: mx}
	}
	before := WaitSnapshot{"a": w("a", 10, 1, 0.5), "b": w("b", 5, 2, 1), "c": w("c", 1, 0.1, 0.1)}
	after := WaitSnapshot{"a": w("a", 20, 4, 0.5), "b": w("b", 6, 2.5, 1), "c": w("c", 1, 0.1, 0.1), "d": w("d", 3, 1, 0.6)}
	got := TopWaits(before, after, 2)
	if len(got) != 2 || got[0].Event != "a" || got[0].Seconds != 3 || got[0].Count != 10 || got[1].Event != "d" {
		t.Fatalf("TopWaits = %+v", got)
	}
	// a's maximum did not rise: the server's maximum is only an upper
	// bound for the cell; d's is new, so it happened in the cell.
	if got[0].MaxInCell || got[0].MaxSeconds != 0.5 || !got[1].MaxInCell || got[1].MaxSeconds != 0.6 {
		t.Errorf("maxima: %+v", got)
	}
	if TopWaits(before, nil, 5) != nil {
		t.Fatal("no snapshot (performance_schema off) must give no waits")
	}
}
