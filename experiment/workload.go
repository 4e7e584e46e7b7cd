package experiment

import (
	"encoding/json"
	"fmt"
	"slices"

	"benchmatrix/engine"
	"benchmatrix/record"
	"benchmatrix/workloads"
)

// The workload of a cell is one engine's (workloads/ lists them): the
// [workload] table's name (or a cell's own workload parameter) picks the
// engine, whose descriptor says which keys it reads, checks their values
// and resolves a cell's options from them. decode.go and IsWorkloadKey
// accept the keys of every engine; validate checks a value with
// engine.Registry.CheckKey and a cell with its options' Check and the
// descriptor's Applies; expand resolves each cell with resolveWorkload.

// Engines are the engines a manifest may name.
var Engines = workloads.Engines

// SlapWorkload is the slap workload's name.
const SlapWorkload = "slap"

// workloadName is a cell's workload (the cell's own workload parameter
// wins over [workload]'s).
func workloadName(m *Manifest, params []Param) string {
	name := ""
	for _, ps := range [][]Param{m.Workload, params} {
		for _, p := range ps {
			if p.Name == "workload" {
				name = p.Value
			}
		}
	}
	return name
}

// resolveWorkload builds a cell's workload: its engine's defaults, then
// [workload], then the cell's own workload parameters, then the
// experiment's duration and warm-up.
func resolveWorkload(m *Manifest, params []Param) (engine.Spec, error) {
	name := workloadName(m, params)
	d, ok := Engines.ForWorkload(name)
	if !ok {
		if err := Engines.CheckKey("workload", name); err != nil {
			return engine.Spec{}, err
		}
		return engine.Spec{}, fmt.Errorf("unknown workload %q", name)
	}
	var settings []engine.Setting
	for _, ps := range [][]Param{m.Workload, params} {
		for _, p := range ps {
			if IsWorkloadKey(p.Name) {
				settings = append(settings, engine.Setting{Key: p.Name, Value: p.Value})
			}
		}
	}
	o, err := d.Resolve(name, settings, m.Duration, m.Warmup)
	if err != nil {
		return engine.Spec{}, err
	}
	return engine.Spec{Engine: d.Name, Options: o}, nil
}

// descriptor is the engine of a resolved cell.
func (c *Cell) descriptor() *engine.Descriptor {
	d, _ := Engines.Of(c.Workload)
	return d
}

// Engine is the descriptor of the cell's engine (nil for a cell without a
// workload).
func (c *Cell) Engine() *engine.Descriptor { return c.descriptor() }

// validateCell checks a cell's options.
func validateCell(c Cell) error {
	if c.Workload.Options == nil {
		return fmt.Errorf("no workload")
	}
	return c.Workload.Options.Check()
}

// optionApplies reports whether the cell's workload reads a workload
// option, and if not, which workloads do.
func optionApplies(name string, c Cell) (bool, []string) {
	d := c.descriptor()
	if d == nil {
		return false, nil
	}
	if !d.IsKey(name) {
		var only []string
		for _, e := range Engines {
			if e.IsKey(name) {
				only = append(only, e.Workloads...)
			}
		}
		return false, only
	}
	return d.Applies(name, c.Workload.Options)
}

// UnmarshalJSON reads a cell of a stored plan, binding its workload to its
// engine.
func (c *Cell) UnmarshalJSON(b []byte) error {
	type plain Cell
	if err := json.Unmarshal(b, (*plain)(c)); err != nil {
		return err
	}
	if err := Engines.Bind(&c.Workload); err != nil {
		return fmt.Errorf("plan cell %s: %w", c.Name, err)
	}
	return nil
}

// PlanRecord is the plan's cells as run.json stores them.
func PlanRecord(cells []Cell) []record.PlanCell {
	out := make([]record.PlanCell, len(cells))
	for i, c := range cells {
		// PlanCell keeps what it does not type, as JSON: a value JSON
		// cannot carry is written as 0 there (record.Finite); the typed
		// fields keep theirs, for the record's own check to name.
		cc := c
		cc.Workload = engine.Spec{}
		cc.Params, cc.Server = slices.Clone(c.Params), slices.Clone(c.Server)
		record.Finite(&cc)
		b, err := json.Marshal(cc)
		if err == nil {
			err = json.Unmarshal(b, &out[i])
		}
		if err != nil { // not reached: every field of a Cell marshals
			out[i] = record.PlanCell{Index: c.Index, Name: c.Name, Scenario: c.Scenario, Repeat: c.Repeat}
		}
		out[i].Params, out[i].Limits, out[i].Change = c.Params, c.Limits, c.Change
		out[i].Workload = c.Workload
	}
	return out
}

// PlannedCells are a stored plan's cells again (a rerun's, a resumed
// run's), their workloads bound to their engines.
func PlannedCells(stored []record.PlanCell) ([]Cell, error) {
	out := make([]Cell, len(stored))
	for i, pc := range stored {
		b, err := json.Marshal(pc)
		if err == nil {
			err = json.Unmarshal(b, &out[i])
		}
		if err != nil {
			return nil, fmt.Errorf("stored plan cell %s: %w", pc.Name, err)
		}
	}
	return out, nil
}
