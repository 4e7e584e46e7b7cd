package record

import (
	"encoding/json"
	"sort"
	"time"

	"benchmatrix/engine"
	"benchmatrix/record/parts"
)

// Run statuses.
const (
	StatusRunning     = "running"
	StatusFinished    = "finished"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
)

// Cell statuses.
const (
	CellOK     = "ok"
	CellFailed = "failed"
)

// Tool identifies the benchmatrix build that produced a run.
type Tool struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	GoVersion string `json:"go_version"`
}

// Host describes the machine the run was made on.
type Host struct {
	Hostname string `json:"hostname"`
	CPUModel string `json:"cpu_model"`
	Cores    int    `json:"cores"`
	MemoryMB int64  `json:"memory_mb"`
	Kernel   string `json:"kernel"`
	// Storage under the server's datadir: device and filesystem type.
	Storage    string `json:"storage,omitempty"`
	Filesystem string `json:"filesystem,omitempty"`
}

// Run is a whole matrix run: what was asked, where it ran, and every cell.
type Run struct {
	Tool          Tool     `json:"tool"`
	Experiment    string   `json:"experiment"`
	Description   string   `json:"description,omitempty"`
	ManifestPath  string   `json:"manifest_path"`
	Manifest      string   `json:"manifest"` // the manifest text as run
	ManifestHash  string   `json:"manifest_sha256"`
	Baseline      string   `json:"baseline,omitempty"`
	Columns       []string `json:"columns"`
	MetricColumns []string `json:"metric_columns,omitempty"`
	// Axes names the varying parameters that come from [axes] (the others
	// come from scenarios); Pivot is the parameter summary.md pivots on.
	Axes         []string         `json:"axes,omitempty"`
	Pivot        string           `json:"pivot,omitempty"`
	ServerConfig []Param          `json:"server_config"`
	Plan         []PlanCell       `json:"plan"`
	Order        string           `json:"order"`
	Seed         int64            `json:"seed,omitempty"` // of a shuffled order
	Status       string           `json:"status"`
	Started      time.Time        `json:"started"`
	Finished     time.Time        `json:"finished,omitempty"`
	Server       parts.ServerInfo `json:"server"`
	Host         Host             `json:"host"`
	Cells        []Cell           `json:"cells"`
	Notes        []string         `json:"notes,omitempty"`
	// Profiles is what the cells' profiles say together (profile/report.go),
	// computed when summary.md is written.
	Profiles *ProfileReport `json:"profiles,omitempty"`
	// Time is where the run's wall time went (timing.go).
	Time        *TimeSplit        `json:"time,omitempty"`
	Variables   map[string]string `json:"server_variables,omitempty"` // full SHOW GLOBAL VARIABLES at the start
	Fingerprint *Fingerprint      `json:"fingerprint,omitempty"`

	// UserMetrics are the intervals.csv columns of [[observe.metric]]
	// (results/plot.go): plotted under the built-in panels.
	UserMetrics []string     `json:"user_metrics,omitempty"`
	Shard       *ShardRecord `json:"shard,omitempty"` // shard.go: run --shard, merge
	// Rounds is what until = "conclusive" did (rounds.go).
	Rounds *RoundsRecord `json:"rounds,omitempty"`
}

