package experiment

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/engine"
	"benchmatrix/oltp"
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
	// Workload is the cell's engine and its full option set (workload.go).
	Workload engine.Spec `json:"workload"`
	// Server holds the server variables this cell sets (scenario and axes);
	// [server.config] is in the manifest and applies to every cell.
	Server []Param `json:"server"`
	// Image is the Docker image the cell runs on (provider docker).
	Image string `json:"image,omitempty"`
	// Policy is how the runner treats the cell: prewarm, cold start,
	// automatic warm-up, drain.
	Policy Policy `json:"policy"`
	// Limits are the resource limits the cell runs under (limits.go), from
	// its Machine preset, [server.config] and its own keys.
	Limits  catalog.LimitSet `json:"limits,omitzero"`
	Machine string           `json:"machine,omitempty"`
	// Topology is the servers the cell runs on (topology.go); nil for one.
	Topology *Topology `json:"topology,omitempty"`
	// Change is what the runner does before this cell, given the previous.
	Change Change `json:"change"`
}

// Plan is the ordered list of cell runs a manifest expands to.
type Plan struct {
	Manifest *Manifest `json:"-"`
	// Columns names the parameters that vary, in manifest order; every
	// cell has a value for each (cells.csv has one column per name).
	Columns []string `json:"columns"`
	Cells   []Cell   `json:"cells"`
	Order   Order    `json:"order"`
	Seed    int64    `json:"seed,omitempty"` // the shuffle's seed, to reproduce the order
	// Flavor is the server flavor the changes were computed for; empty
	// when it was not known (see Change.Depends).
	Flavor catalog.Flavor `json:"flavor,omitempty"`
	// Version is the MySQL version the changes were computed for (MySQL's
	// restart rules are per version: catalog.RestartNeed); empty for
	// MariaDB, and when it was not known.
	Version string `json:"server_version,omitempty"`
	// Cached are the data shapes (oltp.DataShape) the data cache already
	// holds for this server binary, found before the run
	// (datacache.MarkCached): such a load is a restore, unless the server's
	// on-disk format turns out to differ from the entry's.
	Cached map[string]CachedData `json:"-"`
}

// CachedData is a data cache entry a load would be restored from.
type CachedData struct {
	Entry string
	Bytes int64
}

