package results

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"benchmatrix/engine"
	"benchmatrix/record"
)

// EngineVersion names the statement sequences of the built-in OLTP engine.
// The engine bumps it whenever a workload issues different statements (or
// the same ones in a different order or mix) for the same options, so that
// runs from before and after cannot be compared by accident.
const EngineVersion = "1"

// NonDefiningOptions are the engine options left out of a workload
// fingerprint: they say how long to run and what to report, not what the
// workload does. Threads, rate and everything else stay in.
var NonDefiningOptions = []string{"time", "warmup_time", "events", "report_interval", "histogram", "percentile", "forced_shutdown", "report_checkpoints"}

// ComputeFingerprint builds the fingerprint of a run from its cells (the
// plan fills in cells that have not run). A cell's options come from what
// it ran with; when a cell has several repeats the first one is used.
func ComputeFingerprint(r *record.Run) *record.Fingerprint {
	f := &record.Fingerprint{
		ManifestSHA256: r.ManifestHash,
		Workload:       map[string]record.WorkloadDef{},
		Effective:      map[string]map[string]string{},
		ServerVersion:  r.Server.Version,
		ServerFlavor:   string(r.Server.Flavor),
		ToolVersion:    r.Tool.Version,
		ToolCommit:     r.Tool.Commit,
		Host:           r.Host,
		Limits:         planLimits(r),
	}
	for _, c := range r.Cells {
		if _, seen := f.Effective[c.Name]; !seen && len(c.Effective) > 0 {
			// A repeat that failed before the read-back has none.
			f.Effective[c.Name] = copyMap(c.Effective)
		}
		if _, seen := f.Workload[c.Name]; seen {
			continue
		}
		f.Workload[c.Name] = workloadDef(c.Workload)
	}
	for _, c := range r.Plan {
		if _, seen := f.Workload[c.Name]; !seen {
			f.Workload[c.Name] = workloadDef(c.Workload)
		}
	}
	return f
}

func workloadDef(s engine.Spec) record.WorkloadDef {
	return record.WorkloadDef{Workload: s.Workload(), EngineVersion: EngineVersion, Options: optionMap(s.Options)}
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// optionMap renders every field of o under its JSON name, so an option
// added to the engine joins the fingerprint without anyone remembering to
// add it here.
func optionMap(o engine.Options) map[string]string {
	skip := map[string]bool{"workload": true}
	for _, k := range NonDefiningOptions {
		skip[k] = true
	}
	out := map[string]string{}
	if o == nil {
		return out
	}
	v := reflect.Indirect(reflect.ValueOf(o))
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if skip[name] {
			continue
		}
		out[name] = formatValue(v.Field(i))
	}
	return out
}

var durationType = reflect.TypeOf(time.Duration(0))

func formatValue(v reflect.Value) string {
	if v.Type() == durationType {
		return time.Duration(v.Int()).String()
	}
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return "on"
		}
		return "off"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.String:
		return v.String()
	case reflect.Slice, reflect.Array:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = formatValue(v.Index(i))
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v.Interface())
}

// MismatchError is returned by Compare when the runs' fingerprints differ
// and the comparison was not forced; cmd maps it to exit code 2.
type MismatchError struct {
	Mismatches []record.Mismatch
}

func (e *MismatchError) Error() string {
	groups := groupMismatches(e.Mismatches)
	var b strings.Builder
	fmt.Fprintf(&b, "runs are not comparable (%d difference", len(e.Mismatches))
	if len(e.Mismatches) != 1 {
		b.WriteString("s")
	}
	b.WriteString("): ")
	for i, g := range groups {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(g)
	}
	return b.String()
}

// groupMismatches renders mismatches, folding the same option change in
// several cells into one line: `reinsert_id: base "same", new "auto" (b1e1,
// b0e1)`.
func groupMismatches(ms []record.Mismatch) []string {
	type group struct {
		key, base, new string
		cells          []string
	}
	var order []*group
	by := map[[3]string]*group{}
	for _, m := range ms {
		key := m.Key
		if m.Cell != "" {
			key = strings.TrimPrefix(m.Key, m.Cell+": ")
		}
		id := [3]string{key, m.Base, m.New}
		g, ok := by[id]
		if !ok {
			g = &group{key: key, base: m.Base, new: m.New}
			by[id] = g
			order = append(order, g)
		}
		if m.Cell != "" {
			g.cells = append(g.cells, m.Cell)
		}
	}
	out := make([]string, 0, len(order))
	for _, g := range order {
		s := record.Mismatch{Key: g.key, Base: g.base, New: g.new}.String()
		if len(g.cells) > 0 {
			s += " (" + strings.Join(g.cells, ", ") + ")"
		}
		out = append(out, s)
	}
	return out
}

// planLimits is each planned cell's limits, in plan order: only cells with
// a limit, under the cell's name.
func planLimits(r *record.Run) map[string]string {
	out := map[string]string{}
	for _, c := range r.Plan {
		if _, seen := out[c.Name]; !seen && !c.Limits.IsZero() {
			out[c.Name] = c.Limits.Text()
		}
	}
	return out
}
