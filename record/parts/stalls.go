package parts

// Episode is one stall: a maximal run of stalled intervals.
type Episode struct {
	Start, End int     // interval indexes into the series, End exclusive
	Min        float64 // lowest value in the run
	Zero       bool    // Min <= ZeroFraction × median
	Deep       bool    // Min <= Deep × median
	// Deficit is the throughput the episode lost, in intervals' worth of
	// its level: Σ (1 − tps/level) over its intervals (5 s at zero: 5).
	Deficit float64
}

// StallReport is what DetectStalls found.
type StallReport struct {
	Median   float64
	Episodes []Episode
	Count    int
	// TotalSeconds and LongestSeconds measure the episodes in time.
	TotalSeconds, LongestSeconds float64
	// PeriodSeconds is the median gap between onsets when the gaps agree
	// (each within ±25 % or one step of the median); 0 means no period.
	PeriodSeconds float64
	// PeriodDeep is set when the period holds over the deep stalls only
	// (shallow ones between them ignored).
	PeriodDeep bool
	// PeriodStrongest, when not 0, is how many of the stalls the period
	// holds over: the strongest ones by the throughput they lost (the
	// others, deep or not, fall between them: a busy host's noise).
	PeriodStrongest int
	// Dips counts the brief shallow dips that were not called stalls.
	Dips int
	// HostDips counts the episodes in which the host took the CPUs away
	// (StallOptions.Starved), left out of the stalls.
	HostDips int
	// HostIODips counts the episodes in which other processes' IO
	// dominated the device (StallOptions.OtherIO), left out of the stalls.
	HostIODips int `json:",omitempty"`
	// PeriodConfirmed is set when there are ≥ 3 episodes and the
	// autocorrelation of the series peaks at the period's lag.
	PeriodConfirmed bool
	// Autocorr is the autocorrelation at the confirmed (or tested) lag.
	Autocorr float64
	// LeadingIgnored and TrailingIgnored count the intervals left out at
	// either end: a single low first interval (ramp-up) and a low run of
	// at most maxDrain intervals that reaches the end of the series (the
	// drain); a longer one is a stall lasting to the end of the window.
	LeadingIgnored, TrailingIgnored int
	// Text is a one-line summary, e.g. "4 stalls to zero, every 6.0 s,
	// longest 1 s" or "no stalls".
	Text string
}

// WaitEvent is one performance_schema wait event's share of a cell: the
// change of its global summary over the cell.
type WaitEvent struct {
	Event   string  `json:"event"`
	Count   int64   `json:"count"`
	Seconds float64 `json:"seconds"`
	// MaxSeconds is the longest single wait: within the cell when MaxInCell
	// (the server's maximum rose during it), else the server's maximum
	// since its start, an upper bound.
	MaxSeconds float64 `json:"max_seconds,omitempty"`
	MaxInCell  bool    `json:"max_in_cell,omitempty"`
}

// OnsetMatch is how the stall detector did against the stalls an [inject]
// section caused: each injected onset inside the measured window is a hit
// when a detected stall began within the tolerance of it, else a miss; a
// detected stall matched to no injection is a false alarm.
type OnsetMatch struct {
	Injected    int `json:"injected"` // inside the measured window
	Hits        int `json:"hits"`
	Misses      int `json:"misses"`
	FalseAlarms int `json:"false_alarms"`
	// Outside counts injections before or after the measured window
	// (warm-up, drain): not expected to be found.
	Outside int    `json:"outside,omitempty"`
	Text    string `json:"text"`
}
