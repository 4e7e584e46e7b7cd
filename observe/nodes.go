package observe

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"benchmatrix/catalog"
)

// Per-node sampling for topologies, and the user's own metrics. Each node
// has its own goroutine and connection: a paused node (SIGSTOP) blocks
// only its own reads, which time out and leave its cells empty. Columns
// are named after the node: node2.seconds_behind,
// node3.wsrep_flow_control_paused; a custom metric on a single server is
// its bare name.

// NodeMetric is a user metric ([[observe.metric]]): SQL returning one
// numeric value (or name/value rows, summed), a rate or a gauge.
type NodeMetric struct {
	Name string
	SQL  string
	Rate bool
	// Node is the only node it is read on (1 = the primary); 0: every
	// node.
	Node int
}

// NodeSource is one node to sample.
type NodeSource struct {
	Index int          // 1 for the primary
	Name  string       // "node2"; "" for a single server (bare column names)
	Role  catalog.Role // chooses the built-in columns
	DB    *sql.DB
	// Primary is node 1's connection, for a replica's lag in
	// transactions (its GTID position against the primary's).
	Primary *sql.DB
	// SemiSync: the primary's Rpl_semi_sync_master_* columns.
	SemiSync bool
}

// A node column: its metric name and how to read it from two samples.
type nodeColumn struct {
	name string
	doc  string
	read func(prev, cur *nodeSample, dt float64) float64
}

type nodeSample struct {
	t      time.Duration
	ok     bool
	status map[string]float64 // lower-case names
	slave  map[string]string
	lag    float64 // transactions the replica is behind (NaN unknown)
	custom map[string]float64
}

func asRead(name string) func(_, cur *nodeSample, _ float64) float64 {
	return func(_, cur *nodeSample, _ float64) float64 { return statusValue(cur, name) }
}

func perSecond(name string) func(prev, cur *nodeSample, dt float64) float64 {
	return func(prev, cur *nodeSample, dt float64) float64 {
		a, b := statusValue(prev, name), statusValue(cur, name)
		if math.IsNaN(a) || math.IsNaN(b) || b < a || dt <= 0 {
			return nan
		}
		return (b - a) / dt
	}
}

func statusValue(s *nodeSample, name string) float64 {
	if s == nil || !s.ok {
		return nan
	}
	v, ok := s.status[name]
	if !ok {
		return nan
	}
	return v
}

func slaveValue(s *nodeSample, col string) float64 {
	if s == nil || !s.ok || s.slave == nil {
		return nan
	}
	v, ok := s.slave[col]
	if !ok {
		return nan
	}
	switch v {
	case "Yes":
		return 1
	case "No", "Connecting", "Preparing":
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return nan
	}
	return f
}

var replicaColumns = []nodeColumn{
	{"seconds_behind", "Seconds_Behind_Master (empty while the SQL thread is stopped)", func(_, c *nodeSample, _ float64) float64 { return slaveValue(c, "Seconds_Behind_Master") }},
	{"lag_trx", "transactions the replica is behind: the primary's gtid_binlog_pos minus its gtid_slave_pos", func(_, c *nodeSample, _ float64) float64 {
		if c == nil || !c.ok {
			return nan
		}
		return c.lag
	}},
	{"relay_log_space", "Relay_Log_Space, bytes", func(_, c *nodeSample, _ float64) float64 { return slaveValue(c, "Relay_Log_Space") }},
	{"io_running", "1 while the IO thread runs", func(_, c *nodeSample, _ float64) float64 { return slaveValue(c, "Slave_IO_Running") }},
	{"sql_running", "1 while the SQL thread runs", func(_, c *nodeSample, _ float64) float64 { return slaveValue(c, "Slave_SQL_Running") }},
}

var semiSyncColumns = []nodeColumn{
	{"semi_sync_on", "Rpl_semi_sync_master_status: 1 semi-synchronous, 0 fallen back to asynchronous", asRead("rpl_semi_sync_master_status")},
	{"semi_sync_yes_tx", "commits acknowledged by a replica per second (Rpl_semi_sync_master_yes_tx)", perSecond("rpl_semi_sync_master_yes_tx")},
	{"semi_sync_no_tx", "commits not acknowledged per second (Rpl_semi_sync_master_no_tx: the fallbacks)", perSecond("rpl_semi_sync_master_no_tx")},
	{"semi_sync_tx_waits", "commits that waited for an acknowledgement per second (Rpl_semi_sync_master_tx_waits)", perSecond("rpl_semi_sync_master_tx_waits")},
	{"semi_sync_avg_wait_us", "Rpl_semi_sync_master_tx_avg_wait_time, µs", asRead("rpl_semi_sync_master_tx_avg_wait_time")},
}

