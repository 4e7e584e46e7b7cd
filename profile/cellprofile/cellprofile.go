// Package cellprofile is profiling in a cell's lifecycle: a profiler is
// made when the engine's run starts, hears its intervals (the warm-up's
// end starts the recording), and writes the cell's profiles in collect.
package cellprofile

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"benchmatrix/engine"
	"benchmatrix/experiment"
	"benchmatrix/lifecycle"
	"benchmatrix/profile"
	"benchmatrix/record"
	"benchmatrix/server"
)

// Setup runs before the first cell: it removes the perf files of killed
// runs (saying so), and when the plan profiles any cell, checks that perf
// is there and permitted (exit 2 naming the package or the setting).
func Setup(plan *experiment.Plan, tempDir string, notices io.Writer) error {
	profile.RemoveStale(tempDir, func(p string) {
		if notices != nil {
			fmt.Fprintf(notices, "removed %s, perf data left by a benchmatrix process that no longer runs\n", p)
		}
	})
	if !plan.HasProfiles() {
		return nil
	}
	var modes []profile.Mode
	for _, c := range plan.Cells {
		if c.Policy.Profile.CPU() {
			modes = append(modes, profile.OnCPU)
		}
		if c.Policy.Profile.OffCPU() {
			modes = append(modes, profile.OffCPU)
		}
	}
	return profile.Check(modes...)
}

// Writer writes one recording of a cell run under the results directory
// and returns what the record says of it (results.WriteModeProfile):
// given by the runner's list of features, since the report is above the
// features.
type Writer func(outDir, cell string, repeat int, p *profile.Profile, seconds float64) (*record.ModeProfile, error)

// Hook is profiling in one cell.
type Hook struct {
	write Writer
	mu    sync.Mutex
	p     *profiler
}

// New returns the feature's hook maker.
func New(w Writer) lifecycle.NewHook {
	return func() lifecycle.Hook { return &Hook{write: w} }
}

// Feature implements lifecycle.Hook.
func (*Hook) Feature() string { return "profile" }

// BeforeRun makes the cell's profiler.
func (h *Hook) BeforeRun(ctx context.Context, c lifecycle.Cell, o engine.Common) {
	p := start(ctx, c, o, h.write)
	h.mu.Lock()
	h.p = p
	h.mu.Unlock()
}

// Interval passes the engine's intervals to the profiler.
func (h *Hook) Interval(iv engine.Interval) {
	h.mu.Lock()
	p := h.p
	h.mu.Unlock()
	if p != nil {
		p.interval(iv)
	}
}

// Collect writes the cell's profiles.
func (h *Hook) Collect(ctx context.Context, c lifecycle.Cell) error {
	h.mu.Lock()
	p := h.p
	h.mu.Unlock()
	if p != nil {
		p.finish(ctx, c.RunOK())
	}
	return nil
}

// profiler records the server while one cell is measured: it starts when
// the warm-up ends (the last warm-up interval is reported), stops after
// the profiled sub-window or with the measured window, and never outlives
// the cell (finish kills what still runs).
type profiler struct {
	cell   lifecycle.Cell
	write  Writer
	ctx    context.Context
	spec   experiment.ProfileSpec
	warmup time.Duration
	window time.Duration

	mu      sync.Mutex
	started bool
	recs    []*profile.Recording
	timer   *time.Timer
	stopped bool
	notes   []string
	begun   time.Time
}

// start prepares the cell's profiler; with no warm-up it starts at once.
// A cell that is not profiled gets a profiler that does nothing.
func start(ctx context.Context, c lifecycle.Cell, o engine.Common, w Writer) *profiler {
	p := &profiler{cell: c, write: w, ctx: ctx, spec: c.Planned().Policy.Profile, warmup: o.Warmup, window: o.Time}
	if !p.spec.On() {
		return p
	}
	if p.spec.Window > 0 && p.spec.Window < p.window {
		p.window = p.spec.Window
	}
	if p.warmup <= 0 {
		p.begin()
	}
	return p
}

