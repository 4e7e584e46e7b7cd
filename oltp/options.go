package oltp

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Options is everything that defines a workload run, named as sysbench 1.0
// names it (with underscores). The zero value is not useful: start from
// DefaultOptions.
type Options struct {
	Workload string `json:"workload"`

	// Data shape and transaction mix (oltp_common.lua).
	Tables          int    `json:"tables"`
	TableSize       int    `json:"table_size"`
	RangeSize       int    `json:"range_size"`
	PointSelects    int    `json:"point_selects"`
	SimpleRanges    int    `json:"simple_ranges"`
	SumRanges       int    `json:"sum_ranges"`
	OrderRanges     int    `json:"order_ranges"`
	DistinctRanges  int    `json:"distinct_ranges"`
	IndexUpdates    int    `json:"index_updates"`
	NonIndexUpdates int    `json:"non_index_updates"`
	DeleteInserts   int    `json:"delete_inserts"`
	RangeSelects    bool   `json:"range_selects"`
	AutoInc         bool   `json:"auto_inc"`
	SkipTrx         bool   `json:"skip_trx"`
	Secondary       bool   `json:"secondary"`
	CreateSecondary bool   `json:"create_secondary"`
	StorageEngine   string `json:"mysql_storage_engine"`
	RandomPoints    int    `json:"random_points"`    // select_random_points
	NumberOfRanges  int    `json:"number_of_ranges"` // select_random_ranges
	Delta           int    `json:"delta"`            // select_random_ranges
	// ReinsertID is what sysbench lacks: "same" re-inserts the deleted id
	// (sysbench's behaviour); "auto" lets AUTO_INCREMENT assign a new one.
	ReinsertID string `json:"reinsert_id"`
	// Recreate lets prepare drop and recreate sbtestN tables that already
	// exist; without it prepare refuses to touch them (not a sysbench option).
	Recreate bool `json:"recreate,omitempty"`

	// Run control.
	Threads        int           `json:"threads"`
	Time           time.Duration `json:"time"`
	Events         int64         `json:"events"`
	Warmup         time.Duration `json:"warmup_time"`
	Rate           float64       `json:"rate"`
	ReportInterval time.Duration `json:"report_interval"`
	Percentile     float64       `json:"percentile"`
	Histogram      bool          `json:"histogram"`
	// ForcedShutdown is sysbench's --forced-shutdown: how long a run waits,
	// after its time limit (Warmup + Time from the start of the clocks),
	// for the events still in flight. When it runs out, the connections
	// that still have a statement in flight are closed, those events are
	// dropped, and the run returns its result with Result.ForcedShutdown
	// set (shutdown.go). A run stopped earlier through its context waits
	// the same grace from the cancellation. 0 (the default) is off: the run
	// waits for in-flight events however long they take. It has no effect
	// on a run without a time limit unless its context is cancelled.
	// sysbench's --forced-shutdown=0, which cuts at the time limit itself,
	// is 1ns here. Library callers (the runner) set the field directly; it
	// is not an Options.Set key.
	ForcedShutdown time.Duration `json:"forced_shutdown,omitempty"`
	// ReportCheckpoints is sysbench's --report-checkpoints: at each of these
	// times since the clocks started, the run reports the full statistics
	// since the previous checkpoint (a PhaseCheckpoint interval carrying a
	// Result) and starts counting afresh; the final Result then covers
	// only the time after the last checkpoint. Sorted ascending. Like
	// ForcedShutdown, it is set by the command line, not an Options.Set key.
	ReportCheckpoints []time.Duration `json:"report_checkpoints,omitempty"`

	// Random numbers.
	RandType       string  `json:"rand_type"`
	RandSeed       int64   `json:"rand_seed"`
	RandSpecIter   int     `json:"rand_spec_iter"`
	RandSpecPct    float64 `json:"rand_spec_pct"`
	RandSpecRes    float64 `json:"rand_spec_res"`
	RandParetoH    float64 `json:"rand_pareto_h"`
	RandZipfianExp float64 `json:"rand_zipfian_exp"`

	// Protocol and errors.
	PSMode          string   `json:"db_ps_mode"` // auto | disable
	IgnoreErrors    []uint16 `json:"mysql_ignore_errors"`
	IgnoreAllErrors bool     `json:"mysql_ignore_all_errors"`

	// Set by the command line only: numThreads is the legacy scripts'
	// num_threads global on a 0.5-era line (legacy.go), the --num-threads
	// option whatever --threads says (0: Threads); print is where their
	// Lua print goes during a run (nil: nowhere). Unexported: in no
	// fingerprint or JSON.
	numThreads int
	print      io.Writer
}

