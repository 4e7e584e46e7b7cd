package capacity

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestParseSLO(t *testing.T) {
	cases := []struct {
		in      string
		pct     float64
		limit   time.Duration
		errRate float64
		hasErr  bool
		canon   string
		bad     string // substring of the error
	}{
		{in: "p99 < 5ms", pct: 99, limit: 5 * time.Millisecond, canon: "p99 < 5ms"},
		{in: "p99.9<20ms", pct: 99.9, limit: 20 * time.Millisecond, canon: "p99.9 < 20ms"},
		{in: "p50 < 1.5 ms, errors < 0.1%", pct: 50, limit: 1500 * time.Microsecond, errRate: 0.001, hasErr: true, canon: "p50 < 1.5ms, errors < 0.1%"},
		{in: "p95 < 1s and errors < 1%", pct: 95, limit: time.Second, errRate: 0.01, hasErr: true, canon: "p95 < 1s, errors < 1%"},
		{in: "p100 < 5ms", bad: "want a percentile above 0 and below 100"},
		{in: "p99 > 5ms", bad: "has no \"<\""},
		{in: "p99 < 5", bad: "latency bound \"5\""},
		{in: "p99 < -5ms", bad: "positive duration"},
		{in: "errors < 1%", bad: "no latency clause"},
		{in: "p99 < 5ms, errors < 0.1", bad: "errors bound"},
		{in: "p99 < 5ms, p50 < 1ms", bad: "two latency clauses"},
		{in: "avg < 5ms", bad: "want a percentile"},
		{in: "", bad: "empty clause"},
	}
	for _, c := range cases {
		s, err := ParseSLO(c.in)
		if c.bad != "" {
			if err == nil || !strings.Contains(err.Error(), c.bad) {
				t.Errorf("ParseSLO(%q) = %v, want an error with %q", c.in, err, c.bad)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSLO(%q): %v", c.in, err)
			continue
		}
		if s.Percentile != c.pct || s.Limit != c.limit || s.HasErrors != c.hasErr || math.Abs(s.ErrorRate-c.errRate) > 1e-12 {
			t.Errorf("ParseSLO(%q) = %+v", c.in, s)
		}
		if s.String() != c.canon {
			t.Errorf("ParseSLO(%q).String() = %q, want %q", c.in, s.String(), c.canon)
		}
	}
}

func TestAllowed(t *testing.T) {
	p99 := SLO{Percentile: 99}
	for _, c := range []struct{ n, want int64 }{{0, 0}, {1, 0}, {99, 0}, {100, 0}, {101, 1}, {1000, 9}, {1001, 10}} {
		if got := p99.Allowed(c.n); got != c.want {
			t.Errorf("p99 Allowed(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	if got := (SLO{Percentile: 50}).Allowed(10); got != 4 {
		t.Errorf("p50 Allowed(10) = %d, want 4", got)
	}
	if p99.MinEvents() != 1000 || (SLO{Percentile: 99.9}).MinEvents() != 10000 {
		t.Errorf("MinEvents: %d, %d", p99.MinEvents(), (SLO{Percentile: 99.9}).MinEvents())
	}
}

func TestJudgeCountsEveryArrival(t *testing.T) {
	slo, _ := ParseSLO("p99 < 50ms, errors < 1%")
	cases := []struct {
		name string
		s    Step
		want Verdict
		why  string
	}{
		{"served well", Step{Events: 1000, Over: 9}, Meets, "9 of 1000"},
		{"one too many", Step{Events: 1000, Over: 10}, Misses, "10 of 1000"},
		{"backlog old", Step{Events: 990, Over: 5, Backlog: 10, BacklogOver: 6}, Misses, "10 still queued"},
		{"backlog young", Step{Events: 990, Over: 5, Backlog: 10, BacklogOver: 0}, Meets, ""},
		{"dropped", Step{Events: 995, Over: 0, Dropped: 15}, Misses, "15 dropped"},
		{"errors", Step{Events: 1000, Errors: 20}, Misses, "errors"},
		{"nothing done", Step{Backlog: 5}, Misses, "no event completed"},
		{"client", Step{Events: 1000, Over: 30, ClientOver: 25}, ClientBound, "the client could not keep up"},
		{"client not enough", Step{Events: 1000, Over: 30, ClientOver: 5}, Misses, ""},
	}
	for _, c := range cases {
		s := c.s
		Judge(slo, &s)
		if s.Verdict != c.want || !strings.Contains(s.Why, c.why) {
			t.Errorf("%s: %s (%s), want %s with %q", c.name, s.Verdict, s.Why, c.want, c.why)
		}
	}
}

func TestStepLength(t *testing.T) {
	slo := SLO{Percentile: 99}
	for _, c := range []struct {
		rate float64
		want time.Duration
	}{{10000, 3 * time.Second}, {200, 5 * time.Second}, {10, 20 * time.Second}, {0, 20 * time.Second}} {
		if got := StepLength(slo, c.rate, 3*time.Second, 20*time.Second); got != c.want {
			t.Errorf("StepLength(%v) = %v, want %v", c.rate, got, c.want)
		}
	}
}

// knee is a fake server that meets the target below cap and misses above
// it, with no noise.
func knee(capRate float64) Prober {
	return func(_ context.Context, rate float64, win time.Duration) (Step, error) {
		n := int64(rate * win.Seconds())
		s := Step{Seconds: win.Seconds(), Events: n, Achieved: rate}
		if rate >= capRate {
			s.Over = n / 10
		}
		return s, nil
	}
}

func TestSearchFindsTheKnee(t *testing.T) {
	slo, _ := ParseSLO("p99 < 50ms")
	for _, capRate := range []float64{2400, 12000, 37, 150} {
		out, err := Search(context.Background(), Config{SLO: slo}, knee(capRate))
		if err != nil {
			t.Fatal(err)
		}
		if out.Status != Found {
			t.Fatalf("cap %v: status %s, steps %d, notes %v", capRate, out.Status, len(out.Steps), out.Notes)
		}
		if !(out.Capacity < capRate && out.High >= capRate && out.High/out.Low <= 1+DefaultPrecision+1e-9) {
			t.Errorf("cap %v: capacity %v, bracket [%v, %v]", capRate, out.Capacity, out.Low, out.High)
		}
		trials := 0
		for _, s := range out.Steps {
			if s.Rate == out.Capacity {
				trials++
				if s.Verdict != Meets {
					t.Errorf("cap %v: the capacity missed in a step", capRate)
				}
			}
		}
		if trials != 1+DefaultRetests {
			t.Errorf("cap %v: capacity tried %d times, want %d", capRate, trials, 1+DefaultRetests)
		}
		if len(out.Steps) > DefaultMaxSteps {
			t.Errorf("cap %v: %d steps", capRate, len(out.Steps))
		}
	}
}

func TestSearchBelowAndAtMax(t *testing.T) {
	slo, _ := ParseSLO("p99 < 5ms")
	out, err := Search(context.Background(), Config{SLO: slo, Min: 10}, knee(5))
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != Below || out.Capacity != 0 || out.High != 10 {
		t.Errorf("below: %+v", out)
	}
	if last := out.Steps[len(out.Steps)-1]; last.Rate != 10 {
		t.Errorf("below: the last step was at %v, not the lowest rate 10", last.Rate)
	}
	out, err = Search(context.Background(), Config{SLO: slo, Max: 5000}, knee(1e9))
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != AtMax || out.Capacity != 5000 || out.High != 0 {
		t.Errorf("at max: %+v", out)
	}
}

// noisy is a fake server whose steps near the knee pass or fail by chance:
// below 0.9*cap they always pass, in [0.9*cap, cap) with p = 0.9, above
// cap with p = pAbove (a lucky step), never above 1.3*cap.
func noisy(capRate, pAbove float64, rng *rand.Rand) Prober {
	return func(_ context.Context, rate float64, win time.Duration) (Step, error) {
		n := int64(rate * win.Seconds())
		s := Step{Seconds: win.Seconds(), Events: n}
		p := 1.0
		switch {
		case rate >= 1.3*capRate:
			p = 0
		case rate >= capRate:
			p = pAbove
		case rate >= 0.9*capRate:
			p = 0.9
		}
		if rng.Float64() >= p {
			s.Over = n / 20
		}
		return s, nil
	}
}

// The retests keep a lucky step above the knee from becoming the capacity:
// over the same 300 seeded searches, the share of answers above the true
// knee with retests (the majority of full-length runs decides) is at most
// half the share without.
func TestSearchRetestsResistLuckySteps(t *testing.T) {
	slo, _ := ParseSLO("p99 < 50ms")
	const capRate = 2400.0
	above := func(retests int) (int, []float64) {
		n := 0
		var caps []float64
		for seed := range 300 {
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			out, err := Search(context.Background(), Config{SLO: slo, Retests: retests, MaxSteps: 30}, noisy(capRate, 0.4, rng))
			if err != nil {
				t.Fatal(err)
			}
			if out.Capacity > capRate {
				n++
			}
			caps = append(caps, out.Capacity)
		}
		return n, caps
	}
	without, _ := above(-1) // -1: no retest
	with, caps := above(2)
	t.Logf("answers above the knee: %d/300 without retests, %d/300 with 2", without, with)
	if without < 20 {
		t.Fatalf("the fake is not noisy enough to test anything: %d/300 above without retests", without)
	}
	if with*2 > without {
		t.Errorf("retests: %d/300 above the knee, without: %d/300", with, without)
	}
	sort.Float64s(caps)
	if med := caps[len(caps)/2]; med < 0.75*capRate {
		t.Errorf("with retests the median capacity %v is far below the knee %v: too cautious", med, capRate)
	}
}

func TestSearchClientBound(t *testing.T) {
	slo, _ := ParseSLO("p99 < 50ms")
	probe := func(_ context.Context, rate float64, win time.Duration) (Step, error) {
		n := int64(rate * win.Seconds())
		s := Step{Seconds: win.Seconds(), Events: n}
		if rate >= 3000 { // the client falls behind; the server would not
			s.Over, s.ClientOver = n/10, n/10
		}
		return s, nil
	}
	out, err := Search(context.Background(), Config{SLO: slo}, probe)
	if err != nil {
		t.Fatal(err)
	}
	if !out.ClientBound || out.Status != Found || out.Capacity >= 3000 {
		t.Errorf("client-bound: %+v", out)
	}
}

func TestSearchProbeErrorStops(t *testing.T) {
	slo, _ := ParseSLO("p99 < 50ms")
	calls := 0
	_, err := Search(context.Background(), Config{SLO: slo}, func(context.Context, float64, time.Duration) (Step, error) {
		calls++
		if calls == 3 {
			return Step{}, context.Canceled
		}
		return Step{Events: 1000}, nil
	})
	if err == nil || !strings.Contains(err.Error(), "step 3 at 400/s") {
		t.Errorf("err = %v", err)
	}
}

// The retests of the bracket's ends run for the confirmation's length; the
// other steps for their own.
func TestSearchRetestsRunFullLength(t *testing.T) {
	slo, _ := ParseSLO("p99 < 50ms")
	wins := map[float64][]time.Duration{}
	k := knee(2400)
	out, err := Search(context.Background(), Config{SLO: slo, Confirm: 30 * time.Second}, func(ctx context.Context, rate float64, win time.Duration) (Step, error) {
		wins[rate] = append(wins[rate], win)
		return k(ctx, rate, win)
	})
	if err != nil {
		t.Fatal(err)
	}
	w := wins[out.Capacity]
	if len(w) != 3 || w[0] != 3*time.Second || w[1] != 30*time.Second || w[2] != 30*time.Second {
		t.Errorf("windows at the capacity %v: %v", out.Capacity, w)
	}
	for r, ws := range wins {
		for _, d := range ws {
			if r != out.Capacity && r != out.High && d == 30*time.Second {
				t.Errorf("a full-length step at %v, neither the candidate nor the bracket's top", r)
			}
		}
	}
	if w := wins[out.High]; len(w) != 3 || w[1] != 30*time.Second {
		t.Errorf("the top %v ran %v: want its step, then full-length runs until it missed in most", out.High, w)
	}
}

// A server whose queue grows too slowly to show in a short step: short
// steps meet the target up to 1.3x its capacity, full-length runs only
// below it. The search's answer is below the capacity, and once a
// full-length retest contradicted a short step every later step runs
// full length.
func TestSearchShortStepsOptimistic(t *testing.T) {
	slo, _ := ParseSLO("p99 < 50ms")
	const capRate, confirm = 1000.0, 30 * time.Second
	long := 0
	out, err := Search(context.Background(), Config{SLO: slo, Confirm: confirm, MaxSteps: 24}, func(_ context.Context, rate float64, win time.Duration) (Step, error) {
		s := Step{Events: int64(rate * win.Seconds())}
		limit := 1.3 * capRate
		if win >= confirm {
			limit = capRate
			long++
		}
		if rate >= limit {
			s.Over = s.Events / 10
		}
		return s, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != Found || !(out.Capacity < capRate) || !(out.Capacity > capRate/(1+DefaultPrecision)/(1+DefaultPrecision)) {
		t.Errorf("capacity %v (%s), bracket [%v, %v], notes %v", out.Capacity, out.Status, out.Low, out.High, out.Notes)
	}
	if !strings.Contains(strings.Join(out.Notes, " "), "every step ran for the full length") {
		t.Errorf("notes %v", out.Notes)
	}
	t.Logf("%d steps, %d of them full length: capacity %v", len(out.Steps), long, out.Capacity)
}

// One unlucky short step cannot hold the capacity down: a server that
// meets the target below 2,400/s but whose short steps miss it by chance
// between 2,000/s and 2,400/s still gets a capacity within the precision
// of 2,400/s, since the bracket's top is run again at full length.
func TestSearchUnluckyTopIsRetested(t *testing.T) {
	slo, _ := ParseSLO("p99 < 50ms")
	const capRate, confirm = 2400.0, 20 * time.Second
	out, err := Search(context.Background(), Config{SLO: slo, Confirm: confirm, MaxSteps: 30}, func(_ context.Context, rate float64, win time.Duration) (Step, error) {
		s := Step{Events: int64(rate * win.Seconds())}
		if rate >= capRate || win < confirm && rate >= 2000 {
			s.Over = s.Events / 10
		}
		return s, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != Found || out.Capacity < capRate/(1+DefaultPrecision) || out.Capacity >= capRate {
		t.Errorf("capacity %v (%s), bracket [%v, %v], notes %v", out.Capacity, out.Status, out.Low, out.High, out.Notes)
	}
	if !strings.Contains(strings.Join(out.Notes, " "), "then met it in its full-length runs: believed") {
		t.Errorf("notes %v", out.Notes)
	}
}

// The default shortest step lets an overload of the precision show: the
// queue's wait grows by about precision seconds a second, so a step must
// last the bound over the precision (within 3 s and the longest step); a
// step length the manifest gives is kept.
func TestDefaultStepShowsOverload(t *testing.T) {
	for _, c := range []struct {
		limit     time.Duration
		precision float64
		step      time.Duration
		want      time.Duration
	}{
		{time.Second, 0, 0, 10 * time.Second},              // p95 < 1s at 10 %
		{time.Second, 0.2, 0, 5 * time.Second},             // at 20 %
		{50 * time.Millisecond, 0, 0, 3 * time.Second},     // 0.5 s: the 3 s floor
		{5 * time.Second, 0, 0, DefaultStepMax},            // 50 s: the longest step
		{time.Second, 0, 2 * time.Second, 2 * time.Second}, // slo_step given
	} {
		cfg := Config{SLO: SLO{Percentile: 95, Limit: c.limit}, Precision: c.precision, StepMin: c.step}.WithDefaults()
		if cfg.StepMin != c.want {
			t.Errorf("limit %v, precision %v, step %v: shortest step %v, want %v", c.limit, c.precision, c.step, cfg.StepMin, c.want)
		}
	}
}

// stally is a fake server with a knee at capRate whose windows stall now
// and then at any rate: a stall's slow events fall within one second and
// the queue drains after it (a drained miss), while above the knee the
// queue grows to the window's end (an overload: old arrivals queued).
// pStall is the chance that a window holds a stall.
func stally(capRate, pStall float64, rng *rand.Rand) Prober {
	return func(_ context.Context, rate float64, win time.Duration) (Step, error) {
		n := int64(rate * win.Seconds())
		s := Step{Seconds: win.Seconds(), Events: n, Achieved: rate}
		if rate >= capRate {
			s.Over, s.Backlog, s.BacklogOver, s.SlowSeconds = n/5, n/10, n/20, int(win.Seconds())
			return s, nil
		}
		if rng.Float64() < pStall {
			s.Over, s.SlowSeconds = n/50, 1 // 2 %: past p99's 1 %
		}
		return s, nil
	}
}

// A stall the queue drains is not an overload: one stalled step is run
// again, and with one window in ten stalling the capacity lands within
// twice the precision of the knee in at least 190 of 200 searches, where
// taking each stall for an overload (the search before stalls were told
// apart: SlowSeconds unknown) falls short at least five times as often
// (measured: 1 vs 46).
func TestSearchStallsAreNotOverload(t *testing.T) {
	slo, _ := ParseSLO("p99 < 50ms")
	const capRate, confirm = 700.0, 10 * time.Second
	var near, nearBlind int
	var caps, blind []float64
	for seed := range 200 {
		cfg := Config{SLO: slo, Start: 100, Confirm: confirm}
		out, err := Search(context.Background(), cfg, stally(capRate, 0.1, rand.New(rand.NewPCG(uint64(seed), 11))))
		if err != nil {
			t.Fatal(err)
		}
		if out.Capacity >= capRate {
			t.Fatalf("seed %d: capacity %v at or above the knee %v: %+v", seed, out.Capacity, capRate, out.Notes)
		}
		if out.Capacity >= capRate/(1+DefaultPrecision)/(1+DefaultPrecision) {
			near++
		}
		caps = append(caps, out.Capacity)
		// The same fake with the stalls' seconds hidden: every stall a miss.
		st := stally(capRate, 0.1, rand.New(rand.NewPCG(uint64(seed), 11)))
		out, err = Search(context.Background(), cfg, func(ctx context.Context, rate float64, win time.Duration) (Step, error) {
			s, err := st(ctx, rate, win)
			s.SlowSeconds = 0
			return s, err
		})
		if err != nil {
			t.Fatal(err)
		}
		if out.Capacity >= capRate/(1+DefaultPrecision)/(1+DefaultPrecision) {
			nearBlind++
		}
		blind = append(blind, out.Capacity)
	}
	sort.Float64s(caps)
	sort.Float64s(blind)
	t.Logf("windows stalling 10%% of the time, knee %v/s: median capacity %v/s (%d/200 within 21%% of the knee); stalls taken for overload: %v/s (%d/200)",
		capRate, caps[100], near, blind[100], nearBlind)
	if near < 190 {
		t.Errorf("only %d of 200 searches within 21%% of the knee", near)
	}
	if fails, blindFails := 200-near, 200-nearBlind; blindFails < 20 || blindFails < 5*max(fails, 1) {
		t.Errorf("the stall-blind search fell short %d times, this one %d: the fake tests nothing", blindFails, fails)
	}
}

// A candidate that fails its full-length retest becomes the bracket's top
// and the search bisects below it: the answer is the highest rate that met
// at full length within the precision, not half the candidate.
func TestSearchBisectsAfterARetestFlip(t *testing.T) {
	slo, _ := ParseSLO("p99 < 50ms")
	const confirm = 10 * time.Second
	// Short steps meet up to 1,000/s; full-length runs only below 850/s.
	out, err := Search(context.Background(), Config{SLO: slo, Start: 125, Confirm: confirm, MaxSteps: 30}, func(_ context.Context, rate float64, win time.Duration) (Step, error) {
		n := int64(rate * win.Seconds())
		s := Step{Seconds: win.Seconds(), Events: n}
		if rate >= 1000 || win >= confirm && rate >= 850 {
			s.Over, s.Backlog, s.BacklogOver, s.SlowSeconds = n/5, n/10, n/20, int(win.Seconds())
		}
		return s, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != Found || out.Capacity >= 850 || out.Capacity < 850/(1+DefaultPrecision)/(1+DefaultPrecision) {
		t.Errorf("capacity %v (%s), bracket [%v, %v], notes %v", out.Capacity, out.Status, out.Low, out.High, out.Notes)
	}
}

func TestJudgeTellsAStallFromAnOverload(t *testing.T) {
	slo, _ := ParseSLO("p99 < 50ms")
	for _, c := range []struct {
		name string
		s    Step
		want Verdict
	}{
		{"one slow second, drained", Step{Seconds: 10, Events: 3000, Over: 50, SlowSeconds: 1, Backlog: 1}, Stalled},
		{"two of ten", Step{Seconds: 10, Events: 3000, Over: 50, SlowSeconds: 2}, Stalled},
		{"three of ten", Step{Seconds: 10, Events: 3000, Over: 50, SlowSeconds: 3}, Misses},
		{"five of twenty", Step{Seconds: 20, Events: 6000, Over: 70, SlowSeconds: 5}, Stalled},
		{"old arrivals queued", Step{Seconds: 10, Events: 3000, Over: 50, SlowSeconds: 1, Backlog: 40, BacklogOver: 5}, Misses},
		{"dropped", Step{Seconds: 10, Events: 3000, Over: 50, SlowSeconds: 1, Dropped: 3}, Misses},
		{"seconds unknown", Step{Seconds: 10, Events: 3000, Over: 50}, Misses},
		{"3 s, two slow", Step{Seconds: 3, Events: 1000, Over: 20, SlowSeconds: 2}, Stalled},
		{"3 s, three slow", Step{Seconds: 3, Events: 1000, Over: 20, SlowSeconds: 3}, Misses},
		{"met", Step{Seconds: 10, Events: 3000, Over: 5, SlowSeconds: 1}, Meets},
	} {
		s := c.s
		Judge(slo, &s)
		if s.Verdict != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, s.Verdict, s.Why, c.want)
		}
	}
}
