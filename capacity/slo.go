// Package capacity finds the highest open-loop rate a cell sustains within a
// latency target (an SLO): an exponential then bisecting search over short
// steps, the boundary tested again before it is believed, and each step
// judged on every arrival it was offered, served or not. It is pure: the
// steps are run by a Prober the caller gives (the runner's engine, or a
// fake server in the tests).
package capacity

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// SLO is a latency target at one percentile, with an optional bound on the
// share of events that met an error: "p99 < 5ms", "p99.9 < 20ms, errors <
// 0.1%".
type SLO struct {
	// Percentile is in (0, 100): 99 for p99.
	Percentile float64 `json:"percentile"`
	// Limit: the percentile's latency must stay below it.
	Limit time.Duration `json:"limit"`
	// ErrorRate, when HasErrors, is the largest share of events (0..1)
	// that may meet an error.
	ErrorRate float64 `json:"error_rate,omitempty"`
	HasErrors bool    `json:"has_errors,omitempty"`
	// Text is the target as written.
	Text string `json:"text"`
}

// ParseSLO reads a target such as "p99 < 5ms" or "p95 < 20 ms and errors <
// 0.1%". Clauses are separated by "," or "and"; one latency clause is
// required, one errors clause is optional.
func ParseSLO(s string) (SLO, error) {
	out := SLO{Text: strings.TrimSpace(s)}
	body := strings.ReplaceAll(s, " and ", ",")
	seenLat := false
	for _, cl := range strings.Split(body, ",") {
		cl = strings.TrimSpace(cl)
		if cl == "" {
			return out, fmt.Errorf("%q: an empty clause (want e.g. \"p99 < 5ms, errors < 0.1%%\")", s)
		}
		lhs, rhs, ok := strings.Cut(cl, "<")
		if !ok {
			return out, fmt.Errorf("%q: %q has no \"<\" (want e.g. \"p99 < 5ms\")", s, cl)
		}
		lhs, rhs = strings.TrimSpace(lhs), strings.TrimSpace(strings.TrimPrefix(rhs, "="))
		switch {
		case lhs == "errors":
			if out.HasErrors {
				return out, fmt.Errorf("%q: two errors clauses", s)
			}
			v := strings.TrimSpace(strings.TrimSuffix(rhs, "%"))
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !strings.HasSuffix(rhs, "%") || !(f >= 0 && f < 100) {
				return out, fmt.Errorf("%q: errors bound %q: want a percentage from 0 to 100, e.g. \"errors < 0.1%%\"", s, rhs)
			}
			out.ErrorRate, out.HasErrors = f/100, true
		case strings.HasPrefix(lhs, "p"):
			if seenLat {
				return out, fmt.Errorf("%q: two latency clauses (one percentile per target)", s)
			}
			seenLat = true
			p, err := strconv.ParseFloat(lhs[1:], 64)
			if err != nil || !(p > 0 && p < 100) {
				return out, fmt.Errorf("%q: %q: want a percentile above 0 and below 100, e.g. p99 or p99.9", s, lhs)
			}
			d, err := time.ParseDuration(strings.ReplaceAll(rhs, " ", ""))
			if err != nil || d <= 0 {
				return out, fmt.Errorf("%q: latency bound %q: want a positive duration such as 5ms or 1.5s", s, rhs)
			}
			out.Percentile, out.Limit = p, d
		default:
			return out, fmt.Errorf("%q: %q: want a percentile (p50, p99, p99.9) or errors on the left", s, lhs)
		}
	}
	if !seenLat {
		return out, fmt.Errorf("%q: no latency clause (want e.g. \"p99 < 5ms\")", s)
	}
	return out, nil
}

// String is the target in its canonical spelling.
func (s SLO) String() string {
	t := fmt.Sprintf("p%s < %s", strconv.FormatFloat(s.Percentile, 'f', -1, 64), fmtDuration(s.Limit))
	if s.HasErrors {
		t += fmt.Sprintf(", errors < %s%%", strconv.FormatFloat(s.ErrorRate*100, 'f', -1, 64))
	}
	return t
}

func fmtDuration(d time.Duration) string {
	if d%time.Second == 0 && d < time.Minute {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	if d%time.Millisecond == 0 && d < time.Minute {
		return fmt.Sprintf("%dms", d/time.Millisecond)
	}
	return d.String()
}

// Allowed is how many of n events may exceed the limit while the target's
// percentile stays below it: strictly fewer than (100 - Percentile)% of
// them.
func (s SLO) Allowed(n int64) int64 {
	if n <= 0 {
		return 0
	}
	a := float64(n) * (100 - s.Percentile) / 100
	k := int64(math.Ceil(a)) - 1 // over < a
	return max(k, 0)
}

// MinEvents is how many events a step needs for its percentile to rest on
// at least 10 events past it (p99: 1,000; p50: 20).
func (s SLO) MinEvents() int64 {
	return int64(math.Ceil(10/((100-s.Percentile)/100) - 1e-9))
}