var galeraColumns = []nodeColumn{
	{"wsrep_flow_control_paused", "fraction of the interval replication was paused by flow control (change of wsrep_flow_control_paused_ns)", func(p, c *nodeSample, dt float64) float64 {
		v := perSecond("wsrep_flow_control_paused_ns")(p, c, dt)
		return v / 1e9
	}},
	{"wsrep_flow_control_sent", "flow-control pause messages this node sent per second", perSecond("wsrep_flow_control_sent")},
	{"wsrep_flow_control_recv", "flow-control pause messages received per second", perSecond("wsrep_flow_control_recv")},
	{"wsrep_local_recv_queue", "write-sets waiting to be applied (now)", asRead("wsrep_local_recv_queue")},
	{"wsrep_local_send_queue", "write-sets waiting to be sent (now)", asRead("wsrep_local_send_queue")},
	{"wsrep_cert_deps_distance", "average distance between write-sets that can apply in parallel", asRead("wsrep_cert_deps_distance")},
	{"wsrep_local_cert_failures", "certification failures per second", perSecond("wsrep_local_cert_failures")},
	{"wsrep_cluster_size", "nodes in the cluster as this node sees it", asRead("wsrep_cluster_size")},
	{"wsrep_local_state", "4 Synced, 2 Donor, 1 Joining, 3 Joined", asRead("wsrep_local_state")},
}

// answered is 1 when the node answered the second's reads, 0 when it did
// not (paused, stopped, killed): the first thing to look at in a stall.
var answered = nodeColumn{"answered", "1 when the node answered within the second, 0 when not (paused, stopped, killed)",
	func(_, c *nodeSample, _ float64) float64 {
		if c != nil && c.ok {
			return 1
		}
		return 0
	}}

// roleSampling is what the sampler reads on a node of one role, beside
// its global status, and the built-in columns it reports from that.
type roleSampling struct {
	// columns are the role's columns; semiSync: the topology runs
	// semi-synchronous replication.
	columns func(semiSync bool) []nodeColumn
	// read, when not nil, adds the role's own reads to the second's
	// sample (its status map is read).
	read func(ctx context.Context, n NodeSource, smp *nodeSample) error
}

// roleSamplings are the roles of catalog's topology kinds: a new kind's
// role is one row. A single server (RoleSingle) has none: only the user's
// metrics.
var roleSamplings = map[catalog.Role]roleSampling{
	catalog.RoleReplica: {columns: always(replicaColumns), read: readReplica},
	catalog.RolePrimary: {columns: func(semiSync bool) []nodeColumn {
		if semiSync {
			return semiSyncColumns
		}
		return nil
	}},
	catalog.RoleGalera: {columns: always(galeraColumns)},
	catalog.RoleGroup:  {columns: always(groupColumns), read: readGroup},
}

func always(cols []nodeColumn) func(bool) []nodeColumn {
	return func(bool) []nodeColumn { return cols }
}

// nodeColumnsFor are the built-in columns of a node of a role.
func nodeColumnsFor(role catalog.Role, semiSync bool) []nodeColumn {
	r, ok := roleSamplings[role]
	if !ok {
		return nil // a single server: only the user's metrics
	}
	return append([]nodeColumn{answered}, r.columns(semiSync)...)
}

// NodeColumns names a node's columns: its built-in ones, then the user's
// metrics read on it.
func NodeColumns(src NodeSource, metrics []NodeMetric) []string {
	var out []string
	for _, c := range nodeColumnsFor(src.Role, src.SemiSync) {
		out = append(out, prefixed(src.Name, c.name))
	}
	for _, m := range metrics {
		if m.Node == 0 || m.Node == src.Index {
			out = append(out, prefixed(src.Name, m.Name))
		}
	}
	return out
}

func prefixed(node, name string) string {
	if node == "" {
		return name
	}
	return node + "." + name
}

// NodeColumnDocs describes the built-in node columns (for docs/topologies.md and
// run.json), by their name without the node.
func NodeColumnDocs() map[string]string {
	out := map[string]string{answered.name: answered.doc}
	for _, r := range roleSamplings {
		for _, c := range r.columns(true) {
			out[c.name] = c.doc
		}
	}
	return out
}

// NodeSampler samples every node each second.
type NodeSampler struct {
	start   time.Time
	nodes   []NodeSource
	metrics []NodeMetric
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu      sync.Mutex
	samples [][]nodeSample // per node
	notes   []string
}

// queryTimeout bounds one node's reads in a tick: a paused node must not
// hold the others.
const queryTimeout = 800 * time.Millisecond

