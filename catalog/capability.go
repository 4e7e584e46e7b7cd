package catalog

import (
	"fmt"
	"sort"
	"strings"
)

// Capability is something a server provider can do beyond the Server
// interface every provider implements. Providers declare theirs in their
// descriptor; a manifest asking for one its provider lacks is refused at
// plan time, and server/'s conformance test checks each declaration
// against the methods the provider's type really has.
type Capability string

// The capabilities benchmatrix knows.
const (
	// Liveness: the provider tells whether its server process still runs,
	// so a dead server fails its cell as "the server died".
	Liveness Capability = "liveness"
	// PID: the host process id of the server, for its CPU column (and
	// later its profiles and resource limits).
	PID Capability = "pid"
	// Logs: the server's error log can be read from an offset, so every
	// cell keeps the lines written while it ran.
	Logs Capability = "logs"
	// Snapshots: the datadir can be saved and restored (prepared data).
	Snapshots Capability = "snapshots"
	// Restarts: the provider restarts its server with other startup
	// options (restart-only variables, cold starts).
	Restarts Capability = "restarts"
	// Images: the server comes from an image named in the manifest,
	// which may vary as an axis (version comparisons).
	Images Capability = "images"
	// RestoresGlobals: every global the run changed is put back when it
	// ends (a server benchmatrix does not own).
	RestoresGlobals Capability = "restores-globals"
	// Limits: resource limits on the server (disk IOPS and bandwidth on
	// the datadir's device, a CPU quota, a cpuset, memory), changed live
	// between cells and read back (a LimitSet; presets in machines.go).
	Limits Capability = "limits"
	// Profiles: the server's process can be recorded with perf from this
	// host (on-CPU and off-CPU flame graphs per cell): it needs PID.
	Profiles Capability = "profiles"
	// Topologies: the provider's servers can be the nodes of a topology
	// (a primary with replicas, a Galera cluster), each stopped, killed,
	// paused, resumed and started again in place (server/node.go).
	Topologies Capability = "topologies"
	// ExistingTopologies: the provider reaches the nodes of a topology
	// someone else runs, one DSN per node (node 1 the primary): checked to
	// be the declared replicas or Galera cluster, sampled and verified per
	// node like a started one, but never stopped, paused or rebuilt, and
	// every global changed on any node put back (topology/attach.go).
	ExistingTopologies Capability = "existing-topologies"
)

// Set is a set of capabilities.
type Set map[Capability]bool

// Caps builds a Set.
func Caps(cs ...Capability) Set {
	s := Set{}
	for _, c := range cs {
		s[c] = true
	}
	return s
}

// Has reports whether c is in the set.
func (s Set) Has(c Capability) bool { return s[c] }

// String lists the set, sorted.
func (s Set) String() string {
	var out []string
	for c := range s {
		out = append(out, string(c))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// MissingError says a manifest asks for a capability its provider lacks.
type MissingError struct {
	Provider ProviderName
	Need     Capability
	For      string // what asked for it, e.g. "cold = true"
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("%s needs the %q capability, which provider %s lacks (it has: %s)",
		e.For, e.Need, e.Provider, Provider(e.Provider).Caps)
}
