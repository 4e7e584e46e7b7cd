package record

import (
	"benchmatrix/catalog"
	"benchmatrix/record/parts"
)

// The providers' and observers' parts of the record (package parts).
type (
	// ServerInfo describes a running server (server.Info).
	ServerInfo = parts.ServerInfo
	// LimitsInForce is what a server runs under, as read back.
	LimitsInForce = parts.LimitsInForce
	// DiskCheck is the self-check of a disk limit.
	DiskCheck = parts.DiskCheck
	// StallReport is what the stall detector found.
	StallReport = parts.StallReport
	// Episode is one stall.
	Episode = parts.Episode
	// WaitEvent is one performance_schema wait event's share of a cell.
	WaitEvent = parts.WaitEvent
	// OnsetMatch is how the stall detector did against injected stalls.
	OnsetMatch = parts.OnsetMatch
	// Contention summarises what other processes did during a cell.
	Contention = parts.Contention
	// ContentionThresholds say when an interval counts as contended.
	ContentionThresholds = parts.ContentionThresholds
)

// AssessContention is parts.AssessContention: a pure function of the
// per-interval values (NaN for none).
func AssessContention(cpuOther, steal, ioOther, ioAll []float64, th ContentionThresholds) Contention {
	return parts.AssessContention(cpuOther, steal, ioOther, ioAll, th)
}

type (
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
	// SteadyState is a cell's time to a steady state (results/steady.go).
	SteadyState = parts.SteadyState
	// Settled is one series' part of it.
	Settled = parts.Settled
)

// AssessBinding is parts.AssessBinding: a pure function of the limits and
// the measured seconds' counters.
func AssessBinding(l catalog.LimitSet, s BindingSeries) Binding { return parts.AssessBinding(l, s) }

// AssessData is parts.AssessData: the data against the memory that holds
// it, and the measured seconds' reads.
func AssessData(engine string, data, pool, memLimit int64, reads, readKB, poolReads []float64) DataMemory {
	return parts.AssessData(engine, data, pool, memLimit, reads, readKB, poolReads)
}