// StartNodes checks the user's metrics once on every node they are read
// on (bad SQL is an error with the server's own message, before anything
// runs), then samples every node each second until Stop.
func StartNodes(ctx context.Context, nodes []NodeSource, metrics []NodeMetric) (*NodeSampler, error) {
	for _, n := range nodes {
		for _, m := range metrics {
			if m.Node != 0 && m.Node != n.Index {
				continue
			}
			if _, err := readMetric(ctx, n.DB, m.SQL); err != nil {
				return nil, fmt.Errorf("[[observe.metric]] %s on %s: %w", m.Name, nodeLabel(n), err)
			}
		}
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &NodeSampler{start: time.Now(), nodes: nodes, metrics: metrics, cancel: cancel, samples: make([][]nodeSample, len(nodes))}
	for i := range nodes {
		s.wg.Add(1)
		go s.loop(sctx, i)
	}
	return s, nil
}

func nodeLabel(n NodeSource) string {
	if n.Name == "" {
		return "the server"
	}
	return n.Name
}

func (s *NodeSampler) loop(ctx context.Context, i int) {
	defer s.wg.Done()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	s.take(ctx, i)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s.take(ctx, i)
		}
	}
}

func (s *NodeSampler) take(ctx context.Context, i int) {
	n := s.nodes[i]
	t := time.Since(s.start)
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	smp := nodeSample{t: t, lag: nan}
	var err error
	smp.status, err = statusMap(qctx, n.DB)
	if r := roleSamplings[n.Role]; err == nil && r.read != nil {
		err = r.read(qctx, n, &smp)
	}
	if err == nil {
		for _, m := range s.metrics {
			if m.Node != 0 && m.Node != n.Index {
				continue
			}
			v, merr := readMetric(qctx, n.DB, m.SQL)
			if merr != nil {
				s.note(fmt.Sprintf("[[observe.metric]] %s on %s: %v", m.Name, nodeLabel(n), merr))
				continue
			}
			if smp.custom == nil {
				smp.custom = map[string]float64{}
			}
			smp.custom[m.Name] = v
		}
	}
	smp.ok = err == nil
	if ctx.Err() != nil {
		return // stopped while reading: not the node's silence
	}
	s.mu.Lock()
	s.samples[i] = append(s.samples[i], smp)
	s.mu.Unlock()
}

// readReplica reads a replica's SHOW SLAVE STATUS and its lag in
// transactions behind the primary (when the primary answers).
func readReplica(ctx context.Context, n NodeSource, smp *nodeSample) error {
	var ppos string
	if n.Primary != nil {
		if n.Primary.QueryRowContext(ctx, "SELECT @@global.gtid_binlog_pos").Scan(&ppos) != nil {
			ppos = ""
		}
	}
	var err error
	smp.slave, err = QueryRow(ctx, n.DB, "SHOW SLAVE STATUS")
	var rpos string
	if err == nil && ppos != "" && n.DB.QueryRowContext(ctx, "SELECT @@global.gtid_slave_pos").Scan(&rpos) == nil {
		smp.lag = GTIDLag(ppos, rpos)
	}
	return err
}

func (s *NodeSampler) note(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.notes {
		if n == msg {
			return
		}
	}
	s.notes = append(s.notes, msg)
}

// Notes are what went wrong while sampling (a metric that failed later).
func (s *NodeSampler) Notes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.notes...)
}

// Columns are every node's columns, node by node.
func (s *NodeSampler) Columns() []string {
	var out []string
	for _, n := range s.nodes {
		out = append(out, NodeColumns(n, s.metrics)...)
	}
	return out
}

// Stop ends the sampling and returns n rows, row k covering the second
// that ends at (k+1) s from the start, with Columns' values (NaN: no
// reading, as for a paused or stopped node).
func (s *NodeSampler) Stop(n int) []Row {
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Row, n)
	for k := range out {
		out[k] = Row{T: time.Duration(k+1) * time.Second, Dt: time.Second}
	}
	for i, src := range s.nodes {
		cols := nodeColumnsFor(src.Role, src.SemiSync)
		var custom []NodeMetric
		for _, m := range s.metrics {
			if m.Node == 0 || m.Node == src.Index {
				custom = append(custom, m)
			}
		}
		per := nodeRows(s.samples[i], cols, custom)
		width := len(cols) + len(custom)
		for k := range out {
			out[k].Values = append(out[k].Values, pick(per, out[k].T, width)...)
		}
	}
	return out
}

