package record

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"benchmatrix/catalog"
	"benchmatrix/engine"
)

// Param is one key = value, the value kept as text in the form the server
// and the engine read it (experiment.Param).
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Change is what the runner must do before a cell, given the cell before.
type Change struct {
	Start   bool    `json:"start,omitempty"`   // the first cell starts the server
	Restart []Param `json:"restart,omitempty"` // restart-only values that differ
	Dynamic []Param `json:"dynamic,omitempty"` // SET GLOBAL
	// Reset are the variables a cell before SET and this cell does not
	// name, put back to the server's own value (the runner's record; in a
	// plan, the names alone).
	Reset  []Param `json:"reset,omitempty"`
	Reload bool    `json:"reload"`           // data loaded (again)
	Cold   bool    `json:"cold,omitempty"`   // restart for an empty buffer pool
	Reason string  `json:"reason,omitempty"` // why the data is reloaded
	// Depends lists restart-only values whose restart depends on the
	// flavor, not known when planning (a Docker image, an external server).
	Depends []Param `json:"depends_on_flavor,omitempty"`
	// Limits are the resource limits changed live (limits.go); a memory
	// limit that shrinks restarts the server instead (Restart names it).
	Limits []Param `json:"limits,omitempty"`
	// Overrides say where the runner did other than the plan, and why:
	// what it found (a variable the server refused to SET as read-only, a
	// dead server, a fresh server, data that was not there). Empty in a
	// plan.
	Overrides []string `json:"overrides,omitempty"`
}

// MemoryKey is the limit key whose shrinking restarts the server.
const MemoryKey = "memory"

// Cost names the change in one word: start, restart+reload, set, ...
func (ch Change) Cost() string {
	var parts []string
	switch {
	case ch.Start:
		parts = append(parts, "start")
	case len(ch.Restart) > 0 || ch.Cold:
		parts = append(parts, "restart")
	case len(ch.Depends) > 0:
		parts = append(parts, "restart?")
	}
	if ch.Reload {
		parts = append(parts, "reload")
	}
	if len(ch.Limits) > 0 {
		parts = append(parts, "limits")
	}
	if len(ch.Dynamic) > 0 || len(ch.Reset) > 0 {
		parts = append(parts, "set")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "+")
}

// SettingsRestart lists the restart's startup options, without the memory
// limit (whose restart comes with the limits, after the data is loaded).
func (ch Change) SettingsRestart() []Param {
	var out []Param
	for _, p := range ch.Restart {
		if p.Name != MemoryKey {
			out = append(out, p)
		}
	}
	return out
}

// MemoryRestart reports whether the change restarts the server to shrink
// its memory limit.
func (ch Change) MemoryRestart() bool {
	for _, p := range ch.Restart {
		if p.Name == MemoryKey {
			return true
		}
	}
	return false
}

// PlanCell is a planned cell as run.json stores it (the plan's
// experiment.Cell): its identity, workload, limits and change typed, as the
// record's readers need them, and the plan's other fields (server
// variables, image, policy, topology, ...) kept as their JSON, so that a
// stored plan is written back as it was read. experiment.PlanRecord and
// experiment.PlannedCells convert between the two.
type PlanCell struct {
	Index    int              `json:"index"`
	Name     string           `json:"name"`
	Scenario string           `json:"scenario,omitempty"`
	Params   []Param          `json:"params"`
	Repeat   int              `json:"repeat"`
	Workload engine.Spec      `json:"workload"`
	Limits   catalog.LimitSet `json:"limits,omitzero"`
	Change   Change           `json:"change"`
	// rest is every other field of the planned cell, by its JSON name.
	rest map[string]json.RawMessage
}

// planCellFields are the JSON names PlanCell types.
var planCellFields = []string{"index", "name", "scenario", "params", "repeat", "workload", "limits", "change"}

// MarshalJSON writes the typed fields and the rest, in name order.
func (c PlanCell) MarshalJSON() ([]byte, error) {
	type plain PlanCell
	b, err := json.Marshal(plain(c))
	if err != nil || len(c.rest) == 0 {
		return b, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	for k, v := range c.rest {
		if _, typed := all[k]; !typed {
			all[k] = v
		}
	}
	keys := slices.Sorted(maps.Keys(all))
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(all[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads the typed fields and keeps the rest. A plan stored
// before the engines shared one interface had a slap cell's configuration
// beside its workload, under "slap": it goes into the workload's options,
// where the slap engine keeps it now.
func (c *PlanCell) UnmarshalJSON(b []byte) error {
	type plain PlanCell
	*c = PlanCell{}
	if err := json.Unmarshal(b, (*plain)(c)); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for _, k := range planCellFields {
		delete(all, k)
	}
	if legacy, ok := all["slap"]; ok {
		delete(all, "slap")
		if string(legacy) != "null" {
			c.Workload = withField(c.Workload, "slap", legacy)
		}
	}
	if len(all) > 0 {
		c.rest = all
	}
	return nil
}

// withField is an unbound spec's JSON with a field added (if it has none of
// that name).
func withField(s engine.Spec, name string, v json.RawMessage) engine.Spec {
	var w map[string]json.RawMessage
	if err := json.Unmarshal(s.Raw(), &w); err != nil || w == nil {
		return s
	}
	if _, has := w[name]; has {
		return s
	}
	w[name] = v
	b, err := json.Marshal(w)
	if err != nil {
		return s
	}
	return engine.RawSpec(b)
}
