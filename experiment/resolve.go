package experiment

import (
	"regexp"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/catalog"
	"benchmatrix/engine"
)

// Defaults for keys a manifest leaves out.
const (
	DefaultDuration = 30 * time.Second
	DefaultWarmup   = 5 * time.Second
	// AutoPilot is what the first round of duration = "auto" measures;
	// MinAutoDuration and DefaultDurationCap bound the length chosen.
	AutoPilot          = 5 * time.Second
	MinAutoDuration    = 2 * time.Second
	DefaultDurationCap = time.Minute
	// DefaultWarmupCap bounds warmup = "auto".
	DefaultWarmupCap = 2 * time.Minute
	// DefaultDrainCap bounds the wait for dirty pages between cells.
	DefaultDrainCap = time.Minute
	// DefaultSchema is the database the workload's tables live in.
	DefaultSchema = "sbtest"
)

// defaults is the manifest every file is decoded onto: each default is
// written here and nowhere else. Defaults that depend on other keys or on
// flags (the Docker image, the warm-up cap) are settled in Resolve.
func defaults() *Manifest {
	return &Manifest{
		Duration: DefaultDuration,
		Warmup:   DefaultWarmup,
		Repeats:  1,
		Order:    Grouped,
		Policy:   Policy{Drain: true, Observe: true, DrainCap: DefaultDrainCap},
		Server:   ServerSpec{Provider: catalog.DefaultProvider, Schema: DefaultSchema},
	}
}

var unsafeNameRE = regexp.MustCompile(`[^A-Za-z0-9_.\-]+`)

// Flags are the run command's overrides and what a stored run brings back;
// the zero value changes nothing.
type Flags struct {
	Duration *time.Duration // --duration
	// Warmup (--warmup) is a fixed warm-up for every cell; it also turns
	// warmup = "auto" off.
	Warmup   *time.Duration
	Repeats  int    // --repeats, 0 = the manifest's
	Provider string // --provider
	DSN      string // --dsn
	// DSNs are --dsn given more than once: the nodes of a topology on
	// the external provider, node 1 (the primary) first.
	DSNs    []string
	Observe *bool // --observe on|off
	// Until, MaxRepeats and Budget are --until, --max-repeats and --budget
	// (until.go); zero values change nothing.
	Until      string
	MaxRepeats int
	Budget     *time.Duration
	// Seed is the shuffle seed of a run being resumed or rerun.
	Seed int64
	// Rerun is the plan of a stored run being run again: its cells keep
	// the durations they ran with, unless --duration or --warmup say
	// otherwise.
	Rerun []Cell
	// Flavor is the server's flavor when it is known before the server
	// starts (the sandbox's binary says); restart decisions are then exact,
	// else variables restart-only on one flavor only depend on it.
	Flavor catalog.Flavor
	// Version is the server's version when it is known before the server
	// starts (with Flavor): MySQL's restart rules and variables are per
	// version, and a variable the version lacks is refused here.
	Version string
	// Columns are the intervals.csv columns benchmatrix writes itself (the
	// workload's, the sampler's, the nodes'): runner.Resolve gives them, and
	// an [[observe.metric]] may not take one of their names.
	Columns []string
}