// nodeRows turns a node's samples into rows of its columns.
func nodeRows(samples []nodeSample, cols []nodeColumn, custom []NodeMetric) []Row {
	var rows []Row
	for j := 1; j < len(samples); j++ {
		prev, cur := &samples[j-1], &samples[j]
		dt := (cur.t - prev.t).Seconds()
		var vals []float64
		for _, c := range cols {
			vals = append(vals, c.read(prev, cur, dt))
		}
		for _, m := range custom {
			a, okA := prev.custom[m.Name]
			b, okB := cur.custom[m.Name]
			v := nan
			switch {
			case !okB:
			case !m.Rate:
				v = b
			case okA && b >= a && dt > 0:
				v = (b - a) / dt
			}
			vals = append(vals, v)
		}
		rows = append(rows, Row{T: cur.t, Dt: cur.t - prev.t, Values: vals})
	}
	return rows
}

// pick is the row ending nearest due (within half a second), or NaNs.
func pick(rows []Row, due time.Duration, width int) []float64 {
	i := sort.Search(len(rows), func(i int) bool { return rows[i].T >= due })
	best, dist := -1, 500*time.Millisecond
	for _, j := range []int{i - 1, i} {
		if j < 0 || j >= len(rows) {
			continue
		}
		d := rows[j].T - due
		if d < 0 {
			d = -d
		}
		if d <= dist {
			best, dist = j, d
		}
	}
	if best >= 0 {
		return rows[best].Values
	}
	out := make([]float64, width)
	for i := range out {
		out[i] = nan
	}
	return out
}

// statusMap reads SHOW GLOBAL STATUS as numbers, by lower-case name; ON
// and Synced-like words are 1, OFF 0, other text is left out.
func statusMap(ctx context.Context, db *sql.DB) (map[string]float64, error) {
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var k string
		var v sql.NullString
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		if f, ok := statusNumber(v.String); ok {
			out[strings.ToLower(k)] = f
		}
	}
	return out, rows.Err()
}

func statusNumber(v string) (float64, bool) {
	switch strings.ToUpper(v) {
	case "ON", "YES":
		return 1, true
	case "OFF", "NO":
		return 0, true
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil
}

// QueryRow maps a single-row result's columns to their text (SHOW SLAVE
// STATUS); no row gives an empty map.
func QueryRow(ctx context.Context, db *sql.DB, q string) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	if !rows.Next() {
		return out, rows.Err()
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	for i, c := range cols {
		if vals[i].Valid {
			out[c] = vals[i].String
		}
	}
	return out, rows.Err()
}

// readMetric runs a user metric's SQL: one row with one numeric column,
// or name/value rows whose values are summed.
func readMetric(ctx context.Context, q querier, stmt string) (float64, error) {
	rows, err := q.QueryContext(ctx, stmt)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	if len(cols) != 1 && len(cols) != 2 {
		return 0, fmt.Errorf("returns %d columns; want one number, or name/value rows", len(cols))
	}
	sum, n := 0.0, 0
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return 0, err
		}
		v := vals[len(cols)-1]
		if !v.Valid {
			return 0, fmt.Errorf("returned NULL")
		}
		f, ok := statusNumber(v.String)
		if !ok {
			return 0, fmt.Errorf("returned %q, not a number", v.String)
		}
		if len(cols) == 1 && n > 0 {
			return 0, fmt.Errorf("returns more than one row; want one number, or name/value rows")
		}
		sum += f
		n++
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, fmt.Errorf("returned no row")
	}
	return sum, nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// GTIDLag is how many transactions a replica's GTID position (e.g.
// gtid_slave_pos "0-1-90") is behind the primary's ("0-1-100": 10),
// summed over replication domains; NaN when either cannot be read.
func GTIDLag(primary, replica string) float64 {
	p, okP := gtidSeqs(primary)
	r, okR := gtidSeqs(replica)
	if !okP || !okR {
		return nan
	}
	lag := 0.0
	for d, seq := range p {
		if behind := seq - r[d]; behind > 0 {
			lag += float64(behind)
		}
	}
	return lag
}

// gtidSeqs reads a MariaDB GTID position: domain-server-seq, by domain.
func gtidSeqs(pos string) (map[uint64]int64, bool) {
	out := map[uint64]int64{}
	pos = strings.TrimSpace(pos)
	if pos == "" {
		return out, true
	}
	for _, g := range strings.Split(pos, ",") {
		parts := strings.Split(strings.TrimSpace(g), "-")
		if len(parts) != 3 {
			return nil, false
		}
		d, err1 := strconv.ParseUint(parts[0], 10, 32)
		seq, err2 := strconv.ParseInt(parts[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, false
		}
		out[d] = seq
	}
	return out, true
}
