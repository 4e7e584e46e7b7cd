package runner

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"benchmatrix/experiment"
	"benchmatrix/record"
	"benchmatrix/topology"
)

// eventsHook runs the manifest's [[events]] on a topology's nodes (pause,
// kill, heal, ...) on their own clock from the start of the warm-up, and
// records each on the cell; the events still due when the cell collects
// are dropped. Before the observation hook in cellHooks: its collect stops
// the events before the samplers stop.
type eventsHook struct {
	stop func()
	done chan struct{}
	mu   sync.Mutex
	evs  []record.NodeEvent
}

func (*eventsHook) feature() string { return "events" }

func (h *eventsHook) observe(ctx context.Context, cr *cellRun) error {
	r := cr.r
	cl := r.cluster()
	if cl == nil || len(r.m.Events) == 0 {
		return nil
	}
	r.topologyRecord(cr.res) // topology.go: the cell's record of its nodes
	ectx, cancel := context.WithCancel(ctx)
	h.stop, h.done = cancel, make(chan struct{})
	go h.run(ectx, cl, r.m.Events, r)
	return nil
}

func (h *eventsHook) run(ctx context.Context, cl *topology.Cluster, events []experiment.Event, r *Runner) {
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
		fmt.Fprintf(r.log, "    t=%.1fs node%d %s%s\n", at, ev.Node, ev.Action, map[bool]string{true: ": " + ne.Error, false: ""}[err != nil])
		h.mu.Lock()
		h.evs = append(h.evs, ne)
		h.mu.Unlock()
	}
}

// collect stops the events and records those that happened.
func (h *eventsHook) collect(_ context.Context, cr *cellRun) error {
	if h.stop == nil {
		return nil
	}
	h.stop()
	<-h.done
	h.stop = nil
	h.mu.Lock()
	defer h.mu.Unlock()
	cr.res.Topology.Events = append(cr.res.Topology.Events, h.evs...)
	return nil
}
