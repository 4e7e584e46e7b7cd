package experiment

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"
	"time"

	"benchmatrix/oltp"
	"benchmatrix/server"
)

// Defaults for keys a manifest leaves out.
const (
	DefaultDuration = 30 * time.Second
	DefaultWarmup   = 5 * time.Second
	// DefaultWarmupCap bounds warmup = "auto".
	DefaultWarmupCap = 2 * time.Minute
	// DefaultDrainCap bounds the wait for dirty pages between cells.
	DefaultDrainCap = time.Minute
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
	// Image is the Docker image the cell runs on (provider docker).
	Image string `json:"image,omitempty"`
	// Policy is how the runner treats the cell: prewarm, cold start,
	// automatic warm-up, drain.
	Policy Policy `json:"policy"`
	// Change is what the runner does before this cell, given the previous.
	Change Change `json:"change"`
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true", "on", "1", "yes":
		return true, nil
	case "false", "off", "0", "no":
		return false, nil
	}
	return false, fmt.Errorf("%q: want true or false", v)
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
	Order   string   `json:"order"`
	Seed    int64    `json:"seed,omitempty"` // the shuffle's seed, to reproduce the order
}

// IsWorkloadKey reports whether a parameter name belongs to the workload
// engine; every other name is a server variable.
func IsWorkloadKey(name string) bool {
	if RunnerKeys[name] {
		return false
	}
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
	if m.Policy.WarmupAuto {
		if m.Policy.WarmupCap == 0 {
			m.Policy.WarmupCap = DefaultWarmupCap
		}
		m.Warmup = 0
	}
	if !d.isSet("experiment.drain") {
		m.Policy.Drain = true
	}
	if !d.isSet("experiment.observe") {
		m.Policy.Observe = true
	}
	if m.Policy.DrainCap == 0 {
		m.Policy.DrainCap = DefaultDrainCap
	}
	if m.Server.Provider == "docker" && m.Server.Image == "" {
		m.Server.Image = server.DefaultDockerImage
	}
	probe := oltp.DefaultOptions()
	check := func(key string, p Param) {
		if p.Name == "image" {
			if m.Server.Provider != "docker" {
				d.problem(key, "image varies only with [server] provider = \"docker\"")
			}
			return
		}
		if RunnerKeys[p.Name] {
			if _, err := parseBool(p.Value); err != nil {
				d.problem(key, "%v", err)
			}
			return
		}
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
	if len(d.problems) > 0 {
		// What follows expands the matrix, which needs valid values.
		return
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
	varying := map[string]bool{"scenario": true}
	for _, sc := range m.Scenarios {
		for _, p := range sc.Params {
			varying[p.Name] = true
		}
	}
	for _, ax := range m.Axes {
		varying[ax.Name] = true
	}
	for _, ex := range m.Exclude {
		for k := range ex {
			if !varying[k] {
				d.problem("experiment.exclude."+k, "%q is neither \"scenario\" nor a parameter that varies (a scenario or axis key)", k)
			}
		}
	}
	if m.Pivot != "" && !varying[m.Pivot] {
		d.problem("experiment.pivot", "%q is neither \"scenario\" nor a parameter that varies", m.Pivot)
	}
	for _, ph := range placeholderRE.FindAllStringSubmatch(m.CellName, -1) {
		if !varying[ph[1]] {
			d.problem("experiment.cell_name", "{%s} is neither {scenario} nor a parameter that varies", ph[1])
		}
	}
	if n := matrixSize(m); n > MaxCellRuns {
		d.problem("axes", "the matrix has %.3g cell runs (scenarios x axis values x repeats), more than the %d benchmatrix runs; split the experiment", n, MaxCellRuns)
	}
	if len(d.problems) > 0 {
		return
	}
	// Whole-cell checks: what only the combination can show.
	plan, err := expand(m)
	if err != nil {
		key := ""
		switch msg := err.Error(); {
		case strings.Contains(msg, "zip"):
			key = "experiment.zip"
		case strings.Contains(msg, "named"):
			key = "experiment.cell_name"
		}
		d.problem(key, "%v", err)
		return
	}
	if len(plan.Cells) == 0 {
		d.problem("", "the matrix is empty: no cell to run")
	}
	seen := map[string]bool{}
	reported := map[string]bool{}
	for _, c := range plan.Cells {
		if c.Repeat != 1 || seen[c.Name] {
			continue
		}
		seen[c.Name] = true
		if err := c.Workload.Validate(); err != nil {
			d.problem(cellKey(m, c), "cell %s: %v", c.Name, err)
		}
		// An option the cell's workload does not read is a mistake.
		check := func(key string, p Param) {
			if p.Name == "workload" || !IsWorkloadKey(p.Name) || reported[key] {
				return
			}
			if ok, only := oltp.OptionApplies(p.Name, c.Workload.Workload); !ok {
				reported[key] = true
				d.problem(key, "%s does not read %s (only %s do)", c.Workload.Workload, p.Name, strings.Join(only, ", "))
			}
		}
		for _, p := range m.Workload {
			check("workload."+p.Name, p)
		}
		for _, sc := range m.Scenarios {
			if sc.Name == c.Scenario {
				for _, p := range sc.Params {
					check("scenarios."+sc.Name+"."+p.Name, p)
				}
			}
		}
		for _, p := range c.Params {
			if isAxis(m, p.Name) {
				check("axes."+p.Name, p)
			}
		}
	}
}

func isAxis(m *Manifest, name string) bool {
	for _, ax := range m.Axes {
		if ax.Name == name {
			return true
		}
	}
	return false
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

// MaxCellRuns bounds a matrix: beyond it a manifest is almost surely a
// mistake (and would take years to run).
const MaxCellRuns = 100000

// matrixSize counts cell runs before expanding (excludes ignored), in
// floating point so that absurd products do not overflow.
func matrixSize(m *Manifest) float64 {
	n := float64(max(1, len(m.Scenarios))) * float64(max(1, m.Repeats))
	zipped := map[string]bool{}
	for _, g := range m.Zips {
		for i, name := range g {
			if i > 0 {
				zipped[name] = true
			}
		}
	}
	for _, ax := range m.Axes {
		if !zipped[ax.Name] {
			n *= float64(max(1, len(ax.Values)))
		}
	}
	return n
}

// Expand turns a validated manifest into its plan: every scenario × every
// combination of axis values (the last axis varying fastest; zipped axes
// vary together), minus the excluded cells, repeated interleaved: all cells
// once, then all cells again (A B C A B C), so that drift over time falls on
// every cell alike. Within each round the order is grouped (fewest restarts
// and reloads), as written, or shuffled with a recorded seed.
func Expand(m *Manifest) (*Plan, error) { return expand(m) }

func expand(m *Manifest) (*Plan, error) {
	scenarios := m.Scenarios
	if len(scenarios) == 0 {
		scenarios = []Scenario{{}}
	}
	p := &Plan{Manifest: m, Order: m.Order, Seed: m.Seed}
	if p.Order == "" {
		p.Order = "grouped"
	}
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

	combos, err := axisCombos(m)
	if err != nil {
		return nil, err
	}
	var base []Cell
	names := map[string]bool{}
	for _, sc := range scenarios {
		for _, combo := range combos {
			c := Cell{Scenario: sc.Name}
			params := append(append([]Param(nil), sc.Params...), combo...)
			c.Params = mergeParams(params)
			if excluded(m.Exclude, c) {
				continue
			}
			c.Name = cellName(m.CellName, sc.Name, combo, c.Params)
			if names[c.Name] {
				return nil, fmt.Errorf("two cells are both named %q: make cell_name include every varying parameter", c.Name)
			}
			names[c.Name] = true
			o, err := resolveWorkload(m, c.Params)
			if err != nil {
				return nil, fmt.Errorf("cell %s: %w", c.Name, err)
			}
			c.Workload = o
			c.Policy = m.Policy
			c.Image = m.Server.Image
			for _, prm := range c.Params {
				switch {
				case prm.Name == "prewarm":
					c.Policy.Prewarm, _ = parseBool(prm.Value)
				case prm.Name == "cold":
					c.Policy.Cold, _ = parseBool(prm.Value)
				case prm.Name == "image":
					c.Image = prm.Value
				case prm.Name == "observe":
					c.Policy.Observe, _ = parseBool(prm.Value)
				case !IsWorkloadKey(prm.Name):
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
	var rng *rand.Rand
	if p.Order == "shuffled" {
		if p.Seed == 0 {
			p.Seed = time.Now().UnixNano()
		}
		rng = rand.New(rand.NewPCG(uint64(p.Seed), 0x62656e63686d7478))
	}
	for r := 1; r <= repeats; r++ {
		round := append([]Cell(nil), base...)
		switch p.Order {
		case "grouped":
			sort.SliceStable(round, func(i, j int) bool { return groupKey(round[i]) < groupKey(round[j]) })
		case "shuffled":
			rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		}
		for _, c := range round {
			c.Repeat = r
			c.Index = len(p.Cells)
			p.Cells = append(p.Cells, c)
		}
	}
	p.computeChanges()
	return p, nil
}

// axisCombos is the product of the axes, zipped groups counting as one.
func axisCombos(m *Manifest) ([][]Param, error) {
	byName := map[string]Axis{}
	for _, ax := range m.Axes {
		byName[ax.Name] = ax
	}
	zipOf := map[string]int{}
	for gi, g := range m.Zips {
		n := -1
		for _, name := range g {
			ax, ok := byName[name]
			if !ok {
				return nil, fmt.Errorf("zip group %d names %q, which is not an axis", gi+1, name)
			}
			if _, dup := zipOf[name]; dup {
				return nil, fmt.Errorf("axis %q is in two zip groups", name)
			}
			if n >= 0 && len(ax.Values) != n {
				return nil, fmt.Errorf("zip group %d: axes %s must have the same number of values", gi+1, strings.Join(g, ", "))
			}
			n = len(ax.Values)
			zipOf[name] = gi
		}
	}
	combos := [][]Param{nil}
	done := map[int]bool{}
	for _, ax := range m.Axes {
		members := []Axis{ax}
		if gi, ok := zipOf[ax.Name]; ok {
			if done[gi] {
				continue
			}
			done[gi] = true
			members = nil
			for _, name := range m.Zips[gi] {
				members = append(members, byName[name])
			}
		}
		var next [][]Param
		for _, c := range combos {
			for i := range members[0].Values {
				nc := append([]Param(nil), c...)
				for _, mem := range members {
					nc = append(nc, Param{Name: mem.Name, Value: mem.Values[i]})
				}
				next = append(next, nc)
			}
		}
		combos = next
	}
	return combos, nil
}

func excluded(rules []map[string]string, c Cell) bool {
	for _, rule := range rules {
		match := true
		for k, v := range rule {
			got := ""
			if k == "scenario" {
				got = c.Scenario
			} else {
				for _, p := range c.Params {
					if p.Name == k {
						got = p.Value
					}
				}
			}
			if got != v {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// groupKey orders cells so that those sharing loaded data and startup
// options run together.
func groupKey(c Cell) string {
	return c.Image + "|" + DataKey(c.Workload) + "|" + restartKey(c)
}

func restartKey(c Cell) string {
	var parts []string
	for _, p := range c.Server {
		if RestartOnly(p.Name) {
			parts = append(parts, strings.ToLower(p.Name)+"="+p.Value)
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// RestartOnly reports whether a variable needs a restart on MariaDB or
// MySQL; the plan does not know which server will run it.
func RestartOnly(name string) bool {
	return server.RestartOnly(server.MariaDB, name) || server.RestartOnly(server.MySQL, name)
}

// DataKey says what a cell needs loaded: the schema family and every
// option that reshapes the data.
func DataKey(o oltp.Options) string {
	family := "sbtest"
	if o.Workload == "bulk_insert" {
		family = fmt.Sprintf("bulk/%d", o.Threads)
	}
	return fmt.Sprintf("%s tables=%d size=%d auto_inc=%v secondary=%v create_secondary=%v engine=%s empty=%v",
		family, o.Tables, o.TableSize, o.AutoInc, o.Secondary, o.CreateSecondary, strings.ToLower(o.StorageEngine),
		EmptyTables(o))
}

// EmptyTables reports whether prepare creates the tables without rows, as
// sysbench does for oltp_insert with auto_inc off (its ids would collide).
func EmptyTables(o oltp.Options) bool { return o.Workload == "oltp_insert" && !o.AutoInc }

// ChangesData reports whether running the workload changes the amount of
// data, so the next cell must not reuse it.
func ChangesData(o oltp.Options) bool {
	switch o.Workload {
	case "oltp_insert", "bulk_insert", "oltp_delete":
		return true
	case "oltp_read_write", "oltp_write_only", "oltp_legacy":
		return o.ReinsertID == "auto"
	}
	return false
}

// Change is what the runner must do before a cell, given the cell before.
type Change struct {
	Start   bool    `json:"start,omitempty"`   // the first cell starts the server
	Restart []Param `json:"restart,omitempty"` // restart-only values that differ
	Dynamic []Param `json:"dynamic,omitempty"` // SET GLOBAL
	Reload  bool    `json:"reload"`            // data loaded (again)
	Cold    bool    `json:"cold,omitempty"`    // restart for an empty buffer pool
	Reason  string  `json:"reason,omitempty"`  // why the data is reloaded
}

// Cost names the change in one word: start, restart+reload, set, ...
func (ch Change) Cost() string {
	var parts []string
	switch {
	case ch.Start:
		parts = append(parts, "start")
	case len(ch.Restart) > 0 || ch.Cold:
		parts = append(parts, "restart")
	}
	if ch.Reload {
		parts = append(parts, "reload")
	}
	if len(ch.Dynamic) > 0 {
		parts = append(parts, "set")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "+")
}

func (p *Plan) computeChanges() {
	var prev *Cell
	for i := range p.Cells {
		c := &p.Cells[i]
		var ch Change
		if prev == nil || c.Image != prev.Image {
			ch.Start, ch.Reload, ch.Reason = true, true, "first load"
			if prev != nil {
				ch.Reason = "new server (image " + c.Image + ")"
			}
		} else {
			if c.Policy.Cold {
				ch.Cold = true
			}
			if restartKey(*c) != restartKey(*prev) {
				for _, s := range c.Server {
					if RestartOnly(s.Name) {
						ch.Restart = append(ch.Restart, s)
					}
				}
			}
			switch {
			case DataKey(c.Workload) != DataKey(prev.Workload):
				ch.Reload, ch.Reason = true, "data shape changed"
			case ChangesData(prev.Workload):
				ch.Reload, ch.Reason = true, prev.Workload.Workload+" changed the data"
			}
		}
		for _, s := range c.Server {
			if !RestartOnly(s.Name) {
				ch.Dynamic = append(ch.Dynamic, s)
			}
		}
		c.Change = ch
		prev = c
	}
}

// Estimate is a rough wall time for the plan: warm-up and measurement of
// every cell, plus restarts and loads at typical rates.
func (p *Plan) Estimate() time.Duration {
	var total time.Duration
	for _, c := range p.Cells {
		total += c.Workload.Warmup + c.Workload.Time + time.Second
		if c.Policy.WarmupAuto {
			total += c.Policy.WarmupCap / 4 // a guess: steady well before the cap
		}
		if c.Change.Start || len(c.Change.Restart) > 0 || c.Change.Cold {
			total += 2 * time.Second
		}
		if c.Change.Reload {
			rows := int64(c.Workload.Tables) * int64(c.Workload.TableSize)
			total += time.Second + time.Duration(rows/100000)*time.Second
		}
	}
	return total
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

var placeholderRE = regexp.MustCompile(`\{([A-Za-z0-9_\-]+)\}`)

func cellName(template, scenario string, combo, params []Param) string {
	if template != "" {
		return placeholderRE.ReplaceAllStringFunc(template, func(ph string) string {
			key := ph[1 : len(ph)-1]
			if key == "scenario" {
				return scenario
			}
			for _, p := range params {
				if p.Name == key {
					return p.Value
				}
			}
			return ph
		})
	}
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
