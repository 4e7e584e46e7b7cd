// Package watch is observation in a cell's lifecycle: the sampler runs
// beside the workload on its own connection from the warm-up on, table and
// wait snapshots are taken before and after, and what was seen is recorded
// on the cell: metrics per interval, stalls and their likely causes,
// growth, waits. On a topology every node is sampled beside the primary
// (node-prefixed columns: node2.seconds_behind), and the user's
// [[observe.metric]] are read on every node (or the one they name), or on
// the single server.
package watch

import (
	"context"
	"database/sql"
	"time"

	"benchmatrix/analysis"
	"benchmatrix/engine"
	"benchmatrix/lifecycle"
	"benchmatrix/observe"
	"benchmatrix/record"
	"benchmatrix/server"
	"benchmatrix/topology"
)

// TopWaits is how many performance_schema wait events a cell keeps.
const TopWaits = 10

// Mechanism links what the sampler saw to the cell's throughput
// (results.Observe): given by the runner's list of features, since the
// report is above the features.
type Mechanism func(c *record.Cell, columns []string)

// Hook is observation in one cell: it starts before the warm-up and
// collects after the run.
type Hook struct {
	mechanism Mechanism
	w         *watch
}

// New returns the feature's hook maker.
func New(m Mechanism) lifecycle.NewHook {
	return func() lifecycle.Hook { return &Hook{mechanism: m} }
}

// Feature implements lifecycle.Hook.
func (*Hook) Feature() string { return "observe" }

// Observe starts the cell's watch; a node sampler that cannot start fails
// the cell before it runs.
func (h *Hook) Observe(ctx context.Context, c lifecycle.Cell) error {
	h.w = start(ctx, c)
	return h.w.failed()
}

// Collect stops the watch and records what it saw; nothing more is asked
// of a server that stopped answering.
func (h *Hook) Collect(ctx context.Context, c lifecycle.Cell) error {
	if h.w == nil {
		return nil
	}
	sctx, cancel := c.Settle(ctx)
	defer cancel()
	h.w.stop(sctx, h.mechanism)
	return nil
}

// watch is what observes one cell.
type watch struct {
	cell    lifecycle.Cell
	res     *record.Cell
	db      *sql.DB
	sampler *observe.Sampler

	closeSampler func() error
	nodes        *nodeWatch // nodes.go

	tablesBefore observe.TableStat
	haveBefore   bool
	waitsBefore  observe.WaitSnapshot
}

// start takes the "before" snapshots and starts the sampler. Observation
// never fails a cell: what cannot be observed is noted and left empty.
func start(ctx context.Context, cell lifecycle.Cell) *watch {
	c, res, srv := cell.Planned(), cell.Record(), cell.Server()
	w := &watch{cell: cell, res: res}
	w.startNodes(ctx) // nodes.go
	if !c.Policy.Observe {
		return w
	}
	cfg := srv.Endpoint()
	db, err := observe.OpenDB(cfg)
	if err != nil {
		res.ObserveNotes = append(res.ObserveNotes, "observe: "+err.Error())
		return w
	}
	w.db = db
	if st, err := observe.TableStats(ctx, db, cell.Schema(), c.Workload.Data().Tables); err == nil {
		w.tablesBefore, w.haveBefore = st, true
	} else {
		res.ObserveNotes = append(res.ObserveNotes, "table sizes: "+err.Error())
	}
	if ws, err := observe.Waits(ctx, db); err == nil {
		w.waitsBefore = ws
	}
	sdb, err := observe.OpenDB(cfg)
	if err == nil {
		pid := 0
		if p, ok := srv.(server.ProcessOwner); ok {
			pid = p.PID()
		}
		info := srv.Info()
		var cg server.CgroupPaths // the server's own cgroup: cg_* columns
		if l, ok := srv.(server.Limiter); ok {
			cg, _ = l.Cgroup()
		}
		var peers []int // a topology's other nodes: the server's own load
		if p, ok := srv.(interface{ PeerPIDs() []int }); ok {
			peers = p.PeerPIDs()
		}
		w.sampler, err = observe.Start(ctx, observe.Config{DB: sdb, Flavor: info.Flavor, Datadir: info.Datadir, ServerPID: pid,
			PeerPIDs: peers, Cgroup: cg, Tables: w.idTables()})
		if err != nil {
			sdb.Close()
			res.ObserveNotes = append(res.ObserveNotes, "sampler: "+err.Error())
		} else {
			w.closeSampler = sdb.Close
		}
	}
	return w
}

// idTables are the workload tables with an id to sample each second
// (table_max_id, table_rows_est): those the "before" snapshot found with one.
func (w *watch) idTables() observe.Tables {
	t := observe.Tables{Schema: w.cell.Schema()}
	if !w.haveBefore {
		return t
	}
	for _, ti := range w.tablesBefore.Tables {
		if ti.MaxID >= 0 {
			t.Names = append(t.Names, ti.Name)
		}
	}
	return t
}

