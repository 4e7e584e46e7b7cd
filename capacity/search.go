package capacity

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Prober runs one step at the given offered rate for the given measured
// window and returns what it measured (not yet judged: Search judges it).
type Prober func(ctx context.Context, rate float64, window time.Duration) (Step, error)

// Config bounds the search.
type Config struct {
	SLO SLO
	// Start is the first rate tried; Min and Max bound the rates tried.
	Start, Min, Max float64
	// Precision stops the bisection once the lowest missing rate is
	// within this fraction above the highest meeting one (0.1: 10 %).
	Precision float64
	// Retests is how many more times the candidate capacity is run before
	// it is believed: it must meet the target in every trial.
	Retests int
	// MaxSteps bounds the number of steps, retests included.
	MaxSteps int
	// StepMin and StepMax bound a step's measured window (StepLength).
	StepMin, StepMax time.Duration
	// Confirm is the measured window of the candidate's retests (0: a
	// step's): the full length of the run the capacity is for. A short
	// step cannot tell a rate slightly above what the server serves (its
	// queue grows too slowly to show within seconds) from one below it;
	// over the full length the queue's growth shows, so a candidate is
	// believed only once a run as long as the real one met the target.
	Confirm time.Duration
}

// Defaults of Config: 100/s first, 1/s to 1,000,000/s, 10 %, 2 retests,
// 20 steps of 3 to 20 s (the shortest at least OverloadShows).
const (
	DefaultStart     = 100
	DefaultMin       = 1
	DefaultMax       = 1e6
	DefaultPrecision = 0.10
	DefaultRetests   = 2
	DefaultMaxSteps  = 20
	DefaultStepMin   = 3 * time.Second
	DefaultStepMax   = 20 * time.Second
)

// WithDefaults fills the zero fields.
func (c Config) WithDefaults() Config {
	if c.Start <= 0 {
		c.Start = DefaultStart
	}
	if c.Min <= 0 {
		c.Min = DefaultMin
	}
	if c.Max <= 0 {
		c.Max = DefaultMax
	}
	if c.Precision <= 0 {
		c.Precision = DefaultPrecision
	}
	if c.Retests < 0 {
		c.Retests = 0
	} else if c.Retests == 0 {
		c.Retests = DefaultRetests
	}
	if c.MaxSteps <= 0 {
		c.MaxSteps = DefaultMaxSteps
	}
	if c.StepMax <= 0 {
		c.StepMax = DefaultStepMax
	}
	if c.StepMin <= 0 {
		c.StepMin = min(max(DefaultStepMin, OverloadShows(c.SLO, c.Precision)), max(c.StepMax, DefaultStepMin))
	}
	c.Start = min(max(c.Start, c.Min), c.Max)
	return c
}

// OverloadShows is how long a step must last to show an overload of
// precision against slo: at a rate (1+ε) times what the server serves, the
// queue's wait grows by about ε seconds a second, so the wait takes
// Limit/ε to reach the bound (10 s for p95 < 1s at 10 %). A shorter step
// meets the target at rates above the capacity (the queue had no time to
// show), and the search overshoots; the default shortest step is at least
// this long (a step's slo_step, when given, is kept).
func OverloadShows(slo SLO, precision float64) time.Duration {
	if precision <= 0 {
		precision = DefaultPrecision
	}
	return time.Duration(float64(slo.Limit) / precision).Round(100 * time.Millisecond)
}

// Status is how a search ended.
type Status string

// The statuses.
const (
	// Found: a bracket [Low, High] within the precision, Low met the
	// target in every trial, High missed it.
	Found Status = "found"
	// Below: the target was missed even at the lowest rate tried.
	Below Status = "above the SLO even at the lowest rate"
	// AtMax: the target was met up to the highest rate allowed.
	AtMax Status = "met at the highest rate tried"
	// Unsettled: the step budget ran out before the bracket was within
	// the precision; Low is still a rate that met the target every time.
	Unsettled Status = "unsettled"
)