// DefaultOptions returns sysbench 1.0.20's defaults (reference/sysbench.md
// §1.4), plus benchmatrix's own: reinsert_id = same.
func DefaultOptions() Options {
	return Options{
		Workload:        "oltp_read_write",
		Tables:          1,
		TableSize:       10000,
		RangeSize:       100,
		PointSelects:    10,
		SimpleRanges:    1,
		SumRanges:       1,
		OrderRanges:     1,
		DistinctRanges:  1,
		IndexUpdates:    1,
		NonIndexUpdates: 1,
		DeleteInserts:   1,
		RangeSelects:    true,
		AutoInc:         true,
		CreateSecondary: true,
		StorageEngine:   "innodb",
		RandomPoints:    10,
		NumberOfRanges:  10,
		Delta:           5,
		ReinsertID:      "same",
		Threads:         1,
		Time:            10 * time.Second,
		Percentile:      95,
		RandType:        "special",
		RandSpecIter:    12,
		RandSpecPct:     1,
		RandSpecRes:     75,
		RandParetoH:     0.2,
		RandZipfianExp:  0.8,
		PSMode:          "auto",
		IgnoreErrors:    []uint16{1213, 1020, 1205},
	}
}

// Workloads lists the workload names the engine runs (workloads.go).
func Workloads() []string {
	names := make([]string, 0, len(workloadSpecs))
	for _, w := range workloadSpecs {
		if !w.cliOnly {
			names = append(names, w.Name)
		}
	}
	return names
}

// KnownWorkload reports whether name is a workload the engine runs.
func KnownWorkload(name string) bool {
	_, ok := Spec(name)
	return ok
}

// optionSetter parses one option's value into o.
type optionSetter func(o *Options, v string) error

