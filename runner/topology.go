package runner

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/catalog"
	"benchmatrix/experiment"
	"benchmatrix/observe"
	"benchmatrix/record"
	"benchmatrix/server"
	"benchmatrix/topology"
)

// Topologies in the runner: a cell whose [topology] is a cluster runs on
// a topology.Cluster (a server.Server on node 1, where the workload runs);
// its data is compared on every node after loading and after the cell;
// every node is sampled each second beside the primary (node-prefixed
// columns in intervals.csv: node2.seconds_behind); [[events]] act on
// nodes during the cell; the user's [[observe.metric]] are read on every
// node (or the one they name), or on the single server.

// verifyTimeout bounds the wait for the nodes to apply what the primary
// committed before their data is compared.
const verifyTimeout = 2 * time.Minute

// openTopology starts the cell's cluster (Opener).
func openTopology(ctx context.Context, spec experiment.ServerSpec, s StartSpec) (server.Server, error) {
	cfg := topology.Config{Topology: *s.Topology, Binary: spec.Binary, TempDir: spec.TempDir, Startup: s.Startup,
		Provider: spec.Provider, Image: s.Image, DSNs: spec.DSNs, Log: s.Log}
	if spec.Provider == catalog.External {
		// Existing servers, one DSN per node: checked, never started.
		a, err := topology.Attach(ctx, cfg)
		if err != nil {
			return nil, err // not a nil *Attached in an interface
		}
		return a, nil
	}
	return topology.Open(ctx, cfg)
}

// topologyChanged reports whether the cell needs another cluster than the
// running one (another kind, node count or replication mode).
func (r *Runner) topologyChanged(c *experiment.Cell) bool {
	return r.srv != nil && c.Topology.Key() != r.topo
}

// cluster is the running cluster, or nil on a single server.
func (r *Runner) cluster() *topology.Cluster {
	return topology.Of(r.srv)
}

// topologyRecord starts the cell's topology record.
func (r *Runner) topologyRecord(res *record.Cell) *record.TopologyResult {
	cl := r.cluster()
	if cl == nil {
		return nil
	}
	if res.Topology == nil {
		t := &record.TopologyResult{Kind: cl.Topology().Kind}
		for _, n := range cl.Nodes() {
			t.Nodes = append(t.Nodes, fmt.Sprintf("%s=%s (%s)", n.Name, n.Server().Info().Address, n.Role))
		}
		res.Topology = t
	}
	return res.Topology
}

// applyOnNodes sets the cell's dynamic variables on the other nodes, and
// its Galera flow-control limit on every node.
func (r *Runner) applyOnNodes(ctx context.Context, c *experiment.Cell, dyn []server.Setting) error {
	cl := r.cluster()
	if cl == nil {
		return nil
	}
	if len(dyn) > 0 {
		if err := cl.Apply(ctx, dyn); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
	}
	if c.Topology != nil && c.Topology.FCLimit > 0 {
		if err := cl.SetFCLimit(ctx, c.Topology.FCLimit); err != nil {
			return fmt.Errorf("fc_limit: %w", err)
		}
	}
	return nil
}

// healNodes brings every node back before a cell (after a failed cell's
// events, say); a cluster that cannot be healed is started again.
func (r *Runner) healNodes(ctx context.Context, res *record.Cell) error {
	cl := r.cluster()
	if cl == nil {
		return nil
	}
	healed, err := cl.Heal(ctx)
	for _, h := range healed {
		fmt.Fprintf(r.log, "    before the cell: %s\n", h)
	}
	if err == nil {
		return nil
	}
	if _, borrowed := r.srv.(server.Borrowed); borrowed {
		return fmt.Errorf("the existing topology is not as it was: %w", err)
	}
	fmt.Fprintf(r.log, "    the cluster did not heal (%v); starting it again\n", err)
	r.loaded = ""
	if err := r.restart(ctx, r.srv.Startup()); err != nil {
		return fmt.Errorf("the cluster did not come back: %w", err)
	}
	res.Restarted = true
	return nil
}