// Outcome is a search's answer.
type Outcome struct {
	SLO    SLO    `json:"slo"`
	Status Status `json:"status"`
	// Capacity is the highest rate that met the target in every trial (it
	// was tried 1 + Retests times); 0 when none did.
	Capacity float64 `json:"capacity"`
	// Low and High bracket the capacity: Low = Capacity, High the lowest
	// rate that missed (0 when none did).
	Low  float64 `json:"low"`
	High float64 `json:"high,omitempty"`
	// ClientBound is set when the lowest missing rate was missed because
	// the client could not keep up: the capacity found is the client's
	// limit, the server's may be higher.
	ClientBound bool   `json:"client_bound,omitempty"`
	Steps       []Step `json:"steps"`
	// Notes say what undermines the answer (short steps, retest flips).
	Notes []string `json:"notes,omitempty"`
}

// trial is what the steps said of one rate.
type trial struct {
	meets, misses, client, stalls int
	// The full-length runs among them: the ones that decide a bracket's
	// end (a short step's verdict can be lucky, or optimistic). A stalled
	// one is neither a meet nor an overload.
	longMeets, longStalls, longFails int
}

// met is whether a rate's steps met the target by their majority: more
// meets than stalls, and no overload.
func (t *trial) met() bool { return t.misses+t.client == 0 && t.meets > t.stalls }

// missed is whether they missed it by their majority: an overload, or as
// many stalls as meets.
func (t *trial) missed() bool {
	return t.misses+t.client > 0 || t.stalls > 0 && t.stalls >= t.meets
}

func (t *trial) long() int { return t.longMeets + t.longStalls + t.longFails }

