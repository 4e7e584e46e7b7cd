package results

import (
	"fmt"
	"io"
)

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
	OtherSeconds    float64 `json:"other_seconds"`    // everything else: checks, observation, writing
	// Overhead is everything but warm-up and measurement, as a share of
	// the measured time.
	Overhead float64 `json:"overhead_share"`
}

// Accounting splits the run's wall time (Started to Finished) by what the
// cells recorded; startSeconds is the server start before the first cell.
func Accounting(r *Run, startSeconds float64) TimeSplit {
	t := TimeSplit{WallSeconds: r.Finished.Sub(r.Started).Seconds(), ServerSeconds: startSeconds}
	for _, c := range r.Cells {
		t.ServerSeconds += c.ServerSeconds
		t.DataSeconds += c.PrepareSeconds
		t.DrainSeconds += c.DrainSeconds
		t.PrewarmSeconds += c.PrewarmSeconds
		t.WarmupSeconds += c.WarmupSeconds
		if c.Result != nil {
			t.MeasuredSeconds += c.Result.Elapsed.Seconds()
		}
	}
	t.OtherSeconds = max(0, t.WallSeconds-t.ServerSeconds-t.DataSeconds-t.DrainSeconds-t.PrewarmSeconds-t.WarmupSeconds-t.MeasuredSeconds)
	if t.MeasuredSeconds > 0 {
		t.Overhead = (t.WallSeconds - t.WarmupSeconds - t.MeasuredSeconds) / t.MeasuredSeconds
	}
	return t
}

// writeTimeEnv is summary.md's line on where the run's time went.
func writeTimeEnv(w io.Writer, t *TimeSplit) {
	if t == nil || t.WallSeconds <= 0 {
		return
	}
	fmt.Fprintf(w, "| wall time | %.0f s: measured %.0f s, warm-up %.0f s, server starts %.1f s, data %.1f s, drain %.1f s, prewarm %.1f s, other %.1f s; overhead %.1f%% of measured time |\n",
		t.WallSeconds, t.MeasuredSeconds, t.WarmupSeconds, t.ServerSeconds, t.DataSeconds, t.DrainSeconds, t.PrewarmSeconds, t.OtherSeconds, 100*t.Overhead)
}
