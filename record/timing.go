package record

// TimeSplit is where a run's wall time went: what users pay for besides
// the measurement.
type TimeSplit struct {
	WallSeconds     float64 `json:"wall_seconds"`
	ServerSeconds   float64 `json:"server_seconds"`   // server starts and restarts
	DataSeconds     float64 `json:"data_seconds"`     // load or snapshot restore
	DrainSeconds    float64 `json:"drain_seconds"`    // waiting for dirty pages
	PrewarmSeconds  float64 `json:"prewarm_seconds"`  // prewarm scans
	WarmupSeconds   float64 `json:"warmup_seconds"`   // warm-up (recorded, not measured)
	MeasuredSeconds float64 `json:"measured_seconds"` // the measured windows
	// SearchSeconds is the capacity searches' steps (issue 30).
	SearchSeconds float64 `json:"search_seconds,omitempty"`
	OtherSeconds  float64 `json:"other_seconds"` // everything else: checks, observation, writing
	// Overhead is everything but warm-up and measurement, as a share of
	// the measured time.
	Overhead float64 `json:"overhead_share"`
}
