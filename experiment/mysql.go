package experiment

import (
	"fmt"
	"sort"

	"benchmatrix/catalog"
)

// validateMySQL refuses, before anything starts, what the MySQL version
// the plan targets cannot take (the sandbox's binary said which it is): a
// version with no catalogue, and each server variable of [server.config],
// a scenario or an axis that the version lacks, removed, sets itself, or
// whose value it does not accept, naming what to set instead
// (catalog.MySQLLookup, the table the server renames its options with).
// Nothing is checked when the flavor or version is not known yet: the
// server refuses the same at start.
func (d *decoder) validateMySQL(m *Manifest, t catalog.Target) {
	if t.Flavor != catalog.MySQL || t.Version == "" {
		return
	}
	v, err := catalog.CheckMySQLVersion(t.Version)
	if err != nil {
		d.problem("server.binary", "%v", err)
		return
	}
	check := func(key string, p Param) {
		if !isServerVariable(p.Name) {
			return
		}
		if _, err := catalog.MySQLLookup(v, p.Name, p.Value); err != nil {
			d.problem(key, "%v", err)
		}
	}
	for _, p := range m.Server.Config {
		check("server.config."+p.Name, p)
	}
	for _, sc := range m.Scenarios {
		for _, p := range sc.Params {
			check("scenarios."+sc.Name+"."+p.Name, p)
		}
	}
	for _, ax := range m.Axes {
		if !isServerVariable(ax.Name) {
			continue
		}
		for _, val := range ax.Values {
			// One problem per axis: the first value refused (a removed
			// variable refuses every value).
			if _, err := catalog.MySQLLookup(v, ax.Name, val); err != nil {
				d.problem("axes."+ax.Name, "%v", err)
				break
			}
		}
	}
}

// isServerVariable reports whether a parameter is a server variable: not
// a workload option, a runner, limit, profile, SLO or topology key.
func isServerVariable(name string) bool {
	return name != "image" && !IsLimitKey(name) && !IsProfileKey(name) && !IsSLOKey(name) &&
		!IsTopologyKey(name) && !RunnerKeys[name] && !IsWorkloadKey(name)
}

// deprecatedNotes name the variables the plan sets that the MySQL version
// it targets has deprecated: still taken, but a later version may remove
// them (catalog.MySQLLookup).
func (p *Plan) deprecatedNotes() []string {
	t := p.Target()
	v, err := catalog.ParseMySQLVersion(t.Version)
	if t.Flavor != catalog.MySQL || err != nil {
		return nil
	}
	var params []Param
	if p.Manifest != nil {
		params = append(params, p.Manifest.Server.Config...)
	}
	for _, c := range p.Cells {
		params = append(params, c.Server...)
	}
	seen := map[string]bool{}
	var out []string
	for _, prm := range params {
		n := catalog.VariableName(prm.Name)
		if seen[n] || !isServerVariable(prm.Name) {
			continue
		}
		seen[n] = true
		if s, err := catalog.MySQLLookup(v, n, ""); err == nil && s.Deprecated != "" {
			out = append(out, fmt.Sprintf("note: %s is deprecated in MySQL %s (the server is %s): taken, but a later version may remove it", n, s.Deprecated, v))
		}
	}
	sort.Strings(out)
	return out
}
