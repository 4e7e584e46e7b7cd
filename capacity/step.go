package capacity

import (
	"fmt"
	"time"
)

// Verdict is what one step (or the confirmation run) says of the target.
type Verdict string

// The verdicts.
const (
	// Meets: fewer events than the percentile allows exceeded the limit
	// (and the errors stayed within their bound).
	Meets Verdict = "meets"
	// Misses: the server did not keep the target at this rate.
	Misses Verdict = "misses"
	// ClientBound: the target was missed, but without the events the
	// client alone held past the limit (arrivals it dispatched late while
	// a worker was idle) it would have been met: the client could not keep
	// up, and the miss is not the server's.
	ClientBound Verdict = "client-bound"
	// Stalled: the target was missed, but by a stall the queue drained,
	// not by an overload that grows it: the events past the limit
	// completed within a few seconds of the window (SlowSeconds, at most
	// a quarter of it, or two), and when the window ended no arrival older than
	// the limit was still queued and none had been dropped. Above its
	// capacity a server's queue grows until the window ends; a stall (an
	// fsync held up by another process's writes, a checkpoint) leaves it
	// behind. One stalled step does not condemn a rate: Search runs it
	// again and goes by the majority.
	Stalled Verdict = "stalled"
)

// Step is one fixed-rate run of the search and how it was judged. Every
// arrival of the measured window counts: those served (Events, Over), those
// still queued when the window ended (Backlog: each as old as it was then)
// and those the full queue refused (Dropped: as if never served).
type Step struct {
	// Rate is the offered rate (arrivals per second).
	Rate    float64 `json:"rate"`
	Seconds float64 `json:"seconds"`
	// Achieved is the rate of completed events.
	Achieved float64 `json:"achieved"`
	Events   int64   `json:"events"`
	Errors   int64   `json:"errors,omitempty"`
	// Over is the completed events whose latency (from their intended
	// start) reached the limit.
	Over int64 `json:"over"`
	// Backlog is the arrivals not started when the window ended;
	// BacklogOver those of them already older than the limit.
	Backlog     int64 `json:"backlog,omitempty"`
	BacklogOver int64 `json:"backlog_over,omitempty"`
	// Dropped is the arrivals the full queue refused.
	Dropped int64 `json:"dropped,omitempty"`
	// Late is the events that started more than 1 ms after their arrival.
	Late int64 `json:"late,omitempty"`
	// ClientOver is the events the client alone held past the limit: the
	// time from their arrival to a waiting worker taking them (the
	// pacer's and the scheduler's delay, no server in it) reached it.
	ClientOver int64 `json:"client_over,omitempty"`
	// Achieved latency of the completed events, ms.
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
	// Pct is the latency at the target's percentile, ms.
	Pct float64 `json:"pct_ms"`
	// The client's own scheduler delay and CPU over the step, % of one
	// CPU (evidence beside ClientOver; NaN-free, 0 when unknown).
	ClientRunDelayPct float64 `json:"client_run_delay_pct,omitempty"`
	ClientCPUPct      float64 `json:"client_cpu_pct,omitempty"`
	// SlowSeconds is how many of the window's seconds had an event
	// complete at or past the limit (0 when the step's seconds are not
	// known: a miss is then taken for an overload).
	SlowSeconds int `json:"slow_seconds,omitempty"`
	// Retest tells that the step tried a rate again.
	Retest  bool    `json:"retest,omitempty"`
	Verdict Verdict `json:"verdict"`
	Why     string  `json:"why"`
}

// Offered is every arrival of the window: served, queued or dropped.
func (s *Step) Offered() int64 { return s.Events + s.Backlog + s.Dropped }

// Judge decides the step against the target and says why in one line.
func Judge(slo SLO, s *Step) {
	n := s.Offered()
	over := s.Over + s.BacklogOver + s.Dropped
	allowed := slo.Allowed(n)
	limit := fmtDuration(slo.Limit)
	pct := fmtPct(slo.Percentile)
	switch {
	case n == 0:
		s.Verdict, s.Why = Misses, "no event was offered or served"
		return
	case s.Events == 0:
		s.Verdict, s.Why = Misses, fmt.Sprintf("no event completed (%d queued, %d dropped)", s.Backlog, s.Dropped)
		return
	}
	if slo.HasErrors {
		rate := float64(s.Errors) / float64(s.Events+s.Errors)
		if rate >= slo.ErrorRate {
			s.Verdict = Misses
			s.Why = fmt.Sprintf("errors %.3g%% of events, not below %.3g%%", 100*rate, 100*slo.ErrorRate)
			return
		}
	}
	tail := ""
	if s.Backlog > 0 || s.Dropped > 0 {
		tail = fmt.Sprintf("; %d still queued at the end (%d of them older than %s), %d dropped", s.Backlog, s.BacklogOver, limit, s.Dropped)
	}
	switch {
	case over <= allowed:
		s.Verdict = Meets
		s.Why = fmt.Sprintf("%s %.3g ms: %d of %d arrivals at or past %s (fewer than %d allowed)%s", pct, s.Pct, over, n, limit, allowed+1, tail)
	case over-s.ClientOver <= allowed:
		s.Verdict = ClientBound
		s.Why = fmt.Sprintf("%d of %d arrivals at or past %s, but the client alone held %d of them that long before a worker took them: "+
			"the client could not keep up (its run delay %.0f%%, CPU %.0f%% of one CPU)", over, n, limit, s.ClientOver, s.ClientRunDelayPct, s.ClientCPUPct)
	case s.drained():
		s.Verdict = Stalled
		s.Why = fmt.Sprintf("%s %.3g ms: %d of %d arrivals at or past %s (%d allowed), all within %d of the window's %.0f s, and the queue drained (%s): a stall, not an overload",
			pct, s.Pct, over, n, limit, allowed, s.SlowSeconds, s.Seconds, drainedTail(s, limit))
	default:
		s.Verdict = Misses
		s.Why = fmt.Sprintf("%s %.3g ms: %d of %d arrivals at or past %s (%d allowed)%s", pct, s.Pct, over, n, limit, allowed, tail)
	}
}

// drained tells a stall the queue drained from an overload: the slow
// events fell within at most a quarter of the window's seconds (two, in a
// window under 12 s: a stall of 100 ms that straddles a second's end makes
// two slow seconds), and at the window's end no arrival older than the
// limit waited and none had been dropped.
func (s *Step) drained() bool {
	return s.SlowSeconds > 0 && s.SlowSeconds <= max(2, int(s.Seconds/4)) && s.BacklogOver == 0 && s.Dropped == 0
}

func drainedTail(s *Step, limit string) string {
	if s.Backlog == 0 {
		return "none queued at the end"
	}
	return fmt.Sprintf("%d queued at the end, none older than %s", s.Backlog, limit)
}

func fmtPct(p float64) string { return "p" + trimFloat(p) }

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.3f", f)
	for s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	return trimDot(s)
}

func trimDot(s string) string {
	if s[len(s)-1] == '.' {
		return s[:len(s)-1]
	}
	return s
}

// StepLength is how long a step at rate runs in its measured window: long
// enough for MinEvents events (so that the percentile rests on at least 10
// events past it), within [min, max]. At a rate too low for that within
// max, the step says so in Search's notes (fewer events, a coarser
// percentile).
func StepLength(slo SLO, rate float64, minLen, maxLen time.Duration) time.Duration {
	if rate <= 0 {
		return maxLen
	}
	d := time.Duration(float64(slo.MinEvents()) / rate * float64(time.Second))
	return min(max(d, minLen), maxLen).Round(100 * time.Millisecond)
}