// Search finds the highest rate that meets cfg.SLO: from Start it doubles
// while the target is met (or halves while it is missed) to bracket the
// capacity, bisects the bracket (geometric midpoint) until it is within
// Precision, then runs the candidate again Retests times. A rate whose
// queue grew once is not believed to meet: a candidate that fails a retest
// becomes the bracket's top and the bisection goes on below it. So a step
// that passed by chance near the boundary cannot make the capacity. A
// stall the queue drained (Stalled) condemns no rate by itself: the rate
// is run again and judged by the majority of its steps, so one rare stall
// does not hold the capacity down either.
func Search(ctx context.Context, cfg Config, probe Prober) (Outcome, error) {
	cfg = cfg.WithDefaults()
	out := Outcome{SLO: cfg.SLO}
	tried := map[float64]*trial{}
	steps := 0
	long := false // the retests of a candidate run for cfg.Confirm
	// sticky: a full-length retest contradicted a short step's verdict, so
	// short steps are optimistic here (a queue that grows too slowly to
	// show within them): every later step runs full length too.
	sticky := false
	run := func(rate float64) (Verdict, error) {
		rate = roundRate(rate)
		tr := tried[rate]
		if tr == nil {
			tr = &trial{}
			tried[rate] = tr
		}
		win := StepLength(cfg.SLO, rate, cfg.StepMin, cfg.StepMax)
		if long || sticky {
			win = max(win, cfg.Confirm)
		}
		st, err := probe(ctx, rate, win)
		if err != nil {
			return "", fmt.Errorf("step %d at %s/s: %w", steps+1, fmtRate(rate), err)
		}
		steps++
		st.Rate = rate
		st.Retest = tr.meets+tr.misses+tr.client > 0
		Judge(cfg.SLO, &st)
		out.Steps = append(out.Steps, st)
		if long || sticky {
			switch st.Verdict {
			case Meets:
				tr.longMeets++
			case Stalled:
				tr.longStalls++
			default:
				tr.longFails++
			}
		}
		switch st.Verdict {
		case Meets:
			tr.meets++
		case ClientBound:
			tr.client++
		case Stalled:
			tr.stalls++
		default:
			tr.misses++
		}
		return st.Verdict, nil
	}
	budget := func() bool { return steps < cfg.MaxSteps }
	// settle runs a rate until its steps agree: a stalled step is run
	// again, and the rate meets the target when its meets outnumber its
	// stalls (with no overload); two stalls make it a miss. Out of steps,
	// an undecided rate counts as a miss (the safe side).
	settle := func(r float64) (bool, error) {
		r = roundRate(r)
		for {
			if _, err := run(r); err != nil {
				return false, err
			}
			t := tried[r]
			if t.met() || t.misses+t.client > 0 || t.stalls >= 2 || !budget() {
				return t.met(), nil
			}
		}
	}

	// Bracket: lo met (0: none yet), hi missed (0: none yet).
	var lo, hi float64
	r := cfg.Start
	ok, err := settle(r)
	if err != nil {
		return out, err
	}
	if ok {
		lo = r
		for budget() {
			if r >= cfg.Max {
				break
			}
			r = min(2*r, cfg.Max)
			if ok, err = settle(r); err != nil {
				return out, err
			}
			if !ok {
				hi = roundRate(r)
				break
			}
			lo = r
		}
	} else {
		hi = r
		for budget() && r > cfg.Min {
			r = max(r/2, cfg.Min)
			if ok, err = settle(r); err != nil {
				return out, err
			}
			if ok {
				lo = r
				break
			}
			hi = roundRate(r)
		}
	}
	lo, hi = roundRate(lo), roundRate(hi)

	// Bisect, then decide both ends of the bracket on full-length runs
	// (Retests of them; a short step's verdict can be lucky, or
	// optimistic): the candidate (lo) is believed when every one met the
	// target, else it becomes the top and the bisection goes on below. The
	// top (hi) is run again too: its miss may have been unlucky; when every
	// full-length run met the target there, it becomes the candidate and
	// the search goes on above. So a lucky pass cannot make the capacity,
	// and one unlucky miss cannot hold it down.
	need := cfg.Retests/2 + 1 // of at most Retests+1 full-length runs (Retests even)
	metBy := func(r float64) bool {
		t := tried[r]
		if t == nil {
			return false
		}
		if cfg.Retests == 0 {
			return t.met()
		}
		// Retests full-length runs met it, more than stalled, and none
		// overloaded.
		return t.longMeets >= cfg.Retests && t.longMeets > t.longStalls && t.longFails == 0
	}
	missedBy := func(r float64) bool {
		t := tried[r]
		if t == nil {
			return false
		}
		if cfg.Retests == 0 {
			return t.missed()
		}
		return t.longFails+t.longStalls >= need
	}
	// decide runs rate (full length) until the majority of its trials is
	// known; ok is false when the step budget ran out first.
	decide := func(r float64) (met, ok bool, err error) {
		for !metBy(r) && !missedBy(r) && (cfg.Retests == 0 || tried[r].long() < cfg.Retests+1) {
			if !budget() {
				return false, false, nil
			}
			long = true
			_, err := run(r)
			long = false
			if err != nil {
				return false, false, err
			}
		}
		return metBy(r), true, nil
	}
	for budget() {
		for lo > 0 && hi > 0 && hi/lo > 1+cfg.Precision && budget() {
			m := roundRate(math.Sqrt(lo * hi))
			if m <= lo || m >= hi {
				break
			}
			if ok, err = settle(m); err != nil {
				return out, err
			}
			if ok {
				lo = m
			} else {
				hi = m
			}
		}
		if lo == 0 {
			break
		}
		met, ok, err := decide(lo)
		if err != nil {
			return out, err
		}
		if !ok {
			break
		}
		if !met {
			t := tried[lo]
			out.Notes = append(out.Notes, fmt.Sprintf("%s/s met the target, then not in its full-length runs (%d met, %d stalled, %d overloaded): not believed",
				fmtRate(lo), t.longMeets, t.longStalls, t.longFails))
			if t.longFails > 0 && cfg.Confirm > StepLength(cfg.SLO, lo, cfg.StepMin, cfg.StepMax) && !sticky {
				sticky = true
				out.Notes = append(out.Notes, fmt.Sprintf("from %s/s on every step ran for the full length (%s): the short steps had been too optimistic", fmtRate(lo), cfg.Confirm))
			}
			hi = lo
			lo = highestMet(tried, hi)
			if lo == 0 {
				// Nothing below met the target: go down from hi.
				r := hi
				for budget() && r > cfg.Min {
					r = roundRate(max(r/2, cfg.Min))
					if tried[r] != nil && tried[r].missed() {
						continue
					}
					if ok, err = settle(r); err != nil {
						return out, err
					}
					if ok {
						lo = r
						break
					}
				}
				if lo == 0 {
					break
				}
			}
			continue
		}
		if hi == 0 {
			break // met up to Max
		}
		met, ok, err = decide(hi)
		if err != nil {
			return out, err
		}
		if !ok || !met {
			break // the bracket holds (or the budget ran out)
		}
		out.Notes = append(out.Notes, fmt.Sprintf("%s/s missed the target, then met it in its full-length runs: believed", fmtRate(hi)))
		lo = hi
		hi = lowestMissed(tried, lo)
		if hi == 0 {
			r := lo
			for budget() && r < cfg.Max {
				r = roundRate(min(2*r, cfg.Max))
				if ok, err = settle(r); err != nil {
					return out, err
				}
				if !ok {
					hi = r
					break
				}
				lo = r
			}
			if hi == 0 {
				break
			}
		}
	}
	if lo > 0 && !metBy(lo) {
		out.Notes = append(out.Notes, fmt.Sprintf("the step budget (%d) ran out before both ends of the bracket were retested", cfg.MaxSteps))
	}

	out.Low, out.High = lo, hi
	out.Capacity = lo
	switch {
	case lo == 0:
		out.Status, out.Capacity = Below, 0
	case hi == 0 && metBy(lo):
		out.Status = AtMax
	case hi == 0:
		out.Status = Unsettled
	case hi/lo > 1+cfg.Precision+1e-9 || !metBy(lo):
		out.Status = Unsettled
	default:
		out.Status = Found
	}
	if hi > 0 {
		if t := tried[hi]; t != nil && t.client > 0 && t.misses == 0 {
			out.ClientBound = true
		}
	}
	stalled := 0
	for _, st := range out.Steps {
		if st.Verdict == Stalled {
			stalled++
		}
	}
	if stalled > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d of %d steps stalled (the target missed within a few seconds, the queue drained after): each such rate was run again and judged by the majority of its steps",
			stalled, len(out.Steps)))
	}
	for _, st := range out.Steps {
		if st.Verdict != Misses && st.Events < cfg.SLO.MinEvents() {
			out.Notes = append(out.Notes, fmt.Sprintf("the step at %s/s served %d events, fewer than the %d that put 10 past %s: its percentile is coarse",
				fmtRate(st.Rate), st.Events, cfg.SLO.MinEvents(), fmtPct(cfg.SLO.Percentile)))
			break
		}
	}
	return out, nil
}

