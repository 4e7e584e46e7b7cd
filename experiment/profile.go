package experiment

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"benchmatrix/catalog"
)

// Profiling keys: profile = "off" | "cpu" | "offcpu" | "both" (server flame
// graphs per cell), profile_hz (the on-CPU sampling rate) and
// profile_seconds (a sub-window of the measured window; default all of
// it). In [experiment] for every cell, and as scenario or axis keys.

// The profile key's values.
const (
	ProfileOff    = "off"
	ProfileCPU    = "cpu"
	ProfileOffCPU = "offcpu"
	ProfileBoth   = "both"
)

var profileModes = []string{ProfileOff, ProfileCPU, ProfileOffCPU, ProfileBoth}

// DefaultProfileHz is the on-CPU sampling rate (a prime, so samples do not
// beat with periodic work).
const DefaultProfileHz = 499

// MaxProfileHz bounds profile_hz: Linux's default
// kernel.perf_event_max_sample_rate is about 100,000, and perf's own cost
// grows with the rate.
const MaxProfileHz = 20000

// ProfileSpec is how a cell is profiled.
type ProfileSpec struct {
	Mode string `json:"mode,omitempty"` // "" or "off": not profiled
	Hz   int    `json:"hz,omitempty"`
	// Window is the profiled sub-window from the start of the measured
	// window; 0 means all of it.
	Window time.Duration `json:"seconds,omitempty"`
	// Twin marks the unprofiled twin of a profiled cell: the same cell
	// without the profiler, interleaved beside it, to measure the
	// profiler's cost.
	Twin bool `json:"twin,omitempty"`
}

// On reports whether the cell is profiled.
func (s ProfileSpec) On() bool { return s.Mode != "" && s.Mode != ProfileOff }

// CPU and OffCPU say which recordings the cell takes.
func (s ProfileSpec) CPU() bool    { return s.Mode == ProfileCPU || s.Mode == ProfileBoth }
func (s ProfileSpec) OffCPU() bool { return s.Mode == ProfileOffCPU || s.Mode == ProfileBoth }

// IsProfileKey reports whether a parameter is one of the profiling keys.
func IsProfileKey(name string) bool {
	return name == "profile" || name == "profile_hz" || name == "profile_seconds"
}

// profileKey decodes one profiling key of [experiment].
func (d *decoder) profileKey(key string, v any, m *Manifest) {
	s, ok := valueText(v)
	if !ok {
		d.problem(key, "want a string or number, got a %s", typeName(v))
		return
	}
	name := strings.TrimPrefix(key, "experiment.")
	if err := m.Policy.Profile.set(name, s); err != nil {
		d.problem(key, "%v", err)
	}
}

// set reads one profiling key's value.
func (s *ProfileSpec) set(name, value string) error {
	switch name {
	case "profile":
		if !slices.Contains(profileModes, value) {
			return fmt.Errorf("%q: want off, cpu (on-CPU stacks), offcpu (off-CPU time) or both", value)
		}
		s.Mode = value
	case "profile_hz":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > MaxProfileHz {
			return fmt.Errorf("%q: want a sampling rate in Hz from 1 to %d, e.g. 499", value, MaxProfileHz)
		}
		s.Hz = n
	case "profile_seconds":
		dur, err := ParseDuration(value)
		if err != nil {
			return err
		}
		if dur <= 0 {
			return fmt.Errorf("must be more than 0 (leave it out to profile the whole measured window)")
		}
		s.Window = dur
	}
	return nil
}

// validateProfile checks the profiling keys of the manifest, its
// scenarios and axes: their values, the provider's capability (an external
// server's process is not ours to record) and the sub-window.
func (d *decoder) validateProfile(m *Manifest, prov catalog.Descriptor) {
	check := func(key string, p Param, spec ProfileSpec) {
		if err := spec.set(p.Name, p.Value); err != nil {
			d.problem(key, "%v", err)
			return
		}
		if p.Name == "profile" && spec.On() {
			d.needs(prov, catalog.Profiles, key, fmt.Sprintf("profile = %q", p.Value))
		}
		if p.Name == "profile_seconds" && spec.Window > m.Duration {
			d.problem(key, "%s is longer than the measured window (duration %s)", spec.Window, m.Duration)
		}
	}
	if pr := m.Policy.Profile; pr.On() {
		check("experiment.profile", Param{Name: "profile", Value: pr.Mode}, pr)
	}
	if pr := m.Policy.Profile; pr.Window > 0 {
		check("experiment.profile_seconds", Param{Name: "profile_seconds", Value: pr.Window.String()}, pr)
	}
	for _, sc := range m.Scenarios {
		for _, p := range sc.Params {
			if IsProfileKey(p.Name) {
				check("scenarios."+sc.Name+"."+p.Name, p, m.Policy.Profile)
			}
		}
	}
	for _, ax := range m.Axes {
		if IsProfileKey(ax.Name) {
			for _, v := range ax.Values {
				check("axes."+ax.Name, Param{Name: ax.Name, Value: v}, m.Policy.Profile)
			}
		}
	}
}