// verifyNodes compares the workload's tables on every node; different
// data fails the cell.
func (r *Runner) verifyNodes(ctx context.Context, c *experiment.Cell, res *record.Cell, when string) error {
	cl := r.cluster()
	if cl == nil {
		return nil
	}
	t := r.topologyRecord(res)
	if when == "after the cell" {
		// A node that died by itself during the cell (no [[events]] entry
		// stopped it) is started again like a planned one, so that the
		// next cell has its whole cluster, but this cell measured another
		// cluster than it names: it fails, naming the node and how it
		// ended, and stays out of every comparison.
		died := cl.Unplanned() // topology/faults.go
		tail := ""
		for _, d := range died {
			fmt.Fprintf(r.log, "    %s\n", d)
		}
		if len(died) > 0 {
			tail = cl.LogTail(10) // before the restart adds its lines
		}
		healed, err := cl.Heal(ctx)
		t.Healed = append(t.Healed, healed...)
		for _, h := range healed {
			fmt.Fprintf(r.log, "    %s\n", h)
		}
		if len(died) > 0 {
			res.ServerLog = tail
			return fmt.Errorf("during the cell %s", strings.Join(died, "; "))
		}
		if err != nil {
			return fmt.Errorf("after the cell's events: %w", err)
		}
	}
	tables := c.Workload.Data().Tables
	if len(tables) == 0 {
		return nil
	}
	r.cfg.Progress.Phase("verify nodes")
	ck, err := cl.Verify(ctx, r.schema, tables, when, verifyTimeout)
	if err != nil {
		return fmt.Errorf("verify the nodes' data %s: %w", when, err)
	}
	fmt.Fprintf(r.log, "    %s\n", ck.Summary())
	t.Checks = append(t.Checks, record.DataCheck{When: when, Equal: ck.Equal, Summary: ck.Summary(), Differences: ck.Differences})
	if !ck.Equal {
		return fmt.Errorf("the nodes' data differ %s: %s", when, strings.Join(ck.Differences, "; "))
	}
	return nil
}

// nodeSources describes the nodes of a topology for sampling (without
// connections: for column names); a single server is one nameless source.
func nodeSources(t *experiment.Topology) []observe.NodeSource {
	if !t.IsCluster() {
		return []observe.NodeSource{{Index: 1}}
	}
	var out []observe.NodeSource
	for i := 1; i <= t.NodeCount(); i++ {
		src := observe.NodeSource{Index: i, Name: "node" + strconv.Itoa(i), Role: t.Describe().Role(i)}
		src.SemiSync = t.SemiSync && src.Role == catalog.RolePrimary
		out = append(out, src)
	}
	return out
}

func nodeMetrics(m *experiment.Manifest) []observe.NodeMetric {
	var out []observe.NodeMetric
	for _, cm := range m.Metrics {
		out = append(out, observe.NodeMetric{Name: cm.Name, SQL: cm.SQL, Rate: cm.Kind == experiment.MetricRate, Node: cm.Node})
	}
	return out
}

// topologyColumns are the node and user-metric columns of intervals.csv
// after the sampler's: every observed cell's, in order of appearance.
func topologyColumns(p *experiment.Plan) []string {
	seen := map[string]bool{}
	var out []string
	metrics := nodeMetrics(p.Manifest)
	for _, c := range p.Cells {
		if !c.Policy.Observe {
			continue
		}
		for _, src := range nodeSources(c.Topology) {
			if src.Name == "" && len(metrics) == 0 {
				continue
			}
			for _, col := range observe.NodeColumns(src, metrics) {
				if !seen[col] {
					seen[col] = true
					out = append(out, col)
				}
			}
		}
	}
	return out
}

// nodeWatch samples the nodes of one cell.
type nodeWatch struct {
	sampler *observe.NodeSampler
	dbs     []*sql.DB
	err     error // a user metric the server refused: fails the cell
}

// startNodes opens a connection per node and starts their sampler.
func (w *watch) startNodes(ctx context.Context) {
	r, c := w.r, w.c
	cl := r.cluster()
	metrics := nodeMetrics(r.m)
	if cl == nil && len(metrics) == 0 {
		return
	}
	nw := &nodeWatch{}
	w.nodes = nw
	if c.Policy.Observe {
		srcs := nodeSources(c.Topology)
		var primary *sql.DB
		for i := range srcs {
			cfg := r.srv.Endpoint()
			if cl != nil {
				cfg = cl.Nodes()[i].Endpoint()
			}
			cfg.Timeout = time.Second
			cfg.DBName = r.schema // a user metric may read the workload's tables
			db, err := observe.OpenDB(cfg)
			if err != nil {
				w.res.ObserveNotes = append(w.res.ObserveNotes, "node sampler: "+err.Error())
				return
			}
			nw.dbs = append(nw.dbs, db)
			srcs[i].DB = db
			if i == 0 {
				primary = db
			}
		}
		for i := range srcs {
			srcs[i].Primary = primary
		}
		s, err := observe.StartNodes(ctx, srcs, metrics)
		if err != nil {
			nw.err = err
			return
		}
		nw.sampler = s
	}
}

