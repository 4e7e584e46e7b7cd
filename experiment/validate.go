package experiment

import (
	"maps"
	"slices"
	"strings"

	"benchmatrix/catalog"
	"benchmatrix/oltp"
)

// RunnerKeys are the parameters that belong to the runner rather than to
// the workload or the server; they can vary as scenario or axis keys.
var RunnerKeys = map[string]bool{"prewarm": true, "cold": true, "image": true, "observe": true}

// IsWorkloadKey reports whether a parameter name belongs to the workload
// engine; every other name is a server variable.
func IsWorkloadKey(name string) bool {
	if RunnerKeys[name] || IsProfileKey(name) || IsSLOKey(name) { // profile.go, slo.go
		return false
	}
	if name == "workload" {
		return true
	}
	return Engines.IsKey(name) // workload.go
}

// validate checks what needs the whole manifest and the flags: every
// parameter value once against the engine's option parser, the provider's
// keys and capabilities, and the names exclude, pivot and cell_name use.
func (d *decoder) validate(m *Manifest, prov catalog.Descriptor) {
	if prov.Name == "" {
		return // an unknown provider is already a problem
	}
	values := m.Server.providerKeys()
	for _, k := range slices.Sorted(maps.Keys(values)) {
		if d.isSet("server."+k) && !prov.Reads(k) {
			d.problem("server."+k, "provider %s does not read it", prov.Name)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(prov.Required)) {
		if values[k] == "" {
			d.problem("server."+k, "%s", prov.Required[k])
		}
	}
	if m.Policy.Cold {
		d.needs(prov, catalog.Restarts, "experiment.cold", "cold = true")
	}
	check := func(key string, p Param) {
		switch {
		case p.Name == "image":
			d.needs(prov, catalog.Images, key, "an image parameter")
		case IsLimitKey(p.Name):
			d.checkLimitParam(m, prov, key, p) // limits.go
		case IsProfileKey(p.Name):
			// validateProfile (profile.go)
		case IsSLOKey(p.Name):
			// validateSLO (slo.go)
		case IsTopologyKey(p.Name):
			d.checkTopologyParam(m, prov, key, p) // topology.go
		case RunnerKeys[p.Name]:
			if b, err := oltp.ParseBool(p.Value); err != nil {
				d.problem(key, "%v", err)
			} else if p.Name == "cold" && b {
				d.needs(prov, catalog.Restarts, key, "cold = true")
			}
		case !IsWorkloadKey(p.Name):
			if !varNameRE.MatchString(normalVar(p.Name)) {
				d.problem(key, "%q is neither a workload option nor a server variable name", p.Name)
			}
		default:
			if err := Engines.CheckKey(p.Name, p.Value); err != nil { // workload.go
				d.problem(key, "%v", err)
			}
		}
	}
	hasWorkload := false
	for _, p := range m.Workload {
		check("workload."+workloadKey(p.Name), p)
		hasWorkload = hasWorkload || p.Name == "workload"
	}
	if !hasWorkload {
		d.problem("workload.name", "missing: say which workload to run (e.g. name = \"oltp_insert\"; known: %s)", strings.Join(Engines.Workloads(), ", "))
	}
	for _, sc := range m.Scenarios {
		for _, p := range sc.Params {
			check("scenarios."+sc.Name+"."+p.Name, p)
		}
	}
	for _, ax := range m.Axes {
		for _, v := range ax.Values {
			check("axes."+ax.Name, Param{Name: ax.Name, Value: v})
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
	scenarios := map[string]bool{}
	for _, sc := range m.Scenarios {
		scenarios[sc.Name] = true
	}
	for _, ex := range m.Exclude {
		for k, v := range ex {
			if !varying[k] {
				d.problem("experiment.exclude."+k, "%q is neither \"scenario\" nor a parameter that varies (a scenario or axis key)", k)
			} else if k == "scenario" && !scenarios[v] {
				d.problem("experiment.exclude.scenario", "%q is not a scenario (it would exclude nothing)", v)
			}
		}
	}
	if m.Duration <= 0 {
		d.problem("experiment.duration", "must be more than 0 (--duration too)")
	}
	d.providerOwns(m, prov)
	if m.Pivot != "" && !varying[m.Pivot] {
		d.problem("experiment.pivot", "%q is neither \"scenario\" nor a parameter that varies", m.Pivot)
	}
	for _, ph := range placeholderRE.FindAllStringSubmatch(m.CellName, -1) {
		if !varying[ph[1]] {
			d.problem("experiment.cell_name", "{%s} is neither {scenario} nor a parameter that varies", ph[1])
		}
	}
	d.validateLimits(m, prov)
	d.validateUntil(m)          // until.go
	d.validateProfile(m, prov)  // profile.go
	d.validateSLO(m)            // slo.go
	d.validateTopology(m, prov) // topology.go
	if n := matrixSize(m); n > MaxCellRuns {
		d.problem("axes", "the matrix has %.3g cell runs (scenarios x axis values x repeats), more than the %d benchmatrix runs; split the experiment", n, MaxCellRuns)
	}
}

// validatePlan checks what only the expanded cells can show: the baseline
// names a scenario or a cell, the matrix is not empty, every cell's option
// set is valid and reads every option given to it.
func (d *decoder) validatePlan(m *Manifest, plan *Plan) {
	if len(plan.Cells) == 0 {
		d.problem("", "the matrix is empty: no cell to run")
	}
	d.validatePlanSLO(plan) // slo.go
	if m.Baseline != "" {
		found := false
		for _, sc := range m.Scenarios {
			found = found || sc.Name == m.Baseline
		}
		for _, c := range plan.Cells {
			found = found || c.Name == m.Baseline
		}
		if !found {
			known := make([]string, 0, len(m.Scenarios))
			for _, sc := range m.Scenarios {
				known = append(known, sc.Name)
			}
			d.problem("experiment.baseline", "%q is neither a scenario nor a cell (scenarios: %s)", m.Baseline, strings.Join(known, ", "))
		}
	}
	d.validateExpect(m, plan)
	d.validateCellLimits(m, plan)
	d.validateCellTopology(m, plan) // topology.go
	d.validateTopologyKeys(m, plan)
	d.validateEqualWorkloads(m, plan) // equal.go
	d.validateEventTimes(m, plan)
	seen := map[string]bool{}
	reported := map[string]bool{}
	for _, c := range plan.Cells {
		if c.Repeat != 1 || seen[c.Name] {
			continue
		}
		seen[c.Name] = true
		if err := validateCell(c); err != nil { // workload.go
			d.problem(cellKey(c), "cell %s: %v", c.Name, err)
		}
		// An option the cell's workload does not read is a mistake.
		check := func(key string, p Param) {
			if p.Name == "workload" || !IsWorkloadKey(p.Name) || reported[key] {
				return
			}
			if ok, only := optionApplies(p.Name, c); !ok { // workload.go
				reported[key] = true
				d.problem(key, "%s does not read %s (only %s do)", c.Workload.Workload(), p.Name, strings.Join(only, ", "))
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

func cellKey(c Cell) string {
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

// providerOwns refuses server variables the provider sets itself (the
// sandbox's datadir, port, socket, loopback bind address, ...): a manifest
// cannot move them, and must not make a sandbox listen beyond loopback.
func (d *decoder) providerOwns(m *Manifest, prov catalog.Descriptor) {
	check := func(key, name string) {
		if why, ok := prov.Owns[catalog.VariableName(name)]; ok {
			d.problem(key, "provider %s sets %s itself: %s", prov.Name, catalog.VariableName(name), why)
		}
	}
	for _, p := range m.Server.Config {
		check("server.config."+p.Name, p.Name)
	}
	for _, sc := range m.Scenarios {
		for _, p := range sc.Params {
			check("scenarios."+sc.Name+"."+p.Name, p.Name)
		}
	}
	for _, ax := range m.Axes {
		check("axes."+ax.Name, ax.Name)
	}
}

// providerKeys are the [server] keys that only some providers read, with
// their values (after the flags).
func (s ServerSpec) providerKeys() map[string]string {
	return map[string]string{"binary": s.Binary, "tmpdir": s.TempDir, "image": s.Image, "dsn": s.DSN,
		"dsns": strings.Join(s.DSNs, " "), "cache": s.Cache, "cache_size": s.CacheSize} // cache.go
}