// Cell is the outcome of one cell run.
type Cell struct {
	Name     string  `json:"name"`
	Index    int     `json:"index"`
	Scenario string  `json:"scenario,omitempty"`
	Params   []Param `json:"params"`
	Repeat   int     `json:"repeat"`
	Status   string  `json:"status"`
	Error    string  `json:"error,omitempty"`

	Started     time.Time `json:"started"`
	WallSeconds float64   `json:"wall_seconds"`
	// ServerSeconds is the time spent starting and restarting the server
	// for this cell.
	ServerSeconds float64 `json:"server_seconds,omitempty"`
	// What the runner had to do before measuring: Change in the plan's
	// terms (its Cost is comparable with the plan's), Restarted whether the
	// server was (re)started for any reason, a recovery included.
	Change    Change `json:"change"`
	Restarted bool   `json:"restarted"`
	// Data is how the cell's data came to be: loaded (prepare), restored
	// (from a snapshot of an earlier load), cached (restored from the data
	// cache across runs) or reused (left by the cell before).
	Data string `json:"data"`
	// DataCache is the data cache entry the data came from (cached) or was
	// saved as (loaded); DataCacheNote what else the cache did (a corrupt
	// entry discarded). runner/datacache.go.
	DataCache      string  `json:"data_cache,omitempty"`
	DataCacheNote  string  `json:"data_cache_note,omitempty"`
	PrepareSeconds float64 `json:"prepare_seconds,omitempty"`
	PrewarmSeconds float64 `json:"prewarm_seconds,omitempty"`
	// DrainSeconds is the wait for dirty pages before the cell, and
	// DirtyPagesAtStart what was left when it started.
	DrainSeconds      float64 `json:"drain_seconds"`
	DirtyPagesAtStart int64   `json:"dirty_pages_at_start"`
	// WarmupSeconds is how long the warm-up ran; WarmupSteady, for
	// warmup = "auto", whether tps became steady before the cap.
	WarmupSeconds float64 `json:"warmup_seconds"`
	WarmupSteady  bool    `json:"warmup_steady,omitempty"`
	// ColdStart is what a cold cell's restart and page-cache drop did
	// (runner/coldstart.go); Steady the time to a steady state from the
	// engine's first second (analysis/steady.go).
	ColdStart *parts.ColdStart   `json:"cold_start,omitempty"`
	Steady    *parts.SteadyState `json:"steady,omitempty"`

	// Effective holds the server variables read back after applying the
	// cell's settings (and the startup options of [server.config]).
	Effective map[string]string `json:"effective"`
	Workload  engine.Spec       `json:"workload"`
	// RandSeed is the random seed the engine ran with (chosen by the runner
	// when the manifest leaves rand_seed at 0).
	RandSeed int64          `json:"rand_seed"`
	Result   *engine.Result `json:"result,omitempty"`
	// ServerLog is the tail of the server's error log when the cell failed.
	ServerLog string `json:"server_log,omitempty"`
	// ServerLogLines is what the server wrote to its error log during the
	// cell (at most the last 200 lines).
	ServerLogLines string `json:"server_log_lines,omitempty"`
	// Limits are the resource limits the cell ran under, read back, and
	// DiskCheck what a disk limit delivered (issue 15: runner/limits.go).
	Limits    *parts.LimitsInForce `json:"limits,omitempty"`
	DiskCheck *parts.DiskCheck     `json:"disk_check,omitempty"`
	// Binding is how much each of those limits bound in the measured
	// window (analysis/observe.go, limits/report.go).
	Binding *parts.Binding `json:"binding,omitempty"`
	// Profile is what profiling the cell produced (profile/report.go).
	Profile *CellProfile `json:"profile,omitempty"`
	// Capacity is the cell's capacity at its latency target (capacity/report).
	Capacity *CellCapacity `json:"capacity,omitempty"`

	// What the observers saw: table growth, stalls (and the sampled
	// metrics that moved at their onsets), performance_schema waits.
	Growth        *Growth            `json:"growth,omitempty"`
	Stalls        *parts.StallReport `json:"stalls,omitempty"`
	StallEvidence []string           `json:"stall_evidence,omitempty"`
	// StallCauses is each stall's likely cause, with its evidence
	// (observe/stall_cause.go).
	StallCauses []string          `json:"stall_causes,omitempty"`
	Waits       []parts.WaitEvent `json:"waits,omitempty"`
	// Injected holds the onsets (seconds on the cell's clock) of the stalls
	// the [inject] section caused.
	Injected     []float64 `json:"injected,omitempty"`
	ObserveNotes []string  `json:"observe_notes,omitempty"`
	// Detector is the stall detector against the injected onsets.
	Detector *parts.OnsetMatch `json:"detector,omitempty"`
	// Mechanism holds the per-transaction and device figures of the
	// measured window (keys: MechanismColumns; a figure without data is
	// absent), Contention what other processes did meanwhile.
	Mechanism  map[string]float64 `json:"mechanism,omitempty"`
	Contention *parts.Contention  `json:"contention,omitempty"`
	// QuietWaitSeconds is how long the cell waited for a quiet host
	// (wait_quiet), QuietReached whether it got one.
	QuietWaitSeconds float64 `json:"quiet_wait_seconds,omitempty"`
	QuietReached     bool    `json:"quiet_reached,omitempty"`

	// Topology: the nodes, data checks and node events (topology/report).
	Topology *TopologyResult `json:"topology,omitempty"`
	// Host and Shard say where the cell ran in a merged run (merge.go).
	Host  string `json:"host,omitempty"`
	Shard int    `json:"shard,omitempty"`

	Intervals []engine.Interval `json:"-"` // in intervals.csv
	// Metrics holds the sampled metrics per interval (aligned with
	// Intervals, columns Run.MetricColumns); in intervals.csv.
	Metrics [][]float64 `json:"-"`
}

