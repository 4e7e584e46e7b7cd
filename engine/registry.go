package engine

import (
	"fmt"
	"slices"
)

// Registry is a list of engines (workloads/ holds benchmatrix's).
type Registry []*Descriptor

// Engine returns the engine called name.
func (r Registry) Engine(name string) (*Descriptor, bool) {
	for _, d := range r {
		if d.Name == name {
			return d, true
		}
	}
	return nil, false
}

// ForWorkload returns the engine that runs the named workload.
func (r Registry) ForWorkload(workload string) (*Descriptor, bool) {
	for _, d := range r {
		if slices.Contains(d.Workloads, workload) {
			return d, true
		}
	}
	return nil, false
}

// Workloads lists every engine's workloads, in table order.
func (r Registry) Workloads() []string {
	var out []string
	for _, d := range r {
		out = append(out, d.Workloads...)
	}
	return out
}

// IsKey reports whether some engine reads a [workload] key.
func (r Registry) IsKey(key string) bool {
	for _, d := range r {
		if d.IsKey(key) {
			return true
		}
	}
	return false
}

// Bind makes a decoded spec's JSON its engine's options again; a bound or
// empty spec is left as it is.
func (r Registry) Bind(s *Spec) error {
	if s.Options != nil || len(s.raw) == 0 {
		return nil
	}
	name := s.Workload()
	d, ok := r.ForWorkload(name)
	if !ok {
		return fmt.Errorf("workload %q: no engine runs it", name)
	}
	o, err := d.Decode(s.raw)
	if err != nil {
		return fmt.Errorf("workload %q: %w", name, err)
	}
	s.Engine, s.Options, s.raw = d.Name, o, nil
	return nil
}

// Of returns the engine of a bound spec.
func (r Registry) Of(s Spec) (*Descriptor, bool) {
	if s.Engine != "" {
		return r.Engine(s.Engine)
	}
	return r.ForWorkload(s.Workload())
}

// CheckKey checks one [workload] key's value: a workload some engine runs,
// or a value one of the engines reading the key takes (the first one's
// error otherwise).
func (r Registry) CheckKey(key, value string) error {
	if key == "workload" {
		if _, ok := r.ForWorkload(value); ok {
			return nil
		}
	}
	var first error
	for _, d := range r {
		if key != "workload" && !d.IsKey(key) {
			continue
		}
		err := d.CheckKey(key, value)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		first = fmt.Errorf("unknown workload option %q", key)
	}
	return first
}
