package results

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"benchmatrix/oltp"
)

// EngineVersion names the statement sequences of the built-in OLTP engine.
// The engine bumps it whenever a workload issues different statements (or
// the same ones in a different order or mix) for the same options, so that
// runs from before and after cannot be compared by accident.
const EngineVersion = "1"

// Fingerprint is what makes two runs comparable (reference/anchors.md §3.7):
// what every cell ran, on which server, with which settings in effect, and,
// kept apart because it only warrants a warning, the tool and the host.
type Fingerprint struct {
	ManifestSHA256 string `json:"manifest_sha256"`
	// Workload holds, per cell name, the workload and every engine option
	// in effect apart from run length and reporting (NonDefiningOptions).
	Workload      map[string]WorkloadDef `json:"workload"`
	ServerVersion string                 `json:"server_version"`
	ServerFlavor  string                 `json:"server_flavor"`
	// Effective holds, per cell name, the server variables read back
	// after the cell's settings were applied.
	Effective map[string]map[string]string `json:"effective,omitempty"`
	// Limits holds, per cell name, the resource limits the plan put it
	// under (LimitsText; cells without a limit are left out).
	Limits      map[string]string `json:"limits,omitempty"`
	ToolVersion string            `json:"tool_version"`
	ToolCommit  string            `json:"tool_commit,omitempty"`
	Host        Host              `json:"host"`
}

// WorkloadDef is the definition of one cell's workload.
type WorkloadDef struct {
	Workload      string `json:"workload"`
	EngineVersion string `json:"engine_version"`
	// Options maps each engine option (sysbench's name, as in run.json) to
	// its value as text.
	Options map[string]string `json:"options"`
}

// NonDefiningOptions are the engine options left out of a workload
// fingerprint: they say how long to run and what to report, not what the
// workload does. Threads, rate and everything else stay in.
var NonDefiningOptions = []string{"time", "warmup_time", "events", "report_interval", "histogram", "percentile", "forced_shutdown", "report_checkpoints"}

// Mismatch is one difference between two fingerprints.
type Mismatch struct {
	// Cell is the cell the difference is about, "" for the whole run.
	Cell string `json:"cell,omitempty"`
	// Key says what differs: "b1e1: reinsert_id" for a workload option,
	// "b1e1: @@sync_binlog" for a server variable, "server version".
	Key  string `json:"key"`
	Base string `json:"base"`
	New  string `json:"new"`
}

func (m Mismatch) String() string {
	return fmt.Sprintf("%s: base %s, new %s", m.Key, quoteOrMissing(m.Base), quoteOrMissing(m.New))
}

// missing stands for a value one side does not have.
const missing = "(unset)"

func quoteOrMissing(s string) string {
	if s == missing {
		return s
	}
	return strconv.Quote(s)
}

// ComputeFingerprint builds the fingerprint of a run from its cells (the
// plan fills in cells that have not run). A cell's options come from what
// it ran with; when a cell has several repeats the first one is used.
func ComputeFingerprint(r *Run) *Fingerprint {
	f := &Fingerprint{
		ManifestSHA256: r.ManifestHash,
		Workload:       map[string]WorkloadDef{},
		Effective:      map[string]map[string]string{},
		ServerVersion:  r.Server.Version,
		ServerFlavor:   string(r.Server.Flavor),
		ToolVersion:    r.Tool.Version,
		ToolCommit:     r.Tool.Commit,
		Host:           r.Host,
		Limits:         planLimits(r), // limits.go
	}
	for _, c := range r.Cells {
		if _, seen := f.Effective[c.Name]; !seen && len(c.Effective) > 0 {
			// A repeat that failed before the read-back has none.
			f.Effective[c.Name] = copyMap(c.Effective)
		}
		if _, seen := f.Workload[c.Name]; seen {
			continue
		}
		o := c.Workload
		if o.Workload == "" && c.Result != nil {
			o = c.Result.Options
		}
		f.Workload[c.Name] = workloadDef(o)
	}
	for _, c := range r.Plan {
		if _, seen := f.Workload[c.Name]; !seen {
			f.Workload[c.Name] = workloadDef(c.Workload)
		}
	}
	return f
}

