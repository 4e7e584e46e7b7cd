package watch

import (
	"context"
	"database/sql"
	"math"
	"strconv"
	"strings"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/experiment"
	"benchmatrix/observe"
)

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

// NodeColumns are the node and user-metric columns of intervals.csv
// after the sampler's: every observed cell's, in order of appearance.
func NodeColumns(p *experiment.Plan) []string {
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

// Columns are the sampled columns of intervals.csv: the observer's and
// the nodes', when any cell observes.
func Columns(p *experiment.Plan) []string {
	for _, c := range p.Cells {
		if c.Policy.Observe {
			return append(observe.Columns(), NodeColumns(p)...)
		}
	}
	return nil
}

// UserMetricColumns are the intervals.csv columns of the user's metrics
// (bare on a single server, node-prefixed on a topology), for the plots.
func UserMetricColumns(p *experiment.Plan) []string {
	metrics := nodeMetrics(p.Manifest)
	if len(metrics) == 0 {
		return nil
	}
	user := map[string]bool{}
	for _, m := range metrics {
		user[m.Name] = true
	}
	var out []string
	for _, col := range NodeColumns(p) {
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

// nodeWatch samples the nodes of one cell.
type nodeWatch struct {
	sampler *observe.NodeSampler
	dbs     []*sql.DB
	err     error // a user metric the server refused: fails the cell
}

// startNodes opens a connection per node and starts their sampler.
func (w *watch) startNodes(ctx context.Context) {
	c := w.cell.Planned()
	cl := w.cluster()
	metrics := nodeMetrics(w.cell.Plan().Manifest)
	if cl == nil && len(metrics) == 0 {
		return
	}
	nw := &nodeWatch{}
	w.nodes = nw
	if c.Policy.Observe {
		srcs := nodeSources(c.Topology)
		var primary *sql.DB
		for i := range srcs {
			cfg := w.cell.Server().Endpoint()
			if cl != nil {
				cfg = cl.Nodes()[i].Endpoint()
			}
			cfg.Timeout = time.Second
			cfg.DBName = w.cell.Schema() // a user metric may read the workload's tables
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
	extra := NodeColumns(w.cell.Plan())
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
	extra := NodeColumns(w.cell.Plan())
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
