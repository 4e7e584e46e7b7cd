package experiment

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"benchmatrix/capacity"
)

// Capacity at a latency target (issue 30): [experiment] slo = "p99 < 5ms"
// (also a scenario or axis key; "off" turns it off there) makes each cell
// search the highest open-loop rate that meets the target, then confirm it
// with the cell's full-length run. A cell with its own rate is not
// searched: its run is judged against the target. The slo_* keys of
// [experiment] tune the search.

// SLOSpec is a cell's target and how its capacity is searched.
type SLOSpec struct {
	Target capacity.SLO `json:"target"`
	// Start is the first rate tried, Max the highest (0: the defaults).
	Start float64 `json:"start,omitempty"`
	Max   float64 `json:"max,omitempty"`
	// Step is a step's shortest measured window (0: the default).
	Step      time.Duration `json:"step,omitempty"`
	Precision float64       `json:"precision,omitempty"`
	Retests   int           `json:"retests,omitempty"`
	MaxSteps  int           `json:"max_steps,omitempty"`
}

// Config is the search's configuration for a run of the given duration
// (the candidate's retests run that long).
func (s *SLOSpec) Config(duration time.Duration) capacity.Config {
	return capacity.Config{SLO: s.Target, Start: s.Start, Max: s.Max, StepMin: s.Step,
		Precision: s.Precision, Retests: s.Retests, MaxSteps: s.MaxSteps, Confirm: duration}.WithDefaults()
}

// Searches reports whether the cell searches its capacity (an SLO and no
// rate of its own).
func (c *Cell) Searches() bool { return c.Policy.SLO != nil && c.Workload.Common().Rate <= 0 }

// SLOEstimate is the search's share of the cell's estimated time (0 when
// it does not search).
func (c *Cell) SLOEstimate() time.Duration {
	if !c.Searches() {
		return 0
	}
	_, d := c.Policy.SLO.Config(c.Workload.Common().Time).Estimate()
	return d
}

// sloPlanText is what plan prints of a cell's target.
func (c *Cell) sloPlanText() string {
	if c.Policy.SLO == nil {
		return ""
	}
	if !c.Searches() {
		return fmt.Sprintf("judged at %s against %s", capacity.FmtRate(c.Workload.Common().Rate)+"/s", c.Policy.SLO.Target)
	}
	cfg := c.Policy.SLO.Config(c.Workload.Common().Time)
	n, d := cfg.Estimate()
	return fmt.Sprintf("capacity at %s: about %d steps of %s-%s from %s/s, the candidate's %d retests %s each (~%s, at most %d steps), then the run at the capacity found",
		cfg.SLO, n, cfg.StepMin, cfg.StepMax, capacity.FmtRate(cfg.Start), cfg.Retests, max(cfg.StepMin, cfg.Confirm), d.Round(time.Second), cfg.MaxSteps)
}

// IsSLOKey reports whether a scenario or axis key is the target.
func IsSLOKey(name string) bool { return name == "slo" }

