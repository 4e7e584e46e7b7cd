package server

import (
	"context"

	"benchmatrix/catalog"
)

// The capability interfaces: one per catalog.Capability that has methods of
// its own (LogReader and Snapshotter are in snapshot.go). A provider
// declares its capabilities in its catalog descriptor and asserts at
// compile time that its type has the matching interfaces; the conformance
// test checks that the declarations and the types agree both ways.

// Liveness is catalog.Liveness: the provider tells whether its server
// process still runs.
type Liveness interface{ Alive() bool }

// ProcessOwner is catalog.PID: the host process id of the server (0 when it
// is not running or not visible from here).
type ProcessOwner interface{ PID() int }

// Borrowed is catalog.RestoresGlobals: a server benchmatrix does not own.
// It applies globals itself, to put each one back when it stops; it is
// never restarted, so restart-only values must already be in effect; and
// prepare refuses a schema with tables benchmatrix did not create.
type Borrowed interface {
	ApplyGlobals(ctx context.Context, settings []Setting) (map[string]string, error)
	VerifyStartup(ctx context.Context, startup []Setting) error
	ForeignTables(ctx context.Context, schema string, ours func(table string) bool) ([]string, error)
	// Claim records tables benchmatrix created, so that a later run knows
	// them from someone else's of the same name.
	Claim(ctx context.Context, schema string, tables []string) error
	// Recovered lists what connecting put back that a killed benchmatrix
	// had left changed (its globals journal).
	Recovered() []string
}

// ExistingNode is catalog.ExistingTopologies: a server someone else runs
// as one node of a topology (topology/attach.go): Borrowed, and Galera's
// provider options set one at a time and put back (gcs.fc_limit).
type ExistingNode interface {
	Borrowed
	SetProviderOption(ctx context.Context, name, value string) error
}

// Implements reports whether srv has the methods of capability c. Only the
// conformance test needs it: the runner trusts the declarations.
func Implements(srv Server, c catalog.Capability) bool {
	switch c {
	case catalog.Liveness:
		_, ok := srv.(Liveness)
		return ok
	case catalog.PID, catalog.Profiles: // profiles: perf records the PID
		_, ok := srv.(ProcessOwner)
		return ok
	case catalog.Logs:
		_, ok := srv.(LogReader)
		return ok
	case catalog.Snapshots:
		_, ok := srv.(Snapshotter)
		return ok
	case catalog.RestoresGlobals:
		_, ok := srv.(Borrowed)
		return ok
	case catalog.Limits:
		_, ok := srv.(Limiter)
		return ok
	case catalog.ExistingTopologies:
		_, ok := srv.(ExistingNode)
		return ok
	case catalog.Topologies:
		_, ok := srv.(Node) // node.go
		return ok
	}
	// Restarts and Images are behaviours of Server's own methods.
	return true
}

var (
	_ interface {
		Server
		Liveness
		ProcessOwner
		LogReader
		Snapshotter
		Limiter
		Node
	} = (*Sandbox)(nil)
	_ interface {
		Server
		Liveness
		ProcessOwner
		Limiter
	} = (*Docker)(nil)
	_ interface {
		Server
		ExistingNode
	} = (*External)(nil)
)
