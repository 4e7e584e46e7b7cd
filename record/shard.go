package record

import "time"

// ShardRecord is in run.json of a shard run (`run --shard K/N`: K set) and
// of a merged run (`merge`: Merged set). Issue 19.
type ShardRecord struct {
	// K is this run's shard, from 1; 0 in a merged run.
	K int `json:"k,omitempty"`
	N int `json:"n"`
	// PlanSHA256 identifies the whole plan the shards were cut from
	// (shard.PlanHash), PlanRuns its number of cell runs.
	PlanSHA256 string `json:"plan_sha256"`
	PlanRuns   int    `json:"plan_cell_runs"`
	// WholeRounds are the rounds the shard runs whole (shard.Shard.Rounds).
	WholeRounds []int `json:"whole_rounds,omitempty"`

	// Merged lists the shard runs a merged run was made of, Missing the
	// shards it lacks (merge --partial), Partial whether cell runs of the
	// plan are missing.
	Merged  []MergedShard `json:"merged,omitempty"`
	Missing []int         `json:"missing,omitempty"`
	Partial bool          `json:"partial,omitempty"`
}

// MergedShard is one shard run inside a merged run.
type MergedShard struct {
	K           int       `json:"k"`
	Dir         string    `json:"dir"`
	Host        Host      `json:"host"`
	Status      string    `json:"status"`
	Started     time.Time `json:"started"`
	Finished    time.Time `json:"finished,omitzero"`
	CellRuns    int       `json:"cell_runs"`
	PlanRuns    int       `json:"plan_cell_runs"` // the shard's own plan
	WholeRounds []int     `json:"whole_rounds,omitempty"`
	// Time is the shard's own wall-time split.
	Time *TimeSplit `json:"time,omitempty"`
}