// highestMet is the highest rate below top whose trials met the target
// by their majority, 0 when none did.
func highestMet(tried map[float64]*trial, top float64) float64 {
	best := 0.0
	for r, t := range tried {
		if r < top && t.met() && r > best {
			best = r
		}
	}
	return best
}

// lowestMissed is the lowest rate above bottom whose trials missed the
// target by their majority, 0 when none did.
func lowestMissed(tried map[float64]*trial, bottom float64) float64 {
	best := 0.0
	for r, t := range tried {
		if r > bottom && t.missed() && (best == 0 || r < best) {
			best = r
		}
	}
	return best
}

// roundRate keeps 3 significant digits (rates are offered at that
// resolution; it also makes equal rates equal keys).
func roundRate(r float64) float64 {
	if r <= 0 {
		return 0
	}
	e := math.Pow(10, math.Floor(math.Log10(r))-2)
	return math.Round(r/e) * e
}

func fmtRate(r float64) string {
	if r >= 100 {
		return fmt.Sprintf("%.0f", r)
	}
	return trimFloat(r)
}

// FmtRate prints a rate as the reports do.
func FmtRate(r float64) string { return fmtRate(r) }

// Estimate guesses how many steps a search takes and how long they last,
// for the plan: the bracket from Start to a capacity 100x away (7 steps)
// and 4 bisections, each step StepMin plus 2 s (its warm-up and
// connections), then the retests, each max(StepMin, Confirm) plus 2 s. It
// is a guess: the search stops when it knows.
func (c Config) Estimate() (steps int, d time.Duration) {
	c = c.WithDefaults()
	short := min(7+4, c.MaxSteps)
	retests := min(c.Retests, c.MaxSteps-short)
	d = time.Duration(short)*(c.StepMin+2*time.Second) + time.Duration(retests)*(max(c.StepMin, c.Confirm)+2*time.Second)
	return short + retests, d
}