// Resolve turns defaults → manifest → flags (→ a stored run) into the
// immutable plan: a resolved copy of the manifest, its cells in order and
// what each change costs. Every problem is reported at once, with its key
// and line, in one *Error.
func Resolve(parsed *Manifest, f Flags) (*Plan, error) {
	m := *parsed // the caller's manifest stays as decoded
	d := &decoder{lines: m.lines, order: m.set}
	if f.Provider != "" {
		if _, err := catalog.Lookup(f.Provider); err != nil {
			d.problems = append(d.problems, Problem{Key: "--provider", Msg: err.Error()})
		}
		m.Server.Provider = catalog.ProviderName(f.Provider)
	}
	if f.DSN != "" {
		m.Server.DSN, m.Server.DSNs = f.DSN, nil
	}
	if len(f.DSNs) > 0 {
		m.Server.DSN, m.Server.DSNs = "", append([]string(nil), f.DSNs...)
	}
	d.nodeDSNs(&m) // topology.go
	if f.Repeats < 0 {
		d.problems = append(d.problems, Problem{Key: "--repeats", Msg: "must be at least 1"})
	} else if f.Repeats > 0 {
		m.Repeats = f.Repeats
	}
	d.applyUntil(&m, f) // until.go
	if f.Duration != nil {
		m.Duration, m.Policy.DurationAuto = *f.Duration, false
	}
	if m.Policy.DurationAuto {
		m.Duration = AutoPilot
		if m.Policy.DurationCap == 0 {
			m.Policy.DurationCap = DefaultDurationCap
		}
	}
	if f.Warmup != nil {
		m.Warmup, m.Policy.WarmupAuto = *f.Warmup, false
	}
	if f.Observe != nil {
		m.Policy.Observe = *f.Observe
	}
	if f.Seed != 0 {
		m.Seed = f.Seed
	}
	if m.Name == "" {
		// From the file name, made a safe directory name.
		m.Name = unsafeNameRE.ReplaceAllString(strings.TrimSuffix(baseName(m.Path), ".toml"), "-")
		if !experimentNameRE.MatchString(m.Name) {
			m.Name = "experiment"
		}
	}
	if m.Policy.WarmupAuto {
		m.Warmup = 0
		if m.Policy.WarmupCap == 0 {
			m.Policy.WarmupCap = DefaultWarmupCap
		}
	}
	d.schemaFromDSN(&m)
	prov := catalog.Provider(m.Server.Provider)
	if m.Server.Image == "" {
		m.Server.Image = prov.DefaultImage
	}
	d.validate(&m, prov)
	d.validateMetricNames(&m, f.Columns) // topology.go
	if len(d.problems) > 0 {
		return nil, &Error{Path: m.Path, Problems: sortProblems(d.problems)}
	}
	d.validateMySQL(&m, catalog.TargetOf(f.Flavor, f.Version)) // mysql.go
	if len(d.problems) > 0 {
		return nil, &Error{Path: m.Path, Problems: sortProblems(d.problems)}
	}
	plan, err := expand(&m, catalog.TargetOf(f.Flavor, f.Version))
	if err != nil {
		return nil, &Error{Path: m.Path, Problems: []Problem{expandProblem(d, err)}}
	}
	d.validatePlan(&m, plan)
	if len(d.problems) > 0 {
		return nil, &Error{Path: m.Path, Problems: sortProblems(d.problems)}
	}
	if f.Rerun != nil && f.Duration == nil && f.Warmup == nil {
		for i := range plan.Cells {
			if i < len(f.Rerun) {
				old := f.Rerun[i].Workload.Common()
				plan.Cells[i].Workload = plan.Cells[i].Workload.With(func(c *engine.Common) { c.Time, c.Warmup = old.Time, old.Warmup })
			}
		}
	}
	return plan, nil
}

// expandProblem points an expansion error at the key it comes from.
func expandProblem(d *decoder, err error) Problem {
	key := ""
	switch msg := err.Error(); {
	case strings.Contains(msg, "zip"):
		key = "experiment.zip"
	case strings.Contains(msg, "named"):
		key = "experiment.cell_name"
	}
	return Problem{Key: key, Line: d.line(key), Msg: err.Error()}
}

// Capability errors name the provider and what asked for the capability.
func (d *decoder) needs(prov catalog.Descriptor, c catalog.Capability, key, what string) {
	if !prov.Caps.Has(c) {
		e := &catalog.MissingError{Provider: prov.Name, Need: c, For: what}
		d.problem(key, "%v", e)
	}
}

// dsnProblem says what is wrong with a DSN the driver cannot read, naming
// its form (the driver's "default addr for network '127.0.0.1:3306'
// unknown" means the address lacks tcp(...)), never its password.
func dsnProblem(err error) string {
	return "not a DSN such as \"bench@tcp(db1:3306)/sbtest\" (user[:password]@tcp(host:port)/schema): " + Redact(err.Error())
}

// schemaFromDSN: a DSN naming a database (user@tcp(h)/shop) means that
// schema, unless [server] schema names another, which is a problem rather
// than a silent choice.
func (d *decoder) schemaFromDSN(m *Manifest) {
	if m.Server.DSN == "" {
		return
	}
	c, err := mysql.ParseDSN(m.Server.DSN)
	if err != nil {
		key := "server.dsn"
		if !d.isSet(key) {
			key = "--dsn" // not the manifest's: the flag's
		}
		d.problem(key, "%s", dsnProblem(err))
		return
	}
	if c.DBName == "" {
		return
	}
	switch {
	case !d.isSet("server.schema"):
		m.Server.Schema = c.DBName
	case c.DBName != m.Server.Schema:
		d.problem("server.schema", "%q, but the DSN names the database %q: say one (the workload's tables go in one schema)", m.Server.Schema, c.DBName)
	}
}