var optionTable = map[string]optionSetter{
	"workload":          func(o *Options, v string) error { return setWorkload(&o.Workload, v) },
	"tables":            intOpt(func(o *Options) *int { return &o.Tables }, 1),
	"table_size":        intOpt(func(o *Options) *int { return &o.TableSize }, 0),
	"range_size":        intOpt(func(o *Options) *int { return &o.RangeSize }, 1),
	"point_selects":     intOpt(func(o *Options) *int { return &o.PointSelects }, 0),
	"simple_ranges":     intOpt(func(o *Options) *int { return &o.SimpleRanges }, 0),
	"sum_ranges":        intOpt(func(o *Options) *int { return &o.SumRanges }, 0),
	"order_ranges":      intOpt(func(o *Options) *int { return &o.OrderRanges }, 0),
	"distinct_ranges":   intOpt(func(o *Options) *int { return &o.DistinctRanges }, 0),
	"index_updates":     intOpt(func(o *Options) *int { return &o.IndexUpdates }, 0),
	"non_index_updates": intOpt(func(o *Options) *int { return &o.NonIndexUpdates }, 0),
	"delete_inserts":    intOpt(func(o *Options) *int { return &o.DeleteInserts }, 0),
	"range_selects":     boolOpt(func(o *Options) *bool { return &o.RangeSelects }),
	"auto_inc":          boolOpt(func(o *Options) *bool { return &o.AutoInc }),
	"skip_trx":          boolOpt(func(o *Options) *bool { return &o.SkipTrx }),
	"secondary":         boolOpt(func(o *Options) *bool { return &o.Secondary }),
	"create_secondary":  boolOpt(func(o *Options) *bool { return &o.CreateSecondary }),
	"mysql_storage_engine": func(o *Options, v string) error {
		if !identRE(v) {
			return fmt.Errorf("%q is not a storage engine name", v)
		}
		o.StorageEngine = v
		return nil
	},
	"random_points":    intOpt(func(o *Options) *int { return &o.RandomPoints }, 1),
	"number_of_ranges": intOpt(func(o *Options) *int { return &o.NumberOfRanges }, 1),
	"delta":            intOpt(func(o *Options) *int { return &o.Delta }, 0),
	"reinsert_id": func(o *Options, v string) error {
		switch v {
		case "same", "auto":
			o.ReinsertID = v
			return nil
		}
		return fmt.Errorf("%q: want same or auto", v)
	},
	"recreate":        boolOpt(func(o *Options) *bool { return &o.Recreate }),
	"threads":         intOpt(func(o *Options) *int { return &o.Threads }, 1),
	"time":            durOpt(func(o *Options) *time.Duration { return &o.Time }),
	"events":          func(o *Options, v string) error { return setInt64(&o.Events, v, 0) },
	"warmup_time":     durOpt(func(o *Options) *time.Duration { return &o.Warmup }),
	"rate":            floatOpt(func(o *Options) *float64 { return &o.Rate }, 0),
	"report_interval": durOpt(func(o *Options) *time.Duration { return &o.ReportInterval }),
	"percentile": func(o *Options, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || f < 0 || f >= 100.0001 {
			return fmt.Errorf("%q: want a number from 0 to 100", v)
		}
		o.Percentile = f
		return nil
	},
	"histogram": boolOpt(func(o *Options) *bool { return &o.Histogram }),
	"rand_type": func(o *Options, v string) error {
		switch v {
		case "special", "uniform", "gaussian", "pareto", "zipfian":
			o.RandType = v
			return nil
		}
		return fmt.Errorf("%q: want special, uniform, gaussian, pareto or zipfian", v)
	},
	"rand_seed":        func(o *Options, v string) error { return setInt64(&o.RandSeed, v, 0) },
	"rand_spec_iter":   intOpt(func(o *Options) *int { return &o.RandSpecIter }, 1),
	"rand_spec_pct":    floatOpt(func(o *Options) *float64 { return &o.RandSpecPct }, 0),
	"rand_spec_res":    floatOpt(func(o *Options) *float64 { return &o.RandSpecRes }, 0),
	"rand_pareto_h":    floatOpt(func(o *Options) *float64 { return &o.RandParetoH }, 0),
	"rand_zipfian_exp": floatOpt(func(o *Options) *float64 { return &o.RandZipfianExp }, 0),
	"db_ps_mode": func(o *Options, v string) error {
		switch v {
		case "auto", "disable":
			o.PSMode = v
			return nil
		}
		return fmt.Errorf("%q: want auto or disable", v)
	},
	"mysql_ignore_errors": func(o *Options, v string) error {
		o.IgnoreErrors, o.IgnoreAllErrors = nil, false
		for _, f := range strings.Split(v, ",") {
			f = strings.TrimSpace(f)
			switch {
			case f == "":
			case f == "all":
				o.IgnoreAllErrors = true
			case f == "none":
			default:
				n, err := strconv.ParseUint(f, 10, 16)
				if err != nil {
					return fmt.Errorf("%q: want a list of error numbers, all or none", v)
				}
				o.IgnoreErrors = append(o.IgnoreErrors, uint16(n))
			}
		}
		return nil
	},
}

// Aliases accepted for sysbench compatibility.
var optionAliases = map[string]string{
	"num_threads":  "threads",
	"max_time":     "time",
	"max_requests": "events",
	"tx_rate":      "rate",
	"engine":       "mysql_storage_engine",
	"warmup":       "warmup_time",
}

// CanonicalOption returns the canonical option name for name (dashes become
// underscores, aliases resolve) and whether the engine knows it.
func CanonicalOption(name string) (string, bool) {
	n := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
	if a, ok := optionAliases[n]; ok {
		n = a
	}
	_, ok := optionTable[n]
	return n, ok
}

// OptionNames lists every canonical option name, sorted.
func OptionNames() []string {
	return slices.Sorted(maps.Keys(optionTable))
}

// UnknownOptionError names an option the engine does not have.
type UnknownOptionError struct{ Name string }

func (e *UnknownOptionError) Error() string { return fmt.Sprintf("unknown option %q", e.Name) }

