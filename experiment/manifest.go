// Package experiment is the manifest language: strict TOML decoding,
// validation that reports every problem with its key and line, and the
// expansion of scenarios × axes × repeats into an ordered plan of cells.
package experiment

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/exitcode"
	"benchmatrix/oltp"
	"benchmatrix/record"
)

// Manifest is a decoded, validated manifest.
type Manifest struct {
	Path   string `json:"path"`
	Source string `json:"-"` // the file's text, for fingerprints and run.json

	Name        string        `json:"name"`
	Description string        `json:"description,omitempty"`
	Baseline    string        `json:"baseline,omitempty"`
	Duration    time.Duration `json:"duration"`
	Warmup      time.Duration `json:"warmup"`
	Repeats     int           `json:"repeats"`
	// Until = "conclusive" makes Repeats the minimum rounds and adds paired
	// rounds until every comparison is decided within MaxRepeats rounds
	// and the Budget (wall time, 0 for none); Precision is the ratio's
	// "no difference" band (until.go).
	Until      string        `json:"until,omitempty"`
	MaxRepeats int           `json:"max_repeats,omitempty"`
	Budget     time.Duration `json:"budget,omitempty"`
	Precision  float64       `json:"precision,omitempty"`
	// Policy holds the runner's defaults for every cell: prewarm, cold
	// start, automatic warm-up, drain between cells. prewarm and cold may
	// also vary as scenario or axis keys.
	Policy Policy `json:"policy"`
	// Exclude removes every cell matching all keys of one entry.
	Exclude []map[string]string `json:"exclude,omitempty"`
	// Zips are groups of axes that vary together (same position in each).
	Zips [][]string `json:"zip,omitempty"`
	// Order is the order of cells within each round of repeats.
	Order Order `json:"order"`
	Seed  int64 `json:"seed,omitempty"`
	// CellName is a template such as "{scenario}-t{threads}"; empty means
	// scenario/axis=value/...
	CellName string `json:"cell_name,omitempty"`
	// Pivot is the parameter whose values become the columns of
	// summary.md's pivot ("scenario" or an axis); default: the scenario,
	// else the last axis.
	Pivot string `json:"pivot,omitempty"`
	// Expect holds orderings the results should show ("b1e1 < b0e1 <
	// b0e0"), checked with the paired rounds and reported in summary.md;
	// run --check exits 3 when one is broken with significance.
	Expect []string `json:"expect,omitempty"`
	// StallThreshold is the fraction of a cell's median tps below which
	// an interval is stalled (0 means the detector's default, 0.5).
	StallThreshold float64 `json:"stall_threshold,omitempty"`
	// WaitQuiet, when set, waits before each cell (at most this long)
	// until the host's CPU is quiet; the wait is recorded.
	WaitQuiet time.Duration `json:"wait_quiet,omitempty"`

	Server ServerSpec `json:"server"`
	// Inject, when set, causes stalls on purpose during each cell.
	Inject   *Inject `json:"inject,omitempty"`
	Workload []Param `json:"workload"` // [workload] keys, in file order
	// Scenarios in file order; empty means one unnamed scenario.
	Scenarios []Scenario `json:"scenarios"`
	Axes      []Axis     `json:"axes"`
	// Machines are the manifest's own [machines.NAME] presets (limits.go).
	Machines map[string]catalog.LimitSet `json:"machines,omitempty"`
	// Topology, Metrics and Events: [topology], [[observe.metric]] and
	// [[events]] (topology.go).
	Topology *Topology      `json:"topology,omitempty"`
	Metrics  []CustomMetric `json:"metrics,omitempty"`
	Events   []Event        `json:"events,omitempty"`
	// SLOSearch is [experiment] slo and the slo_* keys tuning the search
	// (slo.go); its Target is zero when only scenarios or axes set one.
	SLOSearch *SLOSpec `json:"slo_search,omitempty"`

	// lines maps dotted keys to the line that defines them, and set holds
	// the keys the file sets: for problems found after decoding.
	lines map[string]int
	set   map[string]int
}

// Order is the order of the cells within each round of repeats.
type Order string

// The orders.
const (
	// Grouped (the default) runs cells that share loaded data and startup
	// options together: the fewest restarts and reloads.
	Grouped Order = "grouped"
	// Written keeps the manifest's order.
	Written Order = "written"
	// Shuffled shuffles with a recorded seed.
	Shuffled Order = "shuffled"
	// Blocked runs all repeats of a cell back to back (A A A B B B), each
	// cell in grouped order: it measures what repeating does to one cell
	// (warm-up, growth), not the cells side by side under the same drift.
	Blocked Order = "blocked"
)

var orders = []Order{Grouped, Written, Shuffled, Blocked}

// ServerSpec is the [server] section.
type ServerSpec struct {
	Provider catalog.ProviderName `json:"provider"`
	Binary   string               `json:"binary,omitempty"`
	TempDir  string               `json:"tmpdir,omitempty"`
	// Image is the Docker image (provider docker); it may also vary as an
	// axis or scenario key, for version comparisons.
	Image string `json:"image,omitempty"`
	// DSN reaches an external server (provider external); its password is
	// never stored: give it in BENCHMATRIX_PASSWORD, or in the DSN.
	DSN string `json:"-"`
	// DSNs reach the nodes of a topology someone else runs (provider
	// external with a [topology]), node 1 the primary; DSN is then node
	// 1's. Never stored, as DSN.
	DSNs []string `json:"-"`
	// Schema is the database the workload's tables live in.
	Schema string  `json:"schema"`
	Config []Param `json:"config"` // [server.config]: startup options for every cell
	// Machine is the preset every cell runs on unless it names its own;
	// Limits are the limit keys of [server.config] (limits.go).
	Machine string  `json:"machine,omitempty"`
	Limits  []Param `json:"limits,omitempty"`
	// Cache and CacheSize are the data cache across runs (cache.go).
	Cache     string `json:"cache,omitempty"`
	CacheSize string `json:"cache_size,omitempty"`
}