// UnmarshalJSON reads a cell of run.json. A run.json from before cells
// recorded their workload had it only in the result's "options": the
// workload is taken from there.
func (c *Cell) UnmarshalJSON(b []byte) error {
	type plain Cell
	if err := json.Unmarshal(b, (*plain)(c)); err != nil {
		return err
	}
	if !c.Workload.IsZero() {
		return nil
	}
	var legacy struct {
		Result struct {
			Options json.RawMessage `json:"options"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &legacy); err == nil && len(legacy.Result.Options) > 0 {
		c.Workload = engine.RawSpec(legacy.Result.Options)
	}
	return nil
}

// Growth is how the workload's tables changed over a cell.
type Growth struct {
	RowsBefore  int64 `json:"rows_before"`
	RowsAfter   int64 `json:"rows_after"`
	RowsDelta   int64 `json:"rows_delta"`
	RowsExact   bool  `json:"rows_exact"` // counted, not estimated
	BytesBefore int64 `json:"bytes_before"`
	BytesAfter  int64 `json:"bytes_after"`
	MaxIDBefore int64 `json:"max_id_before"`
	MaxIDAfter  int64 `json:"max_id_after"`
}

// Param returns the cell's value for a varying parameter, or "".
func (c *Cell) Param(name string) string {
	for _, p := range c.Params {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

// Summary is one cell's figures over its repeats (medians).
type Summary struct {
	Name     string
	Scenario string
	Params   []Param
	Runs     int // successful repeats
	Failed   int
	TPS      float64
	QPS      float64
	LatAvg   float64
	LatP95   float64
	LatP99   float64
	LatMax   float64
	Errors   int64
}

// Summaries groups the run's cells by name, in plan order, with the median
// of each figure over the successful repeats.
func (r *Run) Summaries() []Summary {
	var order []string
	by := map[string][]Cell{}
	for _, c := range r.Cells {
		if _, ok := by[c.Name]; !ok {
			order = append(order, c.Name)
		}
		by[c.Name] = append(by[c.Name], c)
	}
	out := make([]Summary, 0, len(order))
	for _, name := range order {
		cells := by[name]
		s := Summary{Name: name, Scenario: cells[0].Scenario, Params: cells[0].Params}
		var tps, qps, avg, p95, p99, mx []float64
		for _, c := range cells {
			if c.Status != CellOK || c.Result == nil {
				s.Failed++
				continue
			}
			s.Runs++
			res := c.Result
			tps = append(tps, res.TPS())
			qps = append(qps, res.QPS())
			avg = append(avg, res.Latency.Avg)
			p95 = append(p95, res.Latency.P95)
			p99 = append(p99, res.Latency.P99)
			mx = append(mx, res.Latency.Max)
			s.Errors += res.Errors
		}
		s.TPS, s.QPS, s.LatAvg, s.LatP95, s.LatP99, s.LatMax = Median(tps), Median(qps), Median(avg), Median(p95), Median(p99), Median(mx)
		out = append(out, s)
	}
	return out
}

// Median returns the median of xs, or 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
