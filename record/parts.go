package record

import "benchmatrix/record/parts"

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
