package oltp

import (
	"math"
	"testing"
	"time"
)

func TestPacerDue(t *testing.T) {
	tests := []struct {
		name string
		rate float64
		now  time.Duration
	}{
		{"slow", 10, 10 * time.Second},
		{"fast", 10000, 2 * time.Second},
		{"sub-1", 0.5, 100 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPacer(tc.rate, NewRand(5, 0))
			var got []time.Duration
			// Polling at irregular steps yields each arrival once, in order.
			for now := time.Duration(0); now <= tc.now; now += 7 * time.Millisecond {
				got = p.due(now, got)
			}
			for i := 1; i < len(got); i++ {
				if got[i] < got[i-1] {
					t.Fatalf("arrival %d at %v before %v", i, got[i], got[i-1])
				}
			}
			if len(got) > 0 && got[len(got)-1] > tc.now {
				t.Fatalf("arrival at %v released before it was due (%v)", got[len(got)-1], tc.now)
			}
			if p.peek() <= tc.now-7*time.Millisecond {
				t.Fatalf("next arrival %v was due", p.peek())
			}
			want := tc.rate * tc.now.Seconds()
			if math.Abs(float64(len(got))-want) > 4*math.Sqrt(want)+1 {
				t.Errorf("%d arrivals in %v at %g/s, want ≈%.0f", len(got), tc.now, tc.rate, want)
			}
		})
	}
}

func TestPacerGapsAreExponential(t *testing.T) {
	p := newPacer(1000, NewRand(9, 0))
	const n = 200000
	prev, sum, sumSq := time.Duration(0), 0.0, 0.0
	for i := 0; i < n; i++ {
		g := (p.peek() - prev).Seconds()
		prev = p.peek()
		p.due(p.peek(), nil)
		sum += g
		sumSq += g * g
	}
	mean := sum / n
	sd := math.Sqrt(sumSq/n - mean*mean)
	// Exponential: mean = stddev = 1/rate.
	if math.Abs(mean-0.001) > 0.00002 || math.Abs(sd-0.001) > 0.00003 {
		t.Fatalf("gap mean %.6f sd %.6f, want 0.001 both", mean, sd)
	}
}
