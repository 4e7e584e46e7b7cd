package runner

import (
	"context"
	"fmt"

	"benchmatrix/observe"
)

// injectHook makes the manifest's [inject] stalls during a cell: its SQL
// is checked once the cell's data exists (a LOCK TABLES on a workload
// table needs the table), and runs beside the engine from the warm-up on;
// the onsets go on the cell for observation to match to the stalls found.
type injectHook struct {
	inj  *observe.Injector
	stop context.CancelFunc
	done chan error
}

func (*injectHook) feature() string { return "inject" }

func (h *injectHook) injector(cr *cellRun) *observe.Injector {
	in := cr.r.m.Inject
	if in == nil {
		return nil
	}
	return &observe.Injector{Every: in.Every, Hold: in.Hold, SQL: in.SQL, Release: in.Release}
}

// afterLoad runs the lock and its release once: SQL the server refuses
// fails the cell with the server's own words.
func (h *injectHook) afterLoad(ctx context.Context, cr *cellRun) error {
	inj := h.injector(cr)
	if inj == nil {
		return nil
	}
	db := cr.r.openDB(cr.r.schema)
	defer db.Close()
	if err := inj.Check(ctx, db); err != nil {
		return fmt.Errorf("[inject] %w", err)
	}
	return nil
}

func (h *injectHook) observe(ctx context.Context, cr *cellRun) error {
	inj := h.injector(cr)
	if inj == nil {
		return nil
	}
	cfg := cr.r.srv.Endpoint()
	cfg.DBName = cr.r.schema
	db, err := observe.OpenDB(cfg)
	if err != nil {
		cr.res.ObserveNotes = append(cr.res.ObserveNotes, "inject: "+err.Error())
		return nil
	}
	h.inj = inj
	ictx, cancel := context.WithCancel(ctx)
	h.stop, h.done = cancel, make(chan error, 1)
	go func() { h.done <- inj.Run(ictx, db); db.Close() }()
	return nil
}

func (h *injectHook) collect(_ context.Context, cr *cellRun) error {
	if h.stop == nil {
		return nil
	}
	h.stop()
	if err := <-h.done; err != nil {
		cr.res.ObserveNotes = append(cr.res.ObserveNotes, "inject: "+err.Error())
	}
	for _, t := range h.inj.Onsets() {
		cr.res.Injected = append(cr.res.Injected, t.Seconds())
	}
	return nil
}
