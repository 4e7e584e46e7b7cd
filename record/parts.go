package record

import (
	"benchmatrix/catalog"
	"benchmatrix/record/parts"
)

// The providers' and observers' parts of the record are package parts';
// these names of them, and the Assess functions below, remain only because
// results calls them through record.
type (
	// LimitsInForce is what a server runs under, as read back.
	LimitsInForce = parts.LimitsInForce
	// WaitEvent is one performance_schema wait event's share of a cell.
	WaitEvent = parts.WaitEvent
	// ContentionThresholds say when an interval counts as contended.
	ContentionThresholds = parts.ContentionThresholds
	// Binding is how much each limit in force bound a cell's server.
	Binding = parts.Binding
	// LimitBinding is one limit's part of it.
	LimitBinding = parts.LimitBinding
	// BindingSeries are the counters it is judged on.
	BindingSeries = parts.BindingSeries
	// DataMemory is the data against the memory that holds it.
	DataMemory = parts.DataMemory
	// ColdStart is what a cold start did (runner, server).
	ColdStart = parts.ColdStart
	// SteadyState is a cell's time to a steady state (analysis/steady.go decides it).
	SteadyState = parts.SteadyState
	// Settled is one series' part of it.
	Settled = parts.Settled
)

// AssessContention is parts.AssessContention: a pure function of the
// per-interval values (NaN for none).
func AssessContention(cpuOther, steal, ioOther, ioAll []float64, th parts.ContentionThresholds) parts.Contention {
	return parts.AssessContention(cpuOther, steal, ioOther, ioAll, th)
}

// AssessBinding is parts.AssessBinding: a pure function of the limits and
// the measured seconds' counters.
func AssessBinding(l catalog.LimitSet, s parts.BindingSeries) parts.Binding {
	return parts.AssessBinding(l, s)
}

// AssessData is parts.AssessData: the data against the memory that holds
// it, and the measured seconds' reads.
func AssessData(engine string, data, pool, memLimit int64, reads, readKB, poolReads []float64) parts.DataMemory {
	return parts.AssessData(engine, data, pool, memLimit, reads, readKB, poolReads)
}