func workloadDef(o oltp.Options) WorkloadDef {
	return WorkloadDef{Workload: o.Workload, EngineVersion: EngineVersion, Options: optionMap(o)}
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
func optionMap(o oltp.Options) map[string]string {
	skip := map[string]bool{"workload": true}
	for _, k := range NonDefiningOptions {
		skip[k] = true
	}
	out := map[string]string{}
	v := reflect.ValueOf(o)
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

// Diff lists the differences that make the two runs incomparable: for
// every cell both runs have, each workload option (and the workload, and
// the engine version) and each server variable read back that differs;
// and the server flavor and version. Cells only one run has are not
// differences (a comparison lists them as unmatched). Host, tool and
// manifest text are in EnvDiff.
func (f *Fingerprint) Diff(o *Fingerprint) []Mismatch {
	if f == nil || o == nil {
		return nil
	}
	var out []Mismatch
	for _, cell := range sortedKeys(f.Workload) {
		nw, ok := o.Workload[cell]
		if !ok {
			continue
		}
		bw := f.Workload[cell]
		add := func(key, b, n string) {
			out = append(out, Mismatch{Cell: cell, Key: cell + ": " + key, Base: b, New: n})
		}
		if bw.Workload != nw.Workload {
			add("workload", bw.Workload, nw.Workload)
		}
		if bw.EngineVersion != nw.EngineVersion {
			add("engine_version", bw.EngineVersion, nw.EngineVersion)
		}
		for _, k := range unionKeys(bw.Options, nw.Options) {
			b, n := valueOr(bw.Options, k), valueOr(nw.Options, k)
			if b != n {
				add(k, b, n)
			}
		}
	}
	return out
}

// EnvDiff lists what differs between the runs without changing what is
// measured: the server (flavor, version, and every variable read back, per
// cell: what users compare runs for, "what did this my.cnf change or this
// version cost?"), the resource limits per cell (conditions, like the
// variables), the manifest text (its cells are compared one by one in
// Diff), the tool's version and commit, and the host. compare lists them
// first and compares anyway.
func (f *Fingerprint) EnvDiff(o *Fingerprint) []Mismatch {
	if f == nil || o == nil {
		return nil
	}
	var out []Mismatch
	add := func(key, b, n string) {
		if b != n {
			out = append(out, Mismatch{Key: key, Base: b, New: n})
		}
	}
	add("server flavor", f.ServerFlavor, o.ServerFlavor)
	add("server version", f.ServerVersion, o.ServerVersion)
	for _, cell := range sortedKeys(f.Effective) {
		// Variables are compared where both runs read them back: a run
		// without read-back (a cell that failed early) is not a difference.
		be, ne := f.Effective[cell], o.Effective[cell]
		if len(be) == 0 || len(ne) == 0 {
			continue
		}
		for _, k := range unionKeys(be, ne) {
			if b, n := valueOr(be, k), valueOr(ne, k); b != n {
				out = append(out, Mismatch{Cell: cell, Key: cell + ": @@" + k, Base: b, New: n})
			}
		}
	}
	// Limits are conditions, like the variables: listed, compared anyway.
	// Only cells both runs have; a cell without a limit is "none".
	for _, cell := range unionKeys(f.Limits, o.Limits) {
		_, inF := f.Workload[cell]
		_, inO := o.Workload[cell]
		b, n := f.Limits[cell], o.Limits[cell]
		if b == "" {
			b = "none"
		}
		if n == "" {
			n = "none"
		}
		if inF && inO && b != n {
			out = append(out, Mismatch{Cell: cell, Key: cell + ": limits", Base: b, New: n})
		}
	}
	add("manifest sha256", f.ManifestSHA256, o.ManifestSHA256)
	add("tool version", f.ToolVersion, o.ToolVersion)
	add("tool commit", f.ToolCommit, o.ToolCommit)
	add("host name", f.Host.Hostname, o.Host.Hostname)
	add("host cpu", f.Host.CPUModel, o.Host.CPUModel)
	add("host cores", strconv.Itoa(f.Host.Cores), strconv.Itoa(o.Host.Cores))
	add("host memory MiB", strconv.FormatInt(f.Host.MemoryMB, 10), strconv.FormatInt(o.Host.MemoryMB, 10))
	add("host kernel", f.Host.Kernel, o.Host.Kernel)
	add("host storage", f.Host.Storage, o.Host.Storage)
	add("host filesystem", f.Host.Filesystem, o.Host.Filesystem)
	return out
}

func valueOr(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return v
	}
	return missing
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func unionKeys(a, b map[string]string) []string {
	set := map[string]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	return sortedKeys(set)
}

// MismatchError is returned by Compare when the runs' fingerprints differ
// and the comparison was not forced; cmd maps it to exit code 2.
type MismatchError struct {
	Mismatches []Mismatch
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
func groupMismatches(ms []Mismatch) []string {
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
		s := Mismatch{Key: g.key, Base: g.base, New: g.new}.String()
		if len(g.cells) > 0 {
			s += " (" + strings.Join(g.cells, ", ") + ")"
		}
		out = append(out, s)
	}
	return out
}