// parseSLOValue reads a target, or "off".
func parseSLOValue(s string) (*capacity.SLO, error) {
	if strings.TrimSpace(s) == "off" {
		return nil, nil
	}
	t, err := capacity.ParseSLO(s)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// sloKey decodes one slo key of [experiment].
func (d *decoder) sloKey(key, name string, v any, m *Manifest) {
	spec := m.SLOSearch
	if spec == nil {
		spec = &SLOSpec{}
	}
	num := func() (float64, bool) {
		switch x := v.(type) {
		case int64:
			return float64(x), true
		case float64:
			return x, true
		}
		return 0, false
	}
	switch name {
	case "slo":
		s, ok := d.str(key, v)
		if !ok {
			return
		}
		t, err := parseSLOValue(s)
		if err != nil {
			d.problem(key, "%v", err)
			return
		}
		if t != nil {
			spec.Target = *t
		}
	case "slo_start", "slo_max":
		f, ok := num()
		if !ok || !(f > 0) || f > capacity.DefaultMax {
			d.problem(key, "want a rate in events per second, above 0 and at most %g", float64(capacity.DefaultMax))
			return
		}
		if name == "slo_start" {
			spec.Start = f
		} else {
			spec.Max = f
		}
	case "slo_step":
		dur, err := ParseDuration(v)
		if err != nil || dur < 500*time.Millisecond || dur > 5*time.Minute {
			d.problem(key, "want a step length from 500ms to 5m, e.g. \"3s\"")
			return
		}
		spec.Step = dur
	case "slo_precision":
		f, ok := num()
		if !ok || !(f >= 0.01 && f <= 1) {
			d.problem(key, "want a fraction from 0.01 to 1 (0.1: stop when the bracket is within 10%%)")
			return
		}
		spec.Precision = f
	case "slo_retests", "slo_max_steps":
		n, ok := v.(int64)
		lo, hi := int64(0), int64(10)
		if name == "slo_max_steps" {
			lo, hi = 2, 100
		}
		if !ok || n < lo || n > hi {
			d.problem(key, "want an integer from %d to %d", lo, hi)
			return
		}
		if name == "slo_retests" {
			spec.Retests = int(n)
			if n == 0 {
				spec.Retests = -1 // Config: no retest
			}
		} else {
			spec.MaxSteps = int(n)
		}
	}
	m.SLOSearch = spec
}

// isSLOTuning reports whether an [experiment] key tunes the search.
func isSLOTuning(k string) bool {
	switch k {
	case "slo_start", "slo_max", "slo_step", "slo_precision", "slo_retests", "slo_max_steps":
		return true
	}
	return false
}

// validateSLO checks the targets of scenarios and axes, and that the
// tuning keys have a target to tune.
func (d *decoder) validateSLO(m *Manifest) {
	varies := false
	check := func(key, v string) {
		t, err := parseSLOValue(v)
		if err != nil {
			d.problem(key, "%v", err)
		}
		varies = varies || t != nil
	}
	for _, sc := range m.Scenarios {
		for _, p := range sc.Params {
			if IsSLOKey(p.Name) {
				check("scenarios."+sc.Name+"."+p.Name, p.Value)
			}
		}
	}
	for _, ax := range m.Axes {
		if IsSLOKey(ax.Name) {
			for _, v := range ax.Values {
				check("axes."+ax.Name, v)
			}
		}
	}
	sp := m.SLOSearch
	if sp != nil && sp.Target.Percentile > 0 {
		m.Policy.SLO = sp // every cell's, unless its scenario or axis says otherwise
	}
	if sp != nil && sp.Target.Percentile == 0 && !varies {
		for k := range d.order {
			if rest, ok := strings.CutPrefix(k, "experiment."); ok && isSLOTuning(rest) {
				d.problem(k, "tunes the capacity search, but no slo is set (e.g. slo = \"p99 < 5ms\")")
			}
		}
	}
	if sp != nil && sp.Start > 0 && sp.Max > 0 && sp.Start > sp.Max {
		d.problem("experiment.slo_start", "%s/s is above slo_max (%s/s)", strconv.FormatFloat(sp.Start, 'f', -1, 64), strconv.FormatFloat(sp.Max, 'f', -1, 64))
	}
}

// setSLOParam applies a scenario's or axis's slo to the cell.
func (c *Cell) setSLOParam(m *Manifest, p Param) {
	t, err := parseSLOValue(p.Value)
	if err != nil || t == nil {
		c.Policy.SLO = nil
		return
	}
	spec := SLOSpec{}
	if m.SLOSearch != nil {
		spec = *m.SLOSearch
	}
	spec.Target = *t
	c.Policy.SLO = &spec
}

// validatePlanSLO refuses a target on cells that cannot be searched.
func (d *decoder) validatePlanSLO(plan *Plan) {
	for _, c := range plan.Cells {
		if c.Policy.SLO == nil {
			continue
		}
		if e := c.descriptor(); e == nil || !e.OpenLoop {
			d.problem("experiment.slo", "cell %s runs %s, whose engine has no open loop (rate): the capacity search needs one (the built-in OLTP engine has it)", c.Name, c.Workload.Workload())
			return
		}
		if c.Workload.Common().Time <= 0 {
			d.problem("experiment.slo", "cell %s has no duration: the capacity's confirmation run needs one", c.Name)
			return
		}
	}
}

// termColumns reads terms written as a column applied to a name,
// "capacity(b0e0) > 2 * capacity(b1e1)": the column is the expectation's
// (every term must use the same one, and no "column:" prefix may say
// another).
func termColumns(e *Expectation) error {
	col := ""
	for i, t := range e.Terms {
		open := strings.IndexByte(t.Name, '(')
		if open < 0 {
			if col != "" {
				return fmt.Errorf("%q: write every side as %s(name)", t.Name, col)
			}
			continue
		}
		if !strings.HasSuffix(t.Name, ")") || open == 0 {
			return fmt.Errorf("%q: want column(name), e.g. capacity(b0e0)", t.Name)
		}
		fn, name := t.Name[:open], strings.TrimSpace(t.Name[open+1:len(t.Name)-1])
		if i > 0 && col == "" {
			return fmt.Errorf("%q: write every side as %s(name)", e.Terms[0].Name, fn)
		}
		if col != "" && fn != col {
			return fmt.Errorf("%s(...) and %s(...) compare different columns", col, fn)
		}
		known := false
		for _, c := range ExpectColumns {
			known = known || c == fn
		}
		if !known {
			return fmt.Errorf("%q: unknown column %q (known: %s)", t.Name, fn, strings.Join(ExpectColumns, ", "))
		}
		if name == "" || strings.ContainsAny(name, "() \t") {
			return fmt.Errorf("%q: want column(name), e.g. capacity(b0e0)", t.Name)
		}
		col = fn
		e.Terms[i].Name = name
	}
	if col != "" {
		if e.Column != "tps" && e.Column != col {
			return fmt.Errorf("the prefix says %s, the sides %s", e.Column, col)
		}
		e.Column = col
	}
	return nil
}