// failed is the error that must fail the cell before it runs.
func (w *watch) failed() error {
	if w.nodes != nil {
		return w.nodes.err
	}
	return nil
}

// stopNodes ends the node sampler, widens the cell's rows
// with the node columns (in the run's column order) and adds the nodes'
// movers to the stall evidence.
func (w *watch) stopNodes(rows []observe.Row) []observe.Row {
	nw := w.nodes
	if nw == nil {
		return rows
	}
	res := w.res
	defer func() {
		for _, db := range nw.dbs {
			db.Close()
		}
	}()
	if nw.sampler == nil {
		return rows
	}
	n := len(res.Intervals)
	nodeRows := nw.sampler.Stop(n)
	res.ObserveNotes = append(res.ObserveNotes, nw.sampler.Notes()...)
	idx := map[string]int{}
	for j, col := range nw.sampler.Columns() {
		idx[col] = j
	}
	extra := topologyColumns(w.r.plan)
	base := len(observe.Columns())
	if rows == nil {
		rows = make([]observe.Row, n)
		for k := range rows {
			rows[k] = observe.Row{T: time.Duration(k+1) * time.Second, Dt: time.Second, Values: nanRow(base)}
		}
	}
	for k := range rows {
		vals := append([]float64(nil), rows[k].Values...)
		for len(vals) < base {
			vals = append(vals, nanRow(1)...)
		}
		for _, col := range extra {
			v := nanRow(1)[0]
			if j, ok := idx[col]; ok && k < len(nodeRows) && j < len(nodeRows[k].Values) {
				v = nodeRows[k].Values[j]
			}
			vals = append(vals, v)
		}
		rows[k].Values = vals
	}
	res.Metrics = make([][]float64, len(rows))
	for i, row := range rows {
		res.Metrics[i] = row.Values
	}
	return rows
}

// nodeEvidence adds the node columns that moved at the stall onsets to
// the cell's evidence, strongest first beside the server's own.
func (w *watch) nodeEvidence(runRows []observe.Row, episodes []observe.Episode) {
	if w.nodes == nil || w.nodes.sampler == nil || len(episodes) == 0 {
		return
	}
	base := len(observe.Columns())
	extra := topologyColumns(w.r.plan)
	names := make([]string, base+len(extra))
	copy(names[base:], extra)
	moves := observe.MovedAtOnsetsIn(names, runRows, episodes)
	var out []string
	for _, m := range moves {
		out = append(out, m.Text)
	}
	// Node movers first: on a cluster they are the question.
	w.res.StallEvidence = append(out, w.res.StallEvidence...)
}

var nanValue = math.NaN()

func nanRow(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = nanValue
	}
	return out
}

// endNodes stops the node sampler when there is no server sampler (no
// connection) to stop it with.
func (w *watch) endNodes() {
	nw := w.nodes
	if nw == nil {
		return
	}
	if w.db == nil {
		if nw.sampler != nil {
			nw.sampler.Stop(0)
			nw.sampler = nil
		}
		for _, db := range nw.dbs {
			db.Close()
		}
		nw.dbs = nil
	}
}

// spreadWriters makes a Galera cell with writers = "all" dial its
// connections over the nodes in turn (connection i to node i mod N): the
// engine then leaves its own blocking sockets aside and uses this dialer.
func (r *Runner) spreadWriters(c *experiment.Cell, cfg *mysql.Config) {
	cl := r.cluster()
	if cl == nil || c.Topology == nil || c.Topology.Writers != "all" || !c.Topology.Describe().MultiWriter {
		return
	}
	var addrs []string
	for _, n := range cl.Nodes() {
		addrs = append(addrs, n.Endpoint().Addr)
	}
	var next atomic.Uint64
	cfg.DialFunc = func(ctx context.Context, network, _ string) (net.Conn, error) {
		a := addrs[(next.Add(1)-1)%uint64(len(addrs))]
		return (&net.Dialer{}).DialContext(ctx, network, a)
	}
}

// userMetricColumns are the intervals.csv columns of the user's metrics
// (bare on a single server, node-prefixed on a topology), for the plots.
func userMetricColumns(p *experiment.Plan) []string {
	metrics := nodeMetrics(p.Manifest)
	if len(metrics) == 0 {
		return nil
	}
	user := map[string]bool{}
	for _, m := range metrics {
		user[m.Name] = true
	}
	var out []string
	for _, col := range topologyColumns(p) {
		name := col
		if i := strings.LastIndex(col, "."); i >= 0 {
			name = col[i+1:]
		}
		if user[name] {
			out = append(out, col)
		}
	}
	return out
}
