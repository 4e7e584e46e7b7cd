// Package inject is the manifest's [inject] stalls in a cell's lifecycle:
// its SQL is checked once the cell's data exists (a LOCK TABLES on a
// workload table needs the table), and runs beside the engine from the
// warm-up on; the onsets go on the cell for observation to match to the
// stalls found.
package inject

import (
	"context"
	"fmt"

	"benchmatrix/experiment"
	"benchmatrix/lifecycle"
	"benchmatrix/observe"
)

// Hook is one cell's injector.
type Hook struct {
	inj  *observe.Injector
	stop context.CancelFunc
	done chan error
}

// New is a cell's hook.
func New() lifecycle.Hook { return &Hook{} }

// Feature implements lifecycle.Hook.
func (*Hook) Feature() string { return "inject" }

// Injector is the manifest's [inject] as an observe.Injector; nil without
// one.
func Injector(m *experiment.Manifest) *observe.Injector {
	in := m.Inject
	if in == nil {
		return nil
	}
	return &observe.Injector{Every: in.Every, Hold: in.Hold, SQL: in.SQL, Release: in.Release}
}

// AfterLoad runs the lock and its release once: SQL the server refuses
// fails the cell with the server's own words.
func (h *Hook) AfterLoad(ctx context.Context, c lifecycle.Cell) error {
	inj := Injector(c.Plan().Manifest)
	if inj == nil {
		return nil
	}
	db := c.OpenDB(c.Schema())
	defer db.Close()
	if err := inj.Check(ctx, db); err != nil {
		return fmt.Errorf("[inject] %w", err)
	}
	return nil
}

// Observe starts the injector beside the engine.
func (h *Hook) Observe(ctx context.Context, c lifecycle.Cell) error {
	inj := Injector(c.Plan().Manifest)
	if inj == nil {
		return nil
	}
	cfg := c.Server().Endpoint()
	cfg.DBName = c.Schema()
	db, err := observe.OpenDB(cfg)
	if err != nil {
		c.Record().ObserveNotes = append(c.Record().ObserveNotes, "inject: "+err.Error())
		return nil
	}
	h.inj = inj
	ictx, cancel := context.WithCancel(ctx)
	h.stop, h.done = cancel, make(chan error, 1)
	go func() { h.done <- inj.Run(ictx, db); db.Close() }()
	return nil
}

// Collect stops the injector and records its onsets on the cell.
func (h *Hook) Collect(_ context.Context, c lifecycle.Cell) error {
	if h.stop == nil {
		return nil
	}
	h.stop()
	res := c.Record()
	if err := <-h.done; err != nil {
		res.ObserveNotes = append(res.ObserveNotes, "inject: "+err.Error())
	}
	for _, t := range h.inj.Onsets() {
		res.Injected = append(res.Injected, t.Seconds())
	}
	return nil
}
