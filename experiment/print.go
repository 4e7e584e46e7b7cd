package experiment

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// PlanEntry is one cell run as `plan --json` prints it.
type PlanEntry struct {
	Name     string            `json:"name"`
	Repeat   int               `json:"repeat"`
	Scenario string            `json:"scenario,omitempty"`
	Params   map[string]string `json:"parameters"`
	Workload string            `json:"workload"`
	Cost     string            `json:"change_cost"`
	Change   Change            `json:"change"`
}

// WriteJSON prints the plan as a JSON array, one object per cell run.
func (p *Plan) WriteJSON(w io.Writer) error {
	out := []PlanEntry{}
	for _, c := range p.Cells {
		params := map[string]string{}
		for _, prm := range c.Params {
			params[prm.Name] = prm.Value
		}
		out = append(out, PlanEntry{c.Name, c.Repeat, c.Scenario, params, c.Workload.Workload(), c.Change.Cost(), c.Change})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// WriteText prints the plan for a person: the cell runs in order, what each
// change costs, and an estimated wall time.
func (p *Plan) WriteText(w io.Writer) error {
	name := ""
	if p.Manifest != nil {
		name = p.Manifest.Name
	}
	fmt.Fprintf(w, "%s: %d cell run(s), order %s", name, len(p.Cells), p.Order)
	if p.Order == Shuffled {
		fmt.Fprintf(w, " (seed %d)", p.Seed)
	}
	fmt.Fprintf(w, ", estimated %s\n", p.Estimate().Round(time.Second))
	if p.Manifest != nil && p.Manifest.Conclusive() {
		fmt.Fprintln(w, p.untilText()) // until.go
	}
	if p.Flavor != "" {
		fmt.Fprintf(w, "restarts as on %s (the server's flavor)\n", p.Target())
		for _, n := range p.deprecatedNotes() { // mysql.go
			fmt.Fprintln(w, n)
		}
	} else {
		fmt.Fprintln(w, "flavor not known before the server starts: restart? marks a restart that depends on it")
	}
	for _, c := range p.Cells {
		data, cm := c.Workload.Data(), c.Workload.Common()
		var detail []string
		for _, prm := range c.Change.Restart {
			detail = append(detail, "restart for "+prm.Name+"="+prm.Value)
		}
		for _, prm := range c.Change.Depends {
			detail = append(detail, "restart for "+prm.Name+"="+prm.Value+" on some flavors")
		}
		if c.Change.Cold {
			detail = append(detail, "restart for a cold start")
		}
		for _, prm := range c.Change.Dynamic {
			detail = append(detail, "set "+prm.Name+"="+prm.Value)
		}
		for _, prm := range c.Change.Reset {
			detail = append(detail, "put back "+prm.Name+" (the server's own value)")
		}
		switch {
		case c.Change.Reload && len(data.Tables) == 0:
			detail = append(detail, c.Workload.Workload()+" creates its own tables")
		case c.Change.Reload && data.Empty:
			detail = append(detail, fmt.Sprintf("create %d empty table(s) (%s)", len(data.Tables), c.Change.Reason))
		case c.Change.Reload:
			load := fmt.Sprintf("load %dx%d rows (%s", len(data.Tables), data.RowsPerTable, c.Change.Reason)
			if cd, ok := p.cached(c); ok {
				load += fmt.Sprintf("; in the data cache: entry %s, %.1f GiB, restored instead", cd.Entry, float64(cd.Bytes)/(1<<30))
			}
			detail = append(detail, load+")")
		}
		if t := c.sloPlanText(); t != "" { // slo.go
			detail = append(detail, t)
		}
		if _, err := fmt.Fprintf(w, "%3d  %-36s #%d  %-14s %s, %d thread(s), %s + %s warm-up; %s\n", c.Index+1, c.Name, c.Repeat,
			c.Change.Cost(), c.Workload.Workload(), cm.Threads, cm.Time, cm.Warmup, strings.Join(detail, "; ")); err != nil {
			return err
		}
	}
	return nil
}
