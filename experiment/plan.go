package experiment

import (
	"fmt"
	"strings"
	"time"

	"benchmatrix/oltp"
)

// Defaults for keys a manifest leaves out.
const (
	DefaultDuration = 30 * time.Second
	DefaultWarmup   = 5 * time.Second
)

// Cell is one run of the workload under one combination of parameters.
type Cell struct {
	Index    int    `json:"index"` // position in the run order, from 0
	Name     string `json:"name"`  // scenario and axis values, e.g. "b1e1/threads=8"
	Scenario string `json:"scenario,omitempty"`
	// Params are the parameters that vary across the matrix for this cell:
	// the scenario's, then the axes', in manifest order.
	Params []Param `json:"params"`
	Repeat int     `json:"repeat"` // from 1
	// Workload is the engine's full option set for this cell.
	Workload oltp.Options `json:"workload"`
	// Server holds the server variables this cell sets (scenario and axes);
	// [server.config] is in the manifest and applies to every cell.
	Server []Param `json:"server"`
}

// Key identifies the cell's parameter combination, without the repeat.
func (c Cell) Key() string { return c.Name }

// Plan is the ordered list of cell runs a manifest expands to.
type Plan struct {
	Manifest *Manifest `json:"-"`
	// Columns names the parameters that vary, in manifest order; every
	// cell has a value for each (cells.csv has one column per name).
	Columns []string `json:"columns"`
	Cells   []Cell   `json:"cells"`
}

// IsWorkloadKey reports whether a parameter name belongs to the workload
// engine; every other name is a server variable.
func IsWorkloadKey(name string) bool {
	if name == "workload" {
		return true
	}
	_, ok := oltp.CanonicalOption(name)
	return ok
}

// validate checks what needs the whole manifest, and every parameter value
// once, against the engine's option parser.
func (d *decoder) validate(m *Manifest) {
	if m.Name == "" {
		m.Name = strings.TrimSuffix(baseName(m.Path), ".toml")
	}
	if m.Duration == 0 {
		m.Duration = DefaultDuration
	}
	if !d.isSet("experiment.warmup") {
		m.Warmup = DefaultWarmup
	}
	probe := oltp.DefaultOptions()
	check := func(key string, p Param) {
		if !IsWorkloadKey(p.Name) {
			if !varNameRE.MatchString(normalVar(p.Name)) {
				d.problem(key, "%q is neither a workload option nor a server variable name", p.Name)
			}
			return
		}
		o := probe
		if err := o.Set(p.Name, p.Value); err != nil {
			d.problem(key, "%v", err)
		}
	}
	hasWorkload := false
	for _, p := range m.Workload {
		check("workload."+workloadKey(p.Name), p)
		hasWorkload = hasWorkload || p.Name == "workload"
	}
	if !hasWorkload {
		d.problem("workload.name", "missing: say which workload to run (e.g. name = \"oltp_insert\"; known: %s)", strings.Join(oltp.Workloads(), ", "))
	}
	names := map[string]bool{}
	for _, sc := range m.Scenarios {
		names[sc.Name] = true
		for _, p := range sc.Params {
			check("scenarios."+sc.Name+"."+p.Name, p)
		}
	}
	for _, ax := range m.Axes {
		for _, v := range ax.Values {
			check("axes."+ax.Name, Param{Name: ax.Name, Value: v})
		}
	}
	if m.Baseline != "" && !names[m.Baseline] {
		plan, _ := expand(m)
		found := false
		if plan != nil {
			for _, c := range plan.Cells {
				found = found || c.Name == m.Baseline
			}
		}
		if !found {
			known := make([]string, 0, len(m.Scenarios))
			for _, sc := range m.Scenarios {
				known = append(known, sc.Name)
			}
			d.problem("experiment.baseline", "%q is neither a scenario nor a cell (scenarios: %s)", m.Baseline, strings.Join(known, ", "))
		}
	}
	if len(d.problems) > 0 {
		return
	}
	// Whole-cell checks: what only the combination can show.
	plan, err := expand(m)
	if err != nil {
		d.problem("", "%v", err)
		return
	}
	if len(plan.Cells) == 0 {
		d.problem("", "the matrix is empty: no cell to run")
	}
	seen := map[string]bool{}
	for _, c := range plan.Cells {
		if c.Repeat != 1 || seen[c.Name] {
			continue
		}
		seen[c.Name] = true
		if err := c.Workload.Validate(); err != nil {
			d.problem(cellKey(m, c), "cell %s: %v", c.Name, err)
		}
	}
}