// cached is the cache entry a cell's load would come from, if any.
func (p *Plan) cached(c Cell) (CachedData, bool) {
	if !c.Change.Reload || c.Workload.Data().Rows() == 0 || p.Cached == nil {
		return CachedData{}, false
	}
	cd, ok := p.Cached[c.Workload.Data().Shape]
	return cd, ok
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

// expand turns a validated manifest into its plan: every scenario × every
// combination of axis values (the last axis varying fastest; zipped axes
// vary together), minus the excluded cells, repeated interleaved: all cells
// once, then all cells again (A B C A B C), so that drift over time falls on
// every cell alike. Within each round the order is grouped (fewest restarts
// and reloads), as written, or shuffled with a recorded seed.
func expand(m *Manifest, target catalog.Target) (*Plan, error) {
	scenarios := m.Scenarios
	if len(scenarios) == 0 {
		scenarios = []Scenario{{}}
	}
	p := &Plan{Manifest: m, Order: m.Order, Seed: m.Seed, Flavor: target.Flavor, Version: target.Version}
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
			c.Limits, c.Machine = m.cellLimits(c.Params)
			c.Topology = m.cellTopology(c.Params) // topology.go
			for _, prm := range c.Params {
				switch {
				case prm.Name == "prewarm":
					c.Policy.Prewarm, _ = oltp.ParseBool(prm.Value)
				case prm.Name == "cold":
					c.Policy.Cold, _ = oltp.ParseBool(prm.Value)
				case prm.Name == "image":
					c.Image = prm.Value
				case prm.Name == "observe":
					c.Policy.Observe, _ = oltp.ParseBool(prm.Value)
				case IsLimitKey(prm.Name):
					// resource limits, in c.Limits
				case IsProfileKey(prm.Name):
					c.setProfileParam(prm) // profile.go
				case IsSLOKey(prm.Name):
					c.setSLOParam(m, prm) // slo.go
				case IsTopologyKey(prm.Name):
					// in c.Topology (topology.go)
				case !IsWorkloadKey(prm.Name):
					c.Server = append(c.Server, prm)
				}
			}
			base = append(base, c)
		}
	}
	base = p.profileTwins(base) // profile.go
	repeats := m.Repeats
	if repeats < 1 {
		repeats = 1
	}
	var rng *rand.Rand
	if p.Order == Shuffled {
		if p.Seed == 0 {
			p.Seed = time.Now().UnixNano()
		}
		rng = rand.New(rand.NewPCG(uint64(p.Seed), 0x62656e63686d7478))
	}
	if p.Order == Blocked {
		sort.SliceStable(base, func(i, j int) bool { return p.groupKey(base[i]) < p.groupKey(base[j]) })
		for _, c := range base {
			for r := 1; r <= repeats; r++ {
				c.Repeat = r
				c.Index = len(p.Cells)
				p.Cells = append(p.Cells, c)
			}
		}
		p.computeChanges()
		return p, nil
	}
	for r := 1; r <= repeats; r++ {
		round := append([]Cell(nil), base...)
		switch p.Order {
		case Grouped:
			sort.SliceStable(round, func(i, j int) bool { return p.groupKey(round[i]) < p.groupKey(round[j]) })
		case Shuffled:
			rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		}
		if !crossover(m, round, r) { // until.go
			alternateTwins(round, r) // profile.go
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
func (p *Plan) groupKey(c Cell) string {
	return c.Image + "|" + c.Workload.Data().Shape + "|" + p.restartKey(c)
}

// restartKey is the cell's variables that take a value only at start (and
// those that may, on a flavor not known yet).
func (p *Plan) restartKey(c Cell) string {
	var parts []string
	for _, s := range c.Server {
		if p.AtStart(s.Name) {
			parts = append(parts, catalog.VariableName(s.Name)+"="+s.Value)
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// AtStart reports whether the plan sets a variable as a startup option
// (with a restart between cells) rather than with SET GLOBAL: restart-only
// on the plan's flavor and version, or on any of them while they are not
// known. The runner decides with catalog.RestartNeed on the flavor and
// version the server reports, and ForTarget brings the plan in line when
// they differ.
func (p *Plan) AtStart(name string) bool {
	return catalog.RestartNeed(p.Target(), name) != catalog.Dynamic
}

// Target is the server the plan's changes were computed for.
func (p *Plan) Target() catalog.Target { return catalog.TargetOf(p.Flavor, p.Version) }

// Estimate is a rough wall time for the plan: warm-up and measurement of
// every cell, plus restarts and loads at typical rates.
func (p *Plan) Estimate() time.Duration {
	var total time.Duration
	for _, c := range p.Cells {
		if c.Workload.Options == nil {
			continue
		}
		total += c.Workload.Options.Estimate() + c.SLOEstimate() // the engine's guess; slo.go
		if d := c.descriptor(); d != nil && d.RunsToEnd {
			continue // a run that ends by itself makes its own tables
		}
		if c.Policy.WarmupAuto {
			total += c.Policy.WarmupCap / 4 // a guess: steady well before the cap
		}
		if c.Change.Start || len(c.Change.Restart) > 0 || c.Change.Cold {
			total += 2 * time.Second
		}
		if cd, ok := p.cached(c); ok {
			// A restore: the copy (about 1 s per GiB here) and a restart.
			total += time.Second + time.Duration(float64(cd.Bytes)/(1<<30)*float64(time.Second))
		} else if c.Change.Reload {
			rows := c.Workload.Data().Rows()
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
