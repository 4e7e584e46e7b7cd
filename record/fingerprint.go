package record

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
)

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
	for _, cell := range slices.Sorted(maps.Keys(f.Workload)) {
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
		for _, k := range UnionKeys(bw.Options, nw.Options) {
			b, n := ValueOr(bw.Options, k), ValueOr(nw.Options, k)
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
	for _, cell := range slices.Sorted(maps.Keys(f.Effective)) {
		// Variables are compared where both runs read them back: a run
		// without read-back (a cell that failed early) is not a difference.
		be, ne := f.Effective[cell], o.Effective[cell]
		if len(be) == 0 || len(ne) == 0 {
			continue
		}
		for _, k := range UnionKeys(be, ne) {
			if b, n := ValueOr(be, k), ValueOr(ne, k); b != n {
				out = append(out, Mismatch{Cell: cell, Key: cell + ": @@" + k, Base: b, New: n})
			}
		}
	}
	// Limits are conditions, like the variables: listed, compared anyway.
	// Only cells both runs have; a cell without a limit is "none".
	for _, cell := range UnionKeys(f.Limits, o.Limits) {
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

// ValueOr is m[k], or the mark of a missing value.
func ValueOr(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return v
	}
	return missing
}

// UnionKeys is the sorted union of the keys of a and b.
func UnionKeys(a, b map[string]string) []string {
	set := map[string]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	return slices.Sorted(maps.Keys(set))
}
