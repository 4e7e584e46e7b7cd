package record

import (
	"fmt"
	"math"

	"benchmatrix/capacity"
)

// CellCapacity is a cell's capacity at its latency target (issue 30:
// runner/capacity.go fills it): the search's steps and answer, and the
// full-length run at the rate found, judged against the target. A cell
// with a rate of its own is only judged (Searched false).
type CellCapacity struct {
	SLO      capacity.SLO      `json:"slo"`
	Searched bool              `json:"searched"`
	Search   *capacity.Outcome `json:"search,omitempty"`
	// Rate is the rate the cell's measured run was offered: the capacity
	// found (the lowest rate tried when none met the target), or the
	// cell's own.
	Rate float64 `json:"rate"`
	// Run is the cell's measured run judged like a step.
	Run *capacity.Step `json:"run,omitempty"`
	// SearchSeconds is the wall time of the search.
	SearchSeconds float64 `json:"search_seconds,omitempty"`
}

// The states of a cell's capacity, as cells.csv's capacity_slo says them.
const (
	CapacityConfirmed   = "confirmed"
	CapacityUnconfirmed = "not confirmed"
	CapacityBelow       = "above the SLO even at the lowest rate"
	CapacityMeets       = "meets"
	CapacityMisses      = "misses"
)

// State is the capacity's state in a word or a phrase.
func (c *CellCapacity) State() string {
	ok := c.Run != nil && c.Run.Verdict == capacity.Meets
	switch {
	case !c.Searched && ok:
		return CapacityMeets
	case !c.Searched:
		return CapacityMisses
	case c.Search != nil && c.Search.Status == capacity.Below:
		return CapacityBelow
	case ok:
		return CapacityConfirmed
	}
	return CapacityUnconfirmed
}

// Value is the capacity in events per second: the rate the search found,
// once the full-length run at it met the target (0 when no rate met it).
// A rate whose run missed it, by an overload or a stall, is not a
// capacity, and a judged cell has none.
func (c *CellCapacity) Value() (float64, bool) {
	if c == nil || !c.Searched || c.Search == nil {
		return 0, false
	}
	switch c.State() {
	case CapacityConfirmed:
		return c.Search.Capacity, true
	case CapacityBelow:
		return 0, true
	}
	return 0, false
}

// Text is cells.csv's capacity_slo: the target, the state, the bracket and
// what the run at the capacity measured.
func (c *CellCapacity) Text() string {
	if c == nil {
		return ""
	}
	if !allFinite(c.SLO.Percentile, c.Rate) {
		return "(not finite)"
	}
	s := c.SLO.String() + ": " + c.State()
	if o := c.Search; c.Searched && o != nil && allFinite(o.Low, o.High) {
		switch {
		case o.Status == capacity.Below:
			s += fmt.Sprintf(" (%s/s missed it)", capacity.FmtRate(o.High))
		case o.High > 0:
			s += fmt.Sprintf(" (bracket %s-%s/s)", capacity.FmtRate(o.Low), capacity.FmtRate(o.High))
		default:
			s += fmt.Sprintf(" (met up to %s/s, the highest rate tried)", capacity.FmtRate(o.Low))
		}
		if o.ClientBound {
			s += "; the client could not keep up above it"
		}
	}
	if c.Run != nil && allFinite(c.Run.Pct) {
		s += fmt.Sprintf("; at %s/s p%s %.3g ms", capacity.FmtRate(c.Rate), trimZeros(c.SLO.Percentile), c.Run.Pct)
		if c.Run.Backlog+c.Run.Dropped > 0 {
			s += fmt.Sprintf(", backlog %d, dropped %d", c.Run.Backlog, c.Run.Dropped)
		}
		if c.Run.Verdict == capacity.Stalled {
			s += " (a stall: the queue drained)"
		}
	}
	return s
}

func trimZeros(f float64) string { return fmt.Sprintf("%g", f) }

func allFinite(fs ...float64) bool {
	for _, f := range fs {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
	}
	return true
}