// Param is one key = value, the value kept as text in the form the
// server and the engine read it (record.Param: run.json stores it).
type Param = record.Param

// Scenario is a named set of parameters.
type Scenario struct {
	Name   string  `json:"name"`
	Params []Param `json:"params"`
}

// Axis is a parameter with the values to try.
type Axis struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// Policy is how the runner treats a cell around its measurement.
type Policy struct {
	// Prewarm runs the engine's prewarm (chunked scans of the tables and
	// the secondary index) before the warm-up.
	Prewarm bool `json:"prewarm"`
	// Cold restarts the server before the cell (an empty buffer pool)
	// instead of running on whatever the cell before left warm.
	Cold bool `json:"cold"`
	// WarmupAuto runs the warm-up until per-second tps is steady, at most
	// WarmupCap; otherwise the warm-up is the fixed Workload.Warmup.
	WarmupAuto bool          `json:"warmup_auto"`
	WarmupCap  time.Duration `json:"warmup_cap,omitempty"`
	// DurationAuto (duration = "auto", until = "conclusive" only): the
	// first round measures AutoPilot, and the rounds after it the length
	// chosen from what it measured (sequential.ChooseLength), from
	// MinAutoDuration to DurationCap.
	DurationAuto bool          `json:"duration_auto,omitempty"`
	DurationCap  time.Duration `json:"duration_cap,omitempty"`
	// Drain waits before each cell until dirty pages fall below
	// DrainPages or 1% of the buffer pool, at most DrainCap.
	// Observe samples server and OS metrics, table growth and waits beside
	// the cell (on by default; an axis measures what it costs).
	Observe    bool          `json:"observe"`
	Drain      bool          `json:"drain"`
	DrainCap   time.Duration `json:"drain_cap,omitempty"`
	DrainPages int64         `json:"drain_pages,omitempty"`
	// Profile is how the server is profiled while the cell is measured.
	Profile ProfileSpec `json:"profile,omitzero"` // profile.go
	// SLO, when set, searches the cell's capacity at a latency target
	// (slo.go).
	SLO *SLOSpec `json:"slo,omitempty"`
}

// Inject is the [inject] section: SQL run periodically from a side
// connection during each cell, to cause stalls (for chaos experiments and
// to check the stall detector): by default a global read lock held Hold
// every Every.
type Inject struct {
	Every   time.Duration `json:"every"`
	Hold    time.Duration `json:"hold"`
	SQL     string        `json:"sql"`
	Release string        `json:"release"`
}

// Problem is one thing wrong with a manifest.
type Problem struct {
	Key  string `json:"key"`
	Line int    `json:"line,omitempty"`
	Msg  string `json:"message"`
}

func (p Problem) String() string {
	loc := ""
	if p.Line > 0 {
		loc = fmt.Sprintf("line %d: ", p.Line)
	}
	if p.Key == "" {
		return loc + p.Msg
	}
	return fmt.Sprintf("%s%s: %s", loc, p.Key, p.Msg)
}

// Error lists every problem found in a manifest. The CLI maps it to exit
// code 2.
type Error struct {
	Path     string
	Problems []Problem
}

// ExitCode implements exitcode.Coder: a manifest problem is exit code 2.
func (e *Error) ExitCode() int { return exitcode.Usage }

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: invalid manifest (%d problem", e.Path, len(e.Problems))
	if len(e.Problems) != 1 {
		b.WriteString("s")
	}
	b.WriteString(")")
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// valueText renders a decoded TOML scalar as the text the server and the
// engine read. Durations and sizes stay as written.
func valueText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	}
	return "", false
}

func typeName(v any) string {
	switch v.(type) {
	case map[string]any:
		return "table"
	case []any, []map[string]any:
		return "array"
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	}
	return fmt.Sprintf("%T", v)
}

// ParseDuration reads a duration written as "30s", "5m", "1m30s" or a bare
// number of seconds.
func ParseDuration(v any) (time.Duration, error) {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return 0, fmt.Errorf("%d is negative", x)
		}
		if x > int64(math.MaxInt64/time.Second) {
			return 0, fmt.Errorf("%d seconds is too long", x)
		}
		return time.Duration(x) * time.Second, nil
	case float64:
		if x != x || x > float64(math.MaxInt64)/float64(time.Second) {
			return 0, fmt.Errorf("%g is not a usable number of seconds", x)
		}
		if x < 0 {
			return 0, fmt.Errorf("%g is negative", x)
		}
		return time.Duration(x * float64(time.Second)), nil
	case string:
		// Bare seconds ("30", "0.5") or a Go duration ("30s", "1m30s"), as
		// the engine's own options read them.
		return oltp.ParseSeconds(x)
	}
	return 0, fmt.Errorf("want a duration such as \"30s\", got a %s", typeName(v))
}
