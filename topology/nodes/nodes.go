// Package nodes is a topology's nodes in a cell's lifecycle: they are
// healed before the cell and given its settings, its writers may spread
// over them, their data is compared after loading and after the cell, and
// the manifest's [[events]] act on them during it.
package nodes

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/experiment"
	"benchmatrix/lifecycle"
	"benchmatrix/record"
	"benchmatrix/server"
	"benchmatrix/topology"
)

// Cluster is a cluster's nodes in a cell: healed before it, given the
// cell's settings, its writers spread over them, their data compared after
// loading.
type Cluster struct{}

// NewCluster is a cell's hook.
func NewCluster() lifecycle.Hook { return Cluster{} }

// Feature implements lifecycle.Hook.
func (Cluster) Feature() string { return "topology" }

// Start brings every node back before a cell (after a failed cell's
// events, say); a cluster that cannot be healed is started again.
func (Cluster) Start(ctx context.Context, c lifecycle.Cell) error {
	cl := topology.Of(c.Server())
	if cl == nil {
		return nil
	}
	healed, err := cl.Heal(ctx)
	for _, h := range healed {
		fmt.Fprintf(c.Log(), "    before the cell: %s\n", h)
	}
	if err == nil {
		return nil
	}
	if _, borrowed := c.Server().(server.Borrowed); borrowed {
		return fmt.Errorf("the existing topology is not as it was: %w", err)
	}
	fmt.Fprintf(c.Log(), "    the cluster did not heal (%v); starting it again\n", err)
	c.DataLost()
	if err := c.Restart(ctx); err != nil {
		return fmt.Errorf("the cluster did not come back: %w", err)
	}
	return nil
}

// AfterLoad compares the nodes' data after a load.
func (Cluster) AfterLoad(ctx context.Context, c lifecycle.Cell) error {
	if c.Record().Data != "loaded" {
		return nil
	}
	return verify(ctx, c, "after loading")
}

// Settings sets the cell's dynamic variables on the other nodes, and its
// Galera flow-control limit on every node.
func (Cluster) Settings(ctx context.Context, c lifecycle.Cell, set []server.Setting) error {
	cl := topology.Of(c.Server())
	if cl == nil {
		return nil
	}
	if len(set) > 0 {
		if err := cl.Apply(ctx, set); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
	}
	if t := c.Planned().Topology; t != nil && t.FCLimit > 0 {
		if err := cl.SetFCLimit(ctx, t.FCLimit); err != nil {
			return fmt.Errorf("fc_limit: %w", err)
		}
	}
	return nil
}