// Set parses value into the option called name (sysbench spelling, with
// dashes or underscores; booleans as on/off, true/false, 1/0).
func (o *Options) Set(name, value string) error {
	canon, ok := CanonicalOption(name)
	if !ok {
		return &UnknownOptionError{Name: name}
	}
	if err := optionTable[canon](o, strings.TrimSpace(value)); err != nil {
		return fmt.Errorf("option %s: %w", canon, err)
	}
	return nil
}

// Validate checks combinations that single options cannot.
func (o *Options) Validate() error {
	if !KnownWorkload(o.Workload) {
		return fmt.Errorf("unknown workload %q (known: %s)", o.Workload, strings.Join(Workloads(), ", "))
	}
	if (o.Workload == "select_random_points" || o.Workload == "select_random_ranges") && o.Tables != 1 {
		return fmt.Errorf("%s works on one table only (tables = %d)", o.Workload, o.Tables)
	}
	if o.Threads < 1 {
		return fmt.Errorf("threads must be at least 1 (got %d)", o.Threads)
	}
	if o.Time == 0 && o.Events == 0 {
		return fmt.Errorf("time and events are both 0: the run would never end")
	}
	if o.ForcedShutdown < 0 {
		return fmt.Errorf("forced_shutdown must not be negative (got %v)", o.ForcedShutdown)
	}
	return nil
}

func setWorkload(dst *string, v string) error {
	if w, ok := Spec(v); ok && w.cliOnly { // workload_legacy_parallel_prepare.go
		return fmt.Errorf("workload %q runs only from a command line (--test=.../oltp_legacy/parallel_prepare.lua run): its run creates the tables a cell has already prepared", v)
	}
	if !KnownWorkload(v) {
		return fmt.Errorf("unknown workload %q (known: %s)", v, strings.Join(Workloads(), ", "))
	}
	*dst = v
	return nil
}

func intOpt(field func(*Options) *int, min int) optionSetter {
	return func(o *Options, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%q is not an integer", v)
		}
		if n < min {
			return fmt.Errorf("%d is below the minimum %d", n, min)
		}
		*field(o) = n
		return nil
	}
}

func setInt64(dst *int64, v string, min int64) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not an integer", v)
	}
	if n < min {
		return fmt.Errorf("%d is below the minimum %d", n, min)
	}
	*dst = n
	return nil
}

func floatOpt(field func(*Options) *float64, min float64) optionSetter {
	return func(o *Options, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", v)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%q is not a finite number", v)
		}
		if f < min {
			return fmt.Errorf("%g is below the minimum %g", f, min)
		}
		*field(o) = f
		return nil
	}
}

func boolOpt(field func(*Options) *bool) optionSetter {
	return func(o *Options, v string) error {
		b, err := ParseBool(v)
		if err != nil {
			return err
		}
		*field(o) = b
		return nil
	}
}

// durOpt reads a duration as sysbench does (plain seconds, fractions
// allowed) or in Go form ("1m30s", "500ms").
func durOpt(field func(*Options) *time.Duration) optionSetter {
	return func(o *Options, v string) error {
		d, err := ParseSeconds(v)
		if err != nil {
			return err
		}
		*field(o) = d
		return nil
	}
}

// ParseSeconds reads "10" or "0.5" as seconds, or a Go duration such as "1m".
func ParseSeconds(v string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) || f > float64(math.MaxInt64)/float64(time.Second) {
			return 0, fmt.Errorf("%q is not a usable number of seconds", v)
		}
		if f < 0 {
			return 0, fmt.Errorf("%q is negative", v)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (seconds, or e.g. 30s, 5m)", v)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", v)
	}
	return d, nil
}

func identRE(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// OptionApplies reports whether a workload reads an option, and if not,
// which workloads do. sysbench accepts every oltp_common option for every
// script and ignores the ones a script does not use; manifests are
// stricter, so that a typo'd experiment says so.
func OptionApplies(option, workload string) (bool, []string) {
	canon, _ := CanonicalOption(option)
	var only []string
	for _, w := range workloadSpecs {
		if slices.Contains(w.Reads, canon) {
			if w.Name == workload {
				return true, nil
			}
			only = append(only, w.Name)
		}
	}
	// An option no workload lists is common to all of them.
	return len(only) == 0, only
}
