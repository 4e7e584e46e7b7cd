package topology

import (
	"context"
	"fmt"
	"io"
	"time"

	"benchmatrix/experiment"
)

// Do carries out one node event: stop (a clean shutdown), kill (SIGKILL),
// pause (SIGSTOP), resume (SIGCONT) or start (the node again, on its
// datadir and ports; a Galera node rejoins and must be Synced again).
func (c *Cluster) Do(ctx context.Context, ev experiment.Event) error {
	if ev.Node < 1 || ev.Node > len(c.nodes) {
		return fmt.Errorf("node %d: the topology has %d nodes", ev.Node, len(c.nodes))
	}
	n := c.nodes[ev.Node-1]
	switch ev.Action {
	case experiment.ActionStop:
		n.paused = false
		c.setDown(n, true)
		return n.srv.Halt(time.Minute)
	case experiment.ActionKill:
		n.paused = false
		c.setDown(n, true)
		n.srv.Crash()
		return nil
	case experiment.ActionPause:
		if err := n.srv.Pause(); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
		n.paused = true
		return nil
	case experiment.ActionResume:
		n.paused = false
		return n.srv.Resume()
	case experiment.ActionStart:
		return c.startAgain(ctx, n)
	case experiment.ActionDisconnect, experiment.ActionReconnect:
		return c.network(n, ev.Action) // docker.go
	}
	return fmt.Errorf("action %q is not available on sandbox nodes", ev.Action)
}

// startAgain starts a stopped or killed node; a running one is left alone.
func (c *Cluster) startAgain(ctx context.Context, n *Node) error {
	if n.srv.Alive() {
		if n.paused {
			n.paused = false
			return n.srv.Resume()
		}
		return nil
	}
	c.kind.refreshJoin(c, n)
	if err := n.srv.Restart(ctx, append(c.Startup(), n.join...)); err != nil {
		return fmt.Errorf("%s did not come back: %w", n.Name, err)
	}
	n.disconnected = false // a new container is on the network
	c.setDown(n, false)
	return c.kind.rejoined(ctx, c, n)
}

func (c *Cluster) setDown(n *Node, down bool) {
	c.mu.Lock()
	n.down = down
	c.mu.Unlock()
}

// exiter is a node server that tells how its process ended (a sandbox:
// server/node.go).
type exiter interface{ Exit() string }

// Unplanned names each node that is not running although no event stopped
// or killed it, and how it ended: "node3 died (killed by signal 9
// (killed)), not by a planned event". A cell during which a node died so
// measured a cluster that was not the one it names.
func (c *Cluster) Unplanned() []string {
	if c.existing {
		return nil // someone else's nodes: Heal checks them (attach.go)
	}
	var out []string
	for _, n := range c.nodes {
		c.mu.Lock()
		down := n.down
		c.mu.Unlock()
		if n.srv == nil || down || n.srv.Alive() {
			continue
		}
		how := "it is not running"
		if e, ok := n.srv.(exiter); ok && e.Exit() != "" {
			how = e.Exit()
		}
		out = append(out, fmt.Sprintf("%s died (%s), not by a planned event", n.Name, how))
	}
	return out
}

// Heal brings every node back to running after a cell's events: paused
// nodes resumed, stopped or killed ones started again. It names what it
// did; a node that does not come back is an error with its log tail.
func (c *Cluster) Heal(ctx context.Context) ([]string, error) {
	if c.existing {
		// Someone else's: nothing was done to it; it must still be the
		// topology it was (attach.go).
		return nil, c.checkExisting(ctx, io.Discard)
	}
	var did []string
	for _, n := range c.nodes {
		if n.disconnected { // docker.go
			if err := c.network(n, experiment.ActionReconnect); err != nil {
				return did, err
			}
			did = append(did, n.Name+" reconnected")
		}
		switch {
		case n.paused:
			n.paused = false
			if err := n.srv.Resume(); err != nil {
				return did, fmt.Errorf("%s: resume: %w", n.Name, err)
			}
			did = append(did, n.Name+" resumed")
		case !n.srv.Alive():
			if err := c.startAgain(ctx, n); err != nil {
				return did, err
			}
			did = append(did, n.Name+" started again")
		}
	}
	more, err := c.kind.heal(ctx, c)
	return append(did, more...), err
}
