package runner

import (
	"context"

	"benchmatrix/engine"
)

// hook is one feature's part in one cell's lifecycle (lifecycle.go). A
// feature implements the optional methods of the phases it needs; the
// lifecycle calls them in the order of cellHooks, and knows no feature by
// name.
type hook interface {
	// feature names the feature, for messages.
	feature() string
}

// startHook runs in the start/verify phase, once the server is up.
type startHook interface {
	start(ctx context.Context, cr *cellRun) error
}

// dataHook takes part in the load phase: restore offers the cell's data
// shape (key) from elsewhere than a load, reporting whether it did; after a
// load, snapshotted hears that the provider saved the loaded data as a
// snapshot.
type dataHook interface {
	restore(ctx context.Context, cr *cellRun, key string, o engine.Spec) (bool, error)
	snapshotted(ctx context.Context, cr *cellRun, key string, o engine.Spec)
}

// afterLoadHook runs once the cell's data is in place: checks that need
// the data.
type afterLoadHook interface {
	afterLoad(ctx context.Context, cr *cellRun) error
}

// limitsHook puts the cell's conditions in place; undo, if not nil, runs
// when the cell ends.
type limitsHook interface {
	limits(ctx context.Context, cr *cellRun) (undo func(), err error)
}

// observeHook starts what runs beside the engine, from the warm-up on,
// until collect. ctx lasts the cell (it ends when the server stops
// answering); an error fails the cell before the engine runs (collect
// still runs).
type observeHook interface {
	observe(ctx context.Context, cr *cellRun) error
}

// runHook hears that the engine's run starts, with its options (after an
// automatic warm-up: no warm-up left).
type runHook interface {
	beforeRun(ctx context.Context, cr *cellRun, o engine.Common)
}

// intervalHook hears every interval the engine reports, on the engine's
// goroutine: it must not block.
type intervalHook interface {
	interval(iv engine.Interval)
}

// collectHook ends what observe started and records it on the cell; it
// runs whether or not the engine's run went well (cellRun.runOK), with
// the cell's intervals in place. An error fails a cell that was ok.
type collectHook interface {
	collect(ctx context.Context, cr *cellRun) error
}

// cellHooks is the list of the features that take part in a cell, in the
// order their hooks run: the one place they are assembled. The order
// matters where one feature reads another's record: injection collects
// its onsets before observation matches them to the stalls it found.
func cellHooks() []hook {
	return []hook{
		&topologyHook{},      // topology.go, through its adapter
		cacheHook{},          // datacache.go
		&injectHook{},        // inject.go
		&eventsHook{},        // events.go: [[events]] on a topology's nodes
		&watchHook{},         // observe.go: sampler, stalls, growth, waits, nodes, user metrics
		&profileHook{},       // profile.go
		&limitsAdapter{},     // limits.go, through its adapter
		&capacityHook{},      // capacity.go: the measured run judged against the cell's SLO
		&topologyCheckHook{}, // topology.go: the nodes agree after the cell
	}
}

// topologyHook heals the nodes before a cell and compares their data
// after loading: runner/topology.go's functions, wrapped.
type topologyHook struct{}

func (*topologyHook) feature() string { return "topology" }

func (*topologyHook) start(ctx context.Context, cr *cellRun) error {
	return cr.r.healNodes(ctx, cr.res)
}

func (*topologyHook) afterLoad(ctx context.Context, cr *cellRun) error {
	if cr.res.Data != "loaded" {
		return nil
	}
	return cr.r.verifyNodes(ctx, cr.c, cr.res, "after loading")
}

// topologyCheckHook compares the nodes' data after a cell that ran well;
// last in the list, after every observer has stopped.
type topologyCheckHook struct{}

func (*topologyCheckHook) feature() string { return "topology" }

func (*topologyCheckHook) collect(ctx context.Context, cr *cellRun) error {
	if !cr.runOK || cr.stopped() != nil {
		return nil
	}
	return cr.r.verifyNodes(ctx, cr.c, cr.res, "after the cell")
}

// limitsAdapter puts the cell's resource limits in place: runner/limits.go's
// applyLimits, wrapped.
type limitsAdapter struct{}

func (*limitsAdapter) feature() string { return "limits" }

func (*limitsAdapter) limits(ctx context.Context, cr *cellRun) (func(), error) {
	return cr.r.applyLimits(ctx, cr.c, cr.res)
}
