package experiment

import (
	"maps"
	"slices"
	"strings"

	"benchmatrix/catalog"
)

// The limit keys (catalog.LimitKeys: disk_write_iops, cpus, memory, ...)
// and machine, which names a preset: a [machines.NAME] table of the
// manifest or a shipped one (catalog.Machines). They go in [server.config]
// (every cell; machine in [server]), in scenarios and as axes. A cell's
// limits are its machine's, then [server.config]'s, then its own keys.

// MachineKey chooses a preset.
const MachineKey = "machine"

// IsLimitKey reports whether a parameter is a limit key or machine.
func IsLimitKey(name string) bool { return name == MachineKey || catalog.IsLimitKey(name) }

// MinServerMemory is what a MariaDB or MySQL server needs beside its buffer
// pool to start and serve a few connections (measured: a 10.11 sandbox with
// a 128 MiB pool holds about 200 MiB after a load; without the pool ~90 MiB).
const MinServerMemory = 128 << 20

// defaultBufferPool is innodb_buffer_pool_size when the manifest leaves it
// out (MariaDB 10.11 and MySQL 8: 128 MiB).
const defaultBufferPool = 128 << 20

// machines decodes the [machines] section: NAME = { key = value, ... }.
func (d *decoder) machines(t map[string]any, m *Manifest) {
	for _, name := range d.keys("machines", t) {
		key := "machines." + name
		mt, ok := t[name].(map[string]any)
		if !ok {
			d.problem(key, "a machine is a table of limits, e.g. [machines.%s] disk_write_iops = 100; got a %s", name, typeName(t[name]))
			continue
		}
		if !cellNameRE.MatchString(name) {
			d.problem(key, "machine names may use letters, digits, '_', '-' and '.'")
		}
		var l catalog.LimitSet
		for _, k := range d.keys(key, mt) {
			p, ok := d.scalar(key+"."+k, k, mt[k])
			if !ok {
				continue
			}
			if !catalog.IsLimitKey(k) {
				d.problem(key+"."+k, "unknown limit (known: %s)", strings.Join(catalog.LimitKeys, ", "))
				continue
			}
			if err := l.Set(k, p.Value); err != nil {
				d.problem(key+"."+k, "%v", err)
			}
		}
		if m.Machines == nil {
			m.Machines = map[string]catalog.LimitSet{}
		}
		m.Machines[name] = l
	}
}

// machine finds a preset: the manifest's own first, then the shipped ones.
func (m *Manifest) machine(name string) (catalog.LimitSet, bool) {
	if l, ok := m.Machines[name]; ok {
		return l, true
	}
	if mc, ok := catalog.LookupMachine(name); ok {
		return mc.Limits, true
	}
	return catalog.LimitSet{}, false
}

