package observe

import "testing"

func TestMatchOnsets(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                      string
		detected, injected        []float64
		from, to                  float64
		hits, misses, fa, outside int
		text                      string
	}{
		{"all found", []float64{60, 120, 181}, []float64{60, 120, 180}, 5, 205, 3, 0, 0, 0,
			"detector against 3 injected stalls: 3 hits, 0 misses, 0 false alarms"},
		{"a miss and a false alarm", []float64{60, 95}, []float64{60, 120}, 5, 205, 1, 1, 1, 0,
			"detector against 2 injected stalls: 1 hit, 1 miss, 1 false alarm"},
		{"too late is not a hit", []float64{64}, []float64{60}, 5, 205, 0, 1, 1, 0, ""},
		{"one detection for two injections", []float64{61}, []float64{60, 61.5}, 5, 205, 1, 1, 0, 0, ""},
		{"warm-up and drain left out", []float64{10}, []float64{2, 10, 204.5}, 5, 205, 1, 0, 0, 2,
			"detector against 1 injected stall: 1 hit, 0 misses, 0 false alarms (2 outside the measured window)"},
	}
	for _, c := range cases {
		m := MatchOnsets(c.detected, c.injected, c.from, c.to)
		if m.Hits != c.hits || m.Misses != c.misses || m.FalseAlarms != c.fa || m.Outside != c.outside || (c.text != "" && m.Text != c.text) {
			t.Errorf("%s: %+v", c.name, m)
		}
	}
}
