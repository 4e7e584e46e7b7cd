package experiment

import (
	"benchmatrix/catalog"
	"benchmatrix/record"
)

// Change is what the runner must do before a cell, given the cell before
// (record.Change: run.json stores it, with the runner's overrides).
type Change = record.Change

// Between is the change before cell c, given the cell the server ran
// before (nil: none, the server is new) and, per variable, whether it
// takes a value only at start on the server at hand (catalog.RestartNeed,
// plus what the runner has found out). It is the only place that decides
// what happens between two cells: plan computes every cell's change with
// it, and the runner carries out the change it returns for the cell it ran
// last.
func Between(prev *Cell, c *Cell, need func(name string) catalog.Need) Change {
	atStart := func(name string) bool { return need(name) != catalog.Dynamic }
	var ch Change
	if prev == nil || c.Image != prev.Image || c.Topology.Key() != prev.Topology.Key() { // topology.go
		ch.Start, ch.Reload, ch.Reason = true, true, "first load"
		if prev != nil {
			ch.Reason = "new server (image " + c.Image + ")"
			if c.Topology.Key() != prev.Topology.Key() {
				ch.Reason = "new topology (" + c.Topology.Key() + ")" // topology.go
			}
		}
	} else {
		ch.Cold = c.Policy.Cold
		for _, s := range StartChanges(prev.Server, c.Server, atStart) {
			switch need(s.Name) {
			case catalog.Restart:
				ch.Restart = append(ch.Restart, s)
			case catalog.Depends:
				ch.Depends = append(ch.Depends, s)
			}
		}
		if lc, shrink := LimitChanges(prev.Limits, c.Limits); shrink {
			ch.Restart = append(ch.Restart, Param{Name: record.MemoryKey, Value: c.Limits.Get(record.MemoryKey)})
		} else {
			ch.Limits = lc
		}
		switch {
		case c.Workload.Data().Shape != prev.Workload.Data().Shape:
			ch.Reload, ch.Reason = true, "data shape changed"
		case prev.Workload.Data().Changes:
			ch.Reload, ch.Reason = true, prev.Workload.Workload()+" changed the data"
		}
	}
	named := map[string]bool{}
	for _, s := range c.Server {
		named[catalog.VariableName(s.Name)] = true
		if !atStart(s.Name) {
			ch.Dynamic = append(ch.Dynamic, s)
		}
	}
	if prev != nil && !ch.Start {
		// A value SET by the cell before stays until put back; a restart
		// puts back the server's own by itself.
		restart := len(ch.Restart) > 0 || ch.Cold
		for _, s := range prev.Server {
			if n := catalog.VariableName(s.Name); !named[n] && !atStart(s.Name) && !restart {
				ch.Reset = append(ch.Reset, Param{Name: n})
				named[n] = true
			}
		}
	}
	return ch
}

// ForTarget is the plan with every cell's change computed for the flavor
// and version the server turned out to be, so that the stored plan says
// what the run does. The plan itself does not change.
func (p *Plan) ForTarget(t catalog.Target) *Plan {
	if t == p.Target() {
		return p
	}
	q := *p
	q.Cells = append([]Cell(nil), p.Cells...)
	q.Flavor, q.Version = t.Flavor, t.Version
	q.computeChanges()
	return &q
}

// computeChanges sets every cell's change with Between, in plan order.
func (p *Plan) computeChanges() {
	need := func(name string) catalog.Need { return catalog.RestartNeed(p.Target(), name) }
	for i := range p.Cells {
		var prev *Cell
		if i > 0 {
			prev = &p.Cells[i-1]
		}
		p.Cells[i].Change = Between(prev, &p.Cells[i], need)
	}
}

// DefaultValue stands for a startup option a cell leaves out that the cell
// before set: the server starts again with its own default.
const DefaultValue = "(default)"

// StartChanges lists the startup options (those atStart says) that differ
// between the settings a server runs with and those wanted: each wanted
// value that is new or different, and each old one left out, as
// DefaultValue. plan and the runner name a restart's cause with it.
func StartChanges(have, want []Param, atStart func(string) bool) []Param {
	old := map[string]string{}
	for _, s := range have {
		if atStart(s.Name) {
			old[catalog.VariableName(s.Name)] = s.Value
		}
	}
	var out []Param
	for _, s := range want {
		if !atStart(s.Name) {
			continue
		}
		n := catalog.VariableName(s.Name)
		if v, ok := old[n]; !ok || v != s.Value {
			out = append(out, s)
		}
		delete(old, n)
	}
	for _, s := range have {
		if _, gone := old[catalog.VariableName(s.Name)]; gone {
			out = append(out, Param{Name: s.Name, Value: DefaultValue})
		}
	}
	return out
}
