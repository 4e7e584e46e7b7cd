package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Spec is one cell's workload: its engine and that engine's resolved
// options. Its JSON is the options' own (run.json's "workload" object, the
// shape oltp's options always had). Decoded from JSON, a Spec holds the
// bytes until Registry.Bind makes them the engine's options again; the
// record (run.json's schema) never needs to know the engines.
type Spec struct {
	Engine  string  // the Descriptor's Name; "" until bound
	Options Options // nil until bound
	raw     json.RawMessage
}

// Bound reports whether the spec holds options (not only their JSON).
func (s Spec) Bound() bool { return s.Options != nil }

// IsZero reports an empty spec (no options, no JSON).
func (s Spec) IsZero() bool { return s.Options == nil && len(s.raw) == 0 }

// Raw is the JSON the spec was decoded from, until it is bound.
func (s Spec) Raw() json.RawMessage { return s.raw }

// DecodeJSON is a Descriptor's Decode for options whose JSON is O's own.
func DecodeJSON[O Options](b []byte) (Options, error) {
	var o O
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, err
	}
	return o, nil
}

// RawSpec is an unbound spec of the options' JSON b.
func RawSpec(b []byte) Spec { return Spec{raw: append(json.RawMessage(nil), b...)} }

// Workload is the workload's name: the options', or else the "workload"
// field of the JSON not bound yet.
func (s Spec) Workload() string {
	if s.Options != nil {
		return s.Options.Name()
	}
	var w struct {
		Workload string `json:"workload"`
	}
	_ = json.Unmarshal(s.raw, &w)
	return w.Workload
}

// Common is the options' run controls (zero when not bound).
func (s Spec) Common() Common {
	if s.Options == nil {
		return Common{}
	}
	return s.Options.Common()
}

// Data is what the options need loaded (none when not bound).
func (s Spec) Data() Data {
	if s.Options == nil {
		return Data{}
	}
	return s.Options.Data()
}

// With returns the spec with its run controls changed by f.
func (s Spec) With(f func(c *Common)) Spec {
	if s.Options == nil {
		return s
	}
	c := s.Options.Common()
	f(&c)
	s.Options = s.Options.WithCommon(c)
	return s
}

// MarshalJSON writes the options (or the JSON not bound yet).
func (s Spec) MarshalJSON() ([]byte, error) {
	if s.Options != nil {
		return json.Marshal(s.Options)
	}
	if len(s.raw) == 0 {
		return []byte("null"), nil
	}
	return s.raw, nil
}

// UnmarshalJSON keeps the options' JSON for Registry.Bind.
func (s *Spec) UnmarshalJSON(b []byte) error {
	*s = Spec{}
	if t := bytes.TrimSpace(b); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil
	}
	if !json.Valid(b) {
		return fmt.Errorf("workload: invalid JSON")
	}
	s.raw = append(json.RawMessage(nil), b...)
	return nil
}
