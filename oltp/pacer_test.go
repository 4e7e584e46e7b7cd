package oltp

import (
	"math"
	"slices"
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

// TestPacerWakesOnTime measures, side by side in one run, how late an
// idle consumer receives each arrival from the pacer when it sleeps in
// nanosleep on its own thread (what runs) and on the Go runtime's timers
// (what ran before): the client delay every open-loop event a waiting
// worker takes carries. It prints the medians and their ratio; it checks
// only what does not depend on the machine's speed: every arrival is
// offered once, in order, never before it is due, and the pacer stops.
func TestPacerWakesOnTime(t *testing.T) {
	for _, c := range []struct {
		name  string
		sleep sleeper
	}{{"nanosleep", preciseSleep}, {"go timer", timerSleep}} {
		lates := pacerLateness(t, c.name, c.sleep)
		t.Logf("%s: %d arrivals, received late by p50 %v, p99 %v", c.name, len(lates), lates[len(lates)/2], lates[len(lates)*99/100])
	}
}

// pacerLateness feeds a pacer at 1,000/s for 1 s with the sleeper to an
// idle consumer and returns how late each arrival was received, sorted;
// it fails on an early, out-of-order or missing arrival.
func pacerLateness(t testing.TB, name string, sleep sleeper) []time.Duration {
	t.Helper()
	const rate = 1000
	const window = time.Second
	sh := &shared{stopCh: make(chan struct{}), fatalCh: make(chan struct{})}
	ch := make(chan arrival, backlogSize)
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		feed(sh, newPacer(rate, NewRand(9, -1)), start, ch, sleep)
	}()
	var lates []time.Duration
	var prev time.Time
	for time.Since(start) < window {
		select {
		case a := <-ch:
			got := time.Since(a.at)
			if got < 0 {
				t.Fatalf("%s: an arrival due at %v was offered %v early", name, a.at.Sub(start), -got)
			}
			if a.at.Before(prev) {
				t.Fatalf("%s: arrivals out of order", name)
			}
			prev = a.at
			lates = append(lates, got)
		case <-time.After(50 * time.Millisecond):
		}
	}
	sh.requestStop()
	<-done
	if len(lates) < rate/4 {
		t.Fatalf("%s: %d arrivals in %v at %d/s", name, len(lates), window, rate)
	}
	slices.Sort(lates)
	return lates
}

// BenchmarkPacerLateness measures the pacer's lateness with nanosleep(2)
// and with the Go runtime's timers side by side in one run and reports
// the ratio of their medians (docs/capacity.md: x7.2 and x6.3 under CI
// load): go test -run '^$' -bench PacerLateness ./oltp
func BenchmarkPacerLateness(b *testing.B) {
	var precise, timers []time.Duration
	for range b.N {
		p := pacerLateness(b, "nanosleep", preciseSleep)
		g := pacerLateness(b, "go timer", timerSleep)
		precise = append(precise, p[len(p)/2])
		timers = append(timers, g[len(g)/2])
	}
	slices.Sort(precise)
	slices.Sort(timers)
	mp, mt := precise[len(precise)/2], timers[len(timers)/2]
	b.ReportMetric(float64(mp.Microseconds()), "nanosleep-p50-µs")
	b.ReportMetric(float64(mt.Microseconds()), "gotimer-p50-µs")
	if mp > 0 {
		b.ReportMetric(float64(mt)/float64(mp), "timer/nanosleep")
	}
}