// stop ends the sampler and records what it saw, with the measured
// intervals: metrics per interval, stalls, growth, waits. The injector's
// onsets (observe/inject) are on the cell already.
func (w *watch) stop(ctx context.Context, mechanism Mechanism) {
	res, c := w.res, w.cell.Planned()
	m := w.cell.Plan().Manifest
	w.endNodes() // nodes.go
	if w.db == nil {
		return
	}
	defer w.db.Close()
	var rows []observe.Row
	if w.sampler != nil {
		samples := w.sampler.Stop()
		res.ObserveNotes = append(res.ObserveNotes, w.sampler.Notes()...)
		w.closeSampler()
		rows = observe.Align(observe.Rates(samples), time.Second, len(res.Intervals))
		res.Metrics = make([][]float64, len(rows))
		for i, row := range rows {
			res.Metrics[i] = row.Values
		}
	}
	rows = w.stopNodes(rows) // nodes.go
	if !c.Policy.Observe {
		return
	}
	// Stalls in the measured window only; the sampled rows alongside.
	var tps []float64
	var runRows []observe.Row
	for i, iv := range res.Intervals {
		if iv.Phase != engine.PhaseRun {
			continue
		}
		if s := iv.Seconds(); s > 0 {
			tps = append(tps, float64(iv.Events)/s)
			if i < len(rows) {
				runRows = append(runRows, rows[i])
			}
		}
	}
	if len(tps) > 0 {
		opt := observe.StallOptions{Fraction: m.StallThreshold}
		if len(runRows) == len(tps) {
			opt.Starved = observe.Starved(runRows) // the host's dips are not the server's stalls
			opt.OtherIO = observe.OtherIODominated(runRows)
		}
		rep := observe.DetectStalls(tps, time.Second, opt)
		res.Stalls = &rep
		if len(runRows) == len(tps) {
			res.StallEvidence = observe.MovedAtOnsets(runRows, rep.Episodes)
			w.nodeEvidence(runRows, rep.Episodes) // nodes.go
			res.StallCauses = w.stallCauses(ctx, runRows, rep.Episodes)
		}
		if m.Inject != nil {
			// Onsets on the cell's clock: the start of the episode's first
			// measured interval.
			var run []engine.Interval
			for _, iv := range res.Intervals {
				if iv.Phase == engine.PhaseRun && iv.Seconds() > 0 {
					run = append(run, iv)
				}
			}
			var detected []float64
			for _, ep := range rep.Episodes {
				if ep.Start < len(run) {
					detected = append(detected, run[ep.Start].Start.Seconds())
				}
			}
			if len(run) > 0 {
				mo := observe.MatchOnsets(detected, res.Injected, run[0].Start.Seconds(), run[len(run)-1].End.Seconds())
				res.Detector = &mo
			}
		}
	}
	mechanism(res, observe.Columns())
	if ws, err := observe.Waits(ctx, w.db); err == nil {
		res.Waits = observe.TopWaits(w.waitsBefore, ws, TopWaits)
	}
	if w.haveBefore {
		if after, err := observe.TableStats(ctx, w.db, w.cell.Schema(), c.Workload.Data().Tables); err == nil {
			g := observe.Growth(w.tablesBefore, after)
			res.Growth = &record.Growth{RowsBefore: w.tablesBefore.Rows, RowsAfter: after.Rows, RowsDelta: g.Rows, RowsExact: g.RowsExact,
				BytesBefore: w.tablesBefore.DataBytes + w.tablesBefore.IndexBytes, BytesAfter: after.DataBytes + after.IndexBytes,
				MaxIDBefore: w.tablesBefore.MaxID, MaxIDAfter: after.MaxID}
		} else {
			res.ObserveNotes = append(res.ObserveNotes, "table sizes after: "+err.Error())
		}
	}
	analysis.ObserveWarmth(res, observe.Columns(), analysis.DefaultSettleRule) // the time to a steady state, the data against memory
}

// stallCauses is each stall's likely cause (observe/stall_cause.go), with
// the redo log's capacity and the cell's disk limits.
func (w *watch) stallCauses(ctx context.Context, rows []observe.Row, episodes []observe.Episode) []string {
	if len(episodes) == 0 {
		return nil
	}
	l := w.cell.Planned().Limits
	cx := observe.CauseContext{WriteIOPS: float64(l.DiskWriteIOPS), ReadIOPS: float64(l.DiskReadIOPS),
		WriteKBps: float64(l.DiskWriteBPS) / 1024, ReadKBps: float64(l.DiskReadBPS) / 1024}
	if kb, err := observe.LogCapacityKB(ctx, w.db); err == nil {
		cx.LogCapacityKB = kb
	}
	names := append(observe.Columns(), NodeColumns(w.cell.Plan())...)
	var out []string
	for _, c := range observe.LikelyCauses(names, rows, episodes, cx) {
		out = append(out, c.Text())
	}
	return out
}

// cluster is the cell's running cluster, or nil on a single server.
func (w *watch) cluster() *topology.Cluster { return topology.Of(w.cell.Server()) }