// interval hears the engine's intervals: the last warm-up interval's end
// is the measured window's start.
func (p *profiler) interval(iv engine.Interval) {
	if p.spec.On() && iv.Phase == engine.PhaseWarmup && iv.End >= p.warmup {
		go p.begin()
	}
}

func (p *profiler) begin() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started || p.stopped {
		return
	}
	p.started = true
	pid := 0
	if po, ok := p.cell.Server().(server.ProcessOwner); ok {
		pid = po.PID()
	}
	if pid <= 0 {
		p.notes = append(p.notes, "the server's process id is not known: not profiled")
		return
	}
	hz := p.spec.Hz
	if hz == 0 {
		hz = experiment.DefaultProfileHz
	}
	var modes []profile.Mode
	if p.spec.CPU() {
		modes = append(modes, profile.OnCPU)
	}
	if p.spec.OffCPU() {
		modes = append(modes, profile.OffCPU)
	}
	for _, m := range modes {
		rec, err := profile.Start(p.ctx, profile.Options{Mode: m, PID: pid, Hz: hz, Dir: p.cell.Plan().Manifest.Server.TempDir})
		if err != nil {
			p.notes = append(p.notes, fmt.Sprintf("%s profile: %v", m, err))
			continue
		}
		p.recs = append(p.recs, rec)
	}
	p.begun = time.Now()
	p.timer = time.AfterFunc(p.window, p.stopRecordings)
	fmt.Fprintf(p.cell.Log(), "    profiling pid %d (%s) for %s\n", pid, p.spec.Mode, p.window)
}

// stopRecordings ends every recording (SIGINT: perf writes its data).
func (p *profiler) stopRecordings() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	for _, rec := range p.recs {
		rec.Interrupt() // every recording's window ends at once
	}
	for _, rec := range p.recs {
		if err := rec.Stop(); err != nil {
			p.notes = append(p.notes, err.Error())
		}
	}
}

// finish stops what still records, reads the recordings and writes the
// cell's profiles; on a failed or interrupted cell it only kills perf and
// removes its files.
func (p *profiler) finish(ctx context.Context, ok bool) {
	if !p.spec.On() {
		return
	}
	p.mu.Lock()
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()
	if !ok || ctx.Err() != nil {
		p.mu.Lock()
		p.stopped = true
		for _, rec := range p.recs {
			rec.Kill()
		}
		p.mu.Unlock()
		return
	}
	p.stopRecordings()
	p.mu.Lock()
	defer p.mu.Unlock()
	cp := &record.CellProfile{Mode: p.spec.Mode, Notes: p.notes}
	if !p.started {
		cp.Notes = append(cp.Notes, "the measured window ended before the profiler started")
	}
	comm := ""
	if po, ok := p.cell.Server().(server.ProcessOwner); ok {
		comm = profile.ProcessName(po.PID())
	}
	c, outDir := p.cell.Planned(), p.cell.OutDir()
	for _, rec := range p.recs {
		cp.Seconds = rec.Seconds()
		prof, err := rec.Result(ctx, comm)
		if err != nil {
			cp.Notes = append(cp.Notes, err.Error())
			continue
		}
		if outDir == "" {
			cp.Notes = append(cp.Notes, "no results directory: profiles not written")
			continue
		}
		mp, err := p.write(outDir, c.Name, c.Repeat, prof, rec.Seconds())
		if err != nil {
			cp.Notes = append(cp.Notes, fmt.Sprintf("writing the %s profile: %v", prof.Mode, err))
			continue
		}
		if mp.Empty {
			fmt.Fprintf(p.cell.Log(), "    %s profile: no samples captured\n", prof.Mode)
		}
		if prof.Mode == profile.OnCPU {
			cp.CPU = mp
		} else {
			cp.OffCPU = mp
		}
	}
	p.cell.Record().Profile = cp
}