func (m *Manifest) machineNames() string {
	names := append(catalog.MachineNames(), slices.Collect(maps.Keys(m.Machines))...)
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// HasLimits reports whether any cell of the manifest may run with limits:
// a machine or a limit key anywhere.
func (m *Manifest) HasLimits() bool {
	if m.Server.Machine != "" || len(m.Server.Limits) > 0 {
		return true
	}
	for _, sc := range m.Scenarios {
		for _, p := range sc.Params {
			if IsLimitKey(p.Name) {
				return true
			}
		}
	}
	for _, ax := range m.Axes {
		if IsLimitKey(ax.Name) {
			return true
		}
	}
	return false
}

// cellLimits is a cell's limits: its machine (a machine param, else
// [server] machine), then [server.config]'s limit keys, then its own.
func (m *Manifest) cellLimits(params []Param) (catalog.LimitSet, string) {
	machine := m.Server.Machine
	for _, p := range params {
		if p.Name == MachineKey {
			machine = p.Value
		}
	}
	l, _ := m.machine(machine)
	for _, ps := range [][]Param{m.Server.Limits, params} {
		for _, p := range ps {
			if catalog.IsLimitKey(p.Name) {
				_ = l.Set(p.Name, p.Value) // validated before expansion
			}
		}
	}
	return l, machine
}

// checkLimitParam validates one limit key or machine given in
// [server.config], a scenario or an axis: its value, the provider's
// capability, and CPUs the machine has.
func (d *decoder) checkLimitParam(m *Manifest, prov catalog.Descriptor, key string, p Param) {
	if p.Name == MachineKey {
		l, ok := m.machine(p.Value)
		if !ok {
			d.problem(key, "unknown machine %q (known: %s)", p.Value, m.machineNames())
			return
		}
		if !l.IsZero() {
			d.needs(prov, catalog.Limits, key, "machine = \""+p.Value+"\"")
		}
		d.checkCPUs(key, l)
		return
	}
	var l catalog.LimitSet
	if err := l.Set(p.Name, p.Value); err != nil {
		d.problem(key, "%v", err)
		return
	}
	d.needs(prov, catalog.Limits, key, p.Name+" = "+p.Value)
	d.checkCPUs(key, l)
}

// checkCPUs refuses CPU lists naming CPUs this machine lacks.
func (d *decoder) checkCPUs(key string, l catalog.LimitSet) {
	for _, list := range []string{l.ServerCPUs, l.ClientCPUs} {
		if list == "" {
			continue
		}
		online, err := catalog.OnlineCPUs()
		if err != nil {
			return // not Linux: the provider refuses the limits anyway
		}
		if err := catalog.CheckCPUs(list, online); err != nil {
			d.problem(key, "%v", err)
		}
	}
}

// validateLimits checks [server] machine, [server.config]'s limit keys and
// the [machines] presets a manifest defines.
func (d *decoder) validateLimits(m *Manifest, prov catalog.Descriptor) {
	if m.Server.Machine != "" {
		d.checkLimitParam(m, prov, "server.machine", Param{Name: MachineKey, Value: m.Server.Machine})
	}
	for _, p := range m.Server.Limits {
		d.checkLimitParam(m, prov, "server.config."+p.Name, p)
	}
	for _, name := range slices.Sorted(maps.Keys(m.Machines)) {
		d.checkCPUs("machines."+name, m.Machines[name])
	}
}

// validateCellLimits refuses a cell whose memory limit is below what its
// server needs to start: the buffer pool plus MinServerMemory.
func (d *decoder) validateCellLimits(m *Manifest, plan *Plan) {
	reported := map[string]bool{}
	for _, c := range plan.Cells {
		if c.Limits.Memory == 0 || c.Repeat != 1 {
			continue
		}
		pool := int64(defaultBufferPool)
		for _, ps := range [][]Param{m.Server.Config, c.Server} {
			for _, p := range ps {
				if normalVar(p.Name) == "innodb_buffer_pool_size" {
					if n, err := catalog.ParseBytes(p.Value); err == nil {
						pool = n
					}
				}
			}
		}
		need := pool + MinServerMemory
		if c.Limits.Memory >= need {
			continue
		}
		key := limitKey(m, c, "memory")
		if reported[key] {
			continue
		}
		reported[key] = true
		d.problem(key, "cell %s: memory = %s is below what the server needs to start: innodb_buffer_pool_size %s plus about %s "+
			"for the server itself (give at least %s, or a smaller innodb_buffer_pool_size)", c.Name,
			catalog.FormatBytes(c.Limits.Memory), catalog.FormatBytes(pool), catalog.FormatBytes(MinServerMemory), catalog.FormatBytes(need))
	}
}

// limitKey names where a cell's limit comes from, for a problem's key and
// line: the axis or scenario that sets it, [server.config], or the machine.
func limitKey(m *Manifest, c Cell, name string) string {
	for _, p := range c.Params {
		if p.Name == name {
			if isAxis(m, name) {
				return "axes." + name
			}
			return "scenarios." + c.Scenario + "." + name
		}
	}
	for _, p := range m.Server.Limits {
		if p.Name == name {
			return "server.config." + name
		}
	}
	if c.Machine != "" {
		if _, own := m.Machines[c.Machine]; own {
			return "machines." + c.Machine + "." + name
		}
		for _, p := range c.Params {
			if p.Name == MachineKey {
				if isAxis(m, MachineKey) {
					return "axes." + MachineKey
				}
				return "scenarios." + c.Scenario + "." + MachineKey
			}
		}
		return "server.machine"
	}
	return name
}

// LimitChanges lists the limit keys whose values differ between two cells
// (the new value, "(none)" for a limit lifted), and whether one of them
// restarts the server (catalog.LimitTable: a memory limit that shrinks).
// Between decides with it between two cells; the runner asks it again of
// the limits actually in force, which a failed cell may have left other
// than the plan's.
func LimitChanges(prev, next catalog.LimitSet) (changes []Param, restart bool) {
	lc, restart := catalog.ChangedLimits(prev, next)
	for _, c := range lc {
		changes = append(changes, Param{Name: c.Name, Value: c.Value})
	}
	return changes, restart
}