func (d *decoder) isSet(key string) bool { _, ok := d.order[key]; return ok }

func workloadKey(name string) string {
	if name == "workload" {
		return "name"
	}
	return name
}

func cellKey(m *Manifest, c Cell) string {
	if c.Scenario != "" {
		return "scenarios." + c.Scenario
	}
	return "workload"
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// Expand turns a validated manifest into its plan: every scenario × every
// combination of axis values (the last axis varying fastest), repeated
// interleaved: all cells once, then all cells again (A B C A B C), so that
// drift over time falls on every cell alike.
func Expand(m *Manifest) (*Plan, error) { return expand(m) }

func expand(m *Manifest) (*Plan, error) {
	scenarios := m.Scenarios
	if len(scenarios) == 0 {
		scenarios = []Scenario{{}}
	}
	p := &Plan{Manifest: m}
	seenCol := map[string]bool{}
	addCol := func(n string) {
		if !seenCol[n] {
			seenCol[n] = true
			p.Columns = append(p.Columns, n)
		}
	}
	for _, sc := range m.Scenarios {
		for _, prm := range sc.Params {
			addCol(prm.Name)
		}
	}
	for _, ax := range m.Axes {
		addCol(ax.Name)
	}

	combos := [][]Param{nil}
	for _, ax := range m.Axes {
		var next [][]Param
		for _, c := range combos {
			for _, v := range ax.Values {
				nc := append(append([]Param(nil), c...), Param{Name: ax.Name, Value: v})
				next = append(next, nc)
			}
		}
		combos = next
	}

	var base []Cell
	for _, sc := range scenarios {
		for _, combo := range combos {
			c := Cell{Scenario: sc.Name}
			params := append(append([]Param(nil), sc.Params...), combo...)
			c.Params = mergeParams(params)
			c.Name = cellName(sc.Name, combo)
			o, err := resolveWorkload(m, c.Params)
			if err != nil {
				return nil, fmt.Errorf("cell %s: %w", c.Name, err)
			}
			c.Workload = o
			for _, prm := range c.Params {
				if !IsWorkloadKey(prm.Name) {
					c.Server = append(c.Server, prm)
				}
			}
			base = append(base, c)
		}
	}
	repeats := m.Repeats
	if repeats < 1 {
		repeats = 1
	}
	for r := 1; r <= repeats; r++ {
		for _, c := range base {
			c.Repeat = r
			c.Index = len(p.Cells)
			p.Cells = append(p.Cells, c)
		}
	}
	return p, nil
}

// mergeParams keeps the last value of each name (an axis overrides the
// scenario), in first-seen order.
func mergeParams(ps []Param) []Param {
	var out []Param
	pos := map[string]int{}
	for _, p := range ps {
		if i, ok := pos[p.Name]; ok {
			out[i] = p
			continue
		}
		pos[p.Name] = len(out)
		out = append(out, p)
	}
	return out
}

func cellName(scenario string, combo []Param) string {
	parts := []string{}
	if scenario != "" {
		parts = append(parts, scenario)
	}
	for _, p := range combo {
		parts = append(parts, p.Name+"="+p.Value)
	}
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, "/")
}

// resolveWorkload builds a cell's engine options: sysbench's defaults, then
// [workload], then the cell's own workload parameters, then the
// experiment's duration and warm-up.
func resolveWorkload(m *Manifest, params []Param) (oltp.Options, error) {
	o := oltp.DefaultOptions()
	o.Time = m.Duration
	o.Warmup = m.Warmup
	o.ReportInterval = time.Second
	for _, ps := range [][]Param{m.Workload, params} {
		for _, p := range ps {
			if !IsWorkloadKey(p.Name) {
				continue
			}
			if err := o.Set(p.Name, p.Value); err != nil {
				return o, err
			}
		}
	}
	return o, nil
}

// Override changes the duration and warm-up of every cell (the run
// command's --duration and --warmup flags).
func (p *Plan) Override(duration, warmup *time.Duration) {
	for i := range p.Cells {
		if duration != nil {
			p.Cells[i].Workload.Time = *duration
		}
		if warmup != nil {
			p.Cells[i].Workload.Warmup = *warmup
		}
	}
}