// setProfileParam applies a scenario's or axis's profiling key to a cell.
func (c *Cell) setProfileParam(p Param) {
	_ = c.Policy.Profile.set(p.Name, p.Value) // validated before expansion
}

// HasProfiles reports whether any cell of the plan is profiled.
func (p *Plan) HasProfiles() bool {
	for _, c := range p.Cells {
		if c.Policy.Profile.On() {
			return true
		}
	}
	return false
}

// profileTwins gives each profiled cell an unprofiled twin right after it
// (same parameters, profile = "off", named NAME/profile=off), unless the
// matrix already has that cell (profile as an axis with "off"); the
// grouped order keeps the twin beside its cell, and repeats interleave
// them (A A' B B' A A' B B'), so the profiler's cost is measured per
// scenario under the same drift. When twins are added, "profile" becomes a
// column, every cell carrying its mode.
func (p *Plan) profileTwins(base []Cell) []Cell {
	has := map[string]bool{}
	for _, c := range base {
		if !c.Policy.Profile.On() {
			has[twinKey(c)] = true
		}
	}
	var out []Cell
	added := false
	for _, c := range base {
		out = append(out, c)
		if !c.Policy.Profile.On() || has[twinKey(c)] {
			continue
		}
		t := c
		t.Params = withParam(c.Params, "profile", ProfileOff)
		t.Policy.Profile = ProfileSpec{Mode: ProfileOff, Twin: true}
		t.Name = c.Name + "/profile=" + ProfileOff
		if own := "profile=" + c.Policy.Profile.Mode; strings.Contains(c.Name, own) {
			t.Name = strings.Replace(c.Name, own, "profile="+ProfileOff, 1) // profile is an axis
		}
		if p.Manifest.CellName == "" && !strings.Contains(c.Name, "profile=") {
			// Both named by their profile, so that neither is the
			// scenario's own name (the baseline would match it).
			out[len(out)-1].Name = c.Name + "/profile=" + c.Policy.Profile.Mode
		}
		has[twinKey(c)] = true
		out = append(out, t)
		added = true
	}
	if !added {
		return base
	}
	if !slices.Contains(p.Columns, "profile") {
		p.Columns = append(p.Columns, "profile")
	}
	for i := range out {
		if !hasParam(out[i].Params, "profile") {
			mode := out[i].Policy.Profile.Mode
			if mode == "" {
				mode = ProfileOff
			}
			out[i].Params = withParam(out[i].Params, "profile", mode)
		}
	}
	return out
}

// twinKey identifies a cell by its scenario and parameters other than the
// profiling keys.
func twinKey(c Cell) string {
	var parts []string
	for _, p := range c.Params {
		if !IsProfileKey(p.Name) {
			parts = append(parts, p.Name+"="+p.Value)
		}
	}
	return c.Scenario + "|" + strings.Join(parts, ",")
}

func withParam(ps []Param, name, value string) []Param {
	out := append([]Param(nil), ps...)
	for i := range out {
		if out[i].Name == name {
			out[i].Value = value
			return out
		}
	}
	return append(out, Param{Name: name, Value: value})
}

func hasParam(ps []Param, name string) bool {
	for _, p := range ps {
		if p.Name == name {
			return true
		}
	}
	return false
}

// alternateTwins runs the unprofiled twin first in every second round
// (A A' B B', then A' A B' B), so that neither always runs right after the
// data is loaded or right after the other.
func alternateTwins(round []Cell, repeat int) {
	if repeat%2 == 1 {
		return
	}
	for i := 0; i+1 < len(round); i++ {
		a, b := round[i], round[i+1]
		if a.Policy.Profile.On() && b.Policy.Profile.Twin && twinKey(a) == twinKey(b) {
			round[i], round[i+1] = b, a
			i++
		}
	}
}
