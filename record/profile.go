package record

import "benchmatrix/record/parts"

// CellProfile is what profiling one cell run produced.
type CellProfile struct {
	Mode    string  `json:"mode"`
	Seconds float64 `json:"seconds"` // the profiled window
	// CPU and OffCPU are the two recordings' results (nil when not taken).
	CPU    *ModeProfile `json:"cpu,omitempty"`
	OffCPU *ModeProfile `json:"offcpu,omitempty"`
	Notes  []string     `json:"notes,omitempty"`
}

// ModeProfile is one recording of a cell: its files (relative to the
// results directory), what it holds and its top functions.
type ModeProfile struct {
	Records int               `json:"records"`
	Seconds float64           `json:"total_seconds"` // time in the profile
	Empty   bool              `json:"empty,omitempty"`
	Kinds   []parts.KindShare `json:"kinds,omitempty"`
	// Top is the top functions of the connection threads (all threads when
	// none were told apart), by inclusive share.
	Top     []parts.Func `json:"top,omitempty"`
	TopKind string       `json:"top_kind,omitempty"`
	Folded  string       `json:"folded,omitempty"`
	SVG     string       `json:"svg,omitempty"`
	Pprof   string       `json:"pprof,omitempty"`
}

// ProfileReport is what the profiles of a run say together: per scenario
// against the baseline, the prediction and the differential graphs.
type ProfileReport struct {
	Comparisons []ProfileComparison `json:"comparisons,omitempty"`
	Notes       []string            `json:"notes,omitempty"`
}

// ProfileComparison is one profiled cell against its baseline cell, over
// all their repeats.
type ProfileComparison struct {
	Cell     string `json:"cell"`
	Baseline string `json:"baseline"`
	// CPU is the prediction from on-CPU time only, Both from on-CPU and
	// off-CPU time of the same threads (nil when not recorded).
	CPU  *parts.Prediction `json:"cpu,omitempty"`
	Both *parts.Prediction `json:"both,omitempty"`
	// Measured is the cells' tps ratio under the profiler; Unprofiled the
	// ratio of their unprofiled twins (0 when there are none).
	Measured   float64 `json:"measured_ratio"`
	Unprofiled float64 `json:"unprofiled_ratio,omitempty"`
	// DiffCPU and DiffOffCPU are the differential flame graphs.
	DiffCPU    string `json:"diff_cpu_svg,omitempty"`
	DiffOffCPU string `json:"diff_offcpu_svg,omitempty"`
}