// Endpoint makes a Galera cell with writers = "all" dial its connections
// over the nodes in turn (connection i to node i mod N): the engine then
// leaves its own blocking sockets aside and uses this dialer.
func (Cluster) Endpoint(c lifecycle.Cell, cfg *mysql.Config) {
	cl, t := topology.Of(c.Server()), c.Planned().Topology
	if cl == nil || t == nil || t.Writers != "all" || !t.Describe().MultiWriter {
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

// Check compares the nodes' data after a cell that ran well; last in the
// list, after every observer has stopped.
type Check struct{}

// NewCheck is a cell's hook.
func NewCheck() lifecycle.Hook { return Check{} }

// Feature implements lifecycle.Hook.
func (Check) Feature() string { return "topology" }

// Collect implements lifecycle.CollectHook.
func (Check) Collect(ctx context.Context, c lifecycle.Cell) error {
	if !c.RunOK() || c.Stopped() {
		return nil
	}
	return verify(ctx, c, "after the cell")
}

// Record starts the cell's record of its nodes; nil on a single server.
func Record(c lifecycle.Cell) *record.TopologyResult {
	cl := topology.Of(c.Server())
	if cl == nil {
		return nil
	}
	res := c.Record()
	if res.Topology == nil {
		t := &record.TopologyResult{Kind: cl.Topology().Kind}
		for _, n := range cl.Nodes() {
			t.Nodes = append(t.Nodes, fmt.Sprintf("%s=%s (%s)", n.Name, n.Server().Info().Address, n.Role))
		}
		res.Topology = t
	}
	return res.Topology
}

// verify compares the workload's tables on every node; different data
// fails the cell.
func verify(ctx context.Context, c lifecycle.Cell, when string) error {
	cl := topology.Of(c.Server())
	if cl == nil {
		return nil
	}
	res, log := c.Record(), c.Log()
	t := Record(c)
	if when == "after the cell" {
		// A node that died by itself during the cell (no [[events]] entry
		// stopped it) is started again like a planned one, so that the
		// next cell has its whole cluster, but this cell measured another
		// cluster than it names: it fails, naming the node and how it
		// ended, and stays out of every comparison.
		died := cl.Unplanned() // topology/faults.go
		tail := ""
		for _, d := range died {
			fmt.Fprintf(log, "    %s\n", d)
		}
		if len(died) > 0 {
			tail = cl.LogTail(10) // before the restart adds its lines
		}
		healed, err := cl.Heal(ctx)
		t.Healed = append(t.Healed, healed...)
		for _, h := range healed {
			fmt.Fprintf(log, "    %s\n", h)
		}
		if len(died) > 0 {
			res.ServerLog = tail
			return fmt.Errorf("during the cell %s", strings.Join(died, "; "))
		}
		if err != nil {
			return fmt.Errorf("after the cell's events: %w", err)
		}
	}
	tables := c.Planned().Workload.Data().Tables
	if len(tables) == 0 {
		return nil
	}
	c.Progress("verify nodes")
	ck, err := cl.Verify(ctx, c.Schema(), tables, when, lifecycle.VerifyTimeout)
	if err != nil {
		return fmt.Errorf("verify the nodes' data %s: %w", when, err)
	}
	fmt.Fprintf(log, "    %s\n", ck.Summary())
	t.Checks = append(t.Checks, record.DataCheck{When: when, Equal: ck.Equal, Summary: ck.Summary(), Differences: ck.Differences})
	if !ck.Equal {
		return fmt.Errorf("the nodes' data differ %s: %s", when, strings.Join(ck.Differences, "; "))
	}
	return nil
}

// Events runs the manifest's [[events]] on a topology's nodes (pause,
// kill, heal, ...) on their own clock from the start of the warm-up, and
// records each on the cell; the events still due when the cell collects
// are dropped. Before the observation hook in the list of features: its
// Collect stops the events before the samplers stop.
type Events struct {
	stop func()
	done chan struct{}
	mu   sync.Mutex
	evs  []record.NodeEvent
}

// NewEvents is a cell's hook.
func NewEvents() lifecycle.Hook { return &Events{} }

// Feature implements lifecycle.Hook.
func (*Events) Feature() string { return "events" }

// Observe starts the events' clock.
func (h *Events) Observe(ctx context.Context, c lifecycle.Cell) error {
	cl := topology.Of(c.Server())
	events := c.Plan().Manifest.Events
	if cl == nil || len(events) == 0 {
		return nil
	}
	Record(c)
	ectx, cancel := context.WithCancel(ctx)
	h.stop, h.done = cancel, make(chan struct{})
	go h.run(ectx, cl, events, c)
	return nil
}

func (h *Events) run(ctx context.Context, cl *topology.Cluster, events []experiment.Event, c lifecycle.Cell) {
	defer close(h.done)
	evs := append([]experiment.Event(nil), events...)
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].At < evs[j].At })
	start := time.Now()
	for _, ev := range evs {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(start.Add(ev.At))):
		}
		at := time.Since(start).Seconds()
		err := cl.Do(ctx, ev)
		ne := record.NodeEvent{At: at, Node: ev.Node, Action: ev.Action}
		if err != nil {
			ne.Error = err.Error()
		}
		fmt.Fprintf(c.Log(), "    t=%.1fs node%d %s%s\n", at, ev.Node, ev.Action, map[bool]string{true: ": " + ne.Error, false: ""}[err != nil])
		h.mu.Lock()
		h.evs = append(h.evs, ne)
		h.mu.Unlock()
	}
}

// Collect stops the events and records those that happened.
func (h *Events) Collect(_ context.Context, c lifecycle.Cell) error {
	if h.stop == nil {
		return nil
	}
	h.stop()
	<-h.done
	h.stop = nil
	h.mu.Lock()
	defer h.mu.Unlock()
	res := c.Record()
	res.Topology.Events = append(res.Topology.Events, h.evs...)
	return nil
}
