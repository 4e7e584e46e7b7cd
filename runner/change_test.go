package runner

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"benchmatrix/catalog"
	"benchmatrix/engine"
	"benchmatrix/experiment"
	"benchmatrix/record"
)

// shippedPlans plans every shipped manifest for a MariaDB server, without
// touching one.
func shippedPlans(t *testing.T) map[string]*experiment.Plan {
	t.Helper()
	paths, err := filepath.Glob("../manifests/*.toml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no shipped manifests (%v)", err)
	}
	out := map[string]*experiment.Plan{}
	for _, p := range paths {
		m, err := experiment.Load(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		plan, err := experiment.Resolve(m, experiment.Flags{Flavor: catalog.MariaDB})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[filepath.Base(p)] = plan
	}
	return out
}

// The runner decides each cell's change with the function plan uses: over
// every shipped manifest, the change the runner would carry out before
// each cell (a server started for the first, each next cell after the one
// before, on the same flavor) is the plan's, field by field, and carried
// out as decided it records no override.
func TestRunnerDecidesAsThePlanOverShippedManifests(t *testing.T) {
	t.Parallel()
	plans := shippedPlans(t)
	// client_cpus alone changes between these (the runner once left it out
	// of the change it recorded), and the memory limit shrinks.
	plans["limits"] = fakePlan(t, fakeHead+"order = \"written\"\n[workload]\nname = \"oltp_read_only\"\n[scenarios]\n"+
		"a = { client_cpus = \"0\" }\nb = { memory = \"4G\" }\nc = { memory = \"2G\", cpus = 1 }\n")
	checked, seen := 0, map[string]bool{}
	for name, plan := range plans {
		r := &Runner{plan: plan, m: plan.Manifest, flavor: plan.Flavor, readOnly: map[string]bool{}}
		kinds := map[string]bool{}
		for i := range plan.Cells {
			c := &plan.Cells[i]
			res := &record.Cell{}
			res.Change.Start = i == 0 || c.Change.Start // ensureServer: a new server for a new image or topology
			got := r.planned(c, res)
			if !reflect.DeepEqual(got, c.Change) {
				t.Errorf("%s cell %d %s: the runner decides\n  %+v\nthe plan says\n  %+v", name, i, c.Name, got, c.Change)
			}
			// The phases carry out what was decided.
			res.Change.Restart, res.Change.Dynamic, res.Change.Limits, res.Change.Cold = got.Restart, got.Dynamic, got.Limits, got.Cold
			if got.Reload {
				res.Data = "loaded"
			}
			did := r.did(c, res)
			if len(did.Overrides) > 0 || did.Cost() != c.Change.Cost() || did.Reason != c.Change.Reason {
				t.Errorf("%s cell %s: carried out as decided, the record says %s (%q), overrides %q; plan %s (%q)",
					name, c.Name, did.Cost(), did.Reason, did.Overrides, c.Change.Cost(), c.Change.Reason)
			}
			kinds[got.Cost()] = true
			checked++
			for _, part := range strings.Split(got.Cost(), "+") {
				seen[part] = true
			}
			if got.MemoryRestart() {
				seen["memory restart"] = true
			}
		}
		if len(plan.Cells) > 1 && len(kinds) < 2 {
			t.Logf("%s: every cell costs the same (%v)", name, kinds)
		}
	}
	t.Logf("%d cells of %d manifests: the runner decides as the plan (%v)", checked, len(plans), seen)
	for _, part := range []string{"start", "restart", "reload", "limits", "set", "memory restart"} {
		if !seen[part] {
			t.Errorf("no cell's change has %s: the test does not exercise it", part)
		}
	}
}

// The shipped manifests the fake server can run (no limits, topology,
// profiles or injection) run through the whole runner, which does what the
// plan says each change costs.
func TestShippedManifestsRunAsPlanned(t *testing.T) {
	t.Parallel()
	ran := 0
	for name, plan := range shippedPlans(t) {
		m := plan.Manifest
		if m.HasLimits() || m.Topology.IsCluster() || len(m.Events) > 0 || m.Inject != nil || hasProfile(plan) || hasSlap(plan) {
			continue // TestRunnerDecidesAsThePlanOverShippedManifests covers its decisions
		}
		for i := range plan.Cells { // seconds, not minutes: the fake's results are made up
			plan.Cells[i].Workload = plan.Cells[i].Workload.With(func(c *engine.Common) { c.Time, c.Warmup = 1e9, 0 })
			plan.Cells[i].Policy.WarmupAuto, plan.Cells[i].Policy.Drain = false, false
		}
		rig := newFakeRig()
		if _, err := Run(context.Background(), plan, rig.cfg); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// until = "conclusive" adds rounds to the plan; the plan of the
		// rounds that ran is the same plan grown (Plan.WithRounds).
		rounds := 0
		for _, c := range rig.sink.cells {
			rounds = max(rounds, c.Repeat)
		}
		grown, err := plan.WithRounds(rounds)
		if err != nil {
			t.Fatalf("%s: %d rounds: %v", name, rounds, err)
		}
		if got, want := costs(rig.sink.cells), planCosts(grown); got != want {
			t.Errorf("%s:\nrun did  %s\nplan said %s", name, got, want)
		}
		ran++
	}
	t.Logf("%d shipped manifests ran on the fake server", ran)
	if ran < 3 {
		t.Fatalf("only %d shipped manifests ran on the fake server", ran)
	}
}

func hasProfile(p *experiment.Plan) bool {
	for _, c := range p.Cells {
		if c.Policy.Profile.On() {
			return true
		}
	}
	return false
}

func hasSlap(p *experiment.Plan) bool {
	for _, c := range p.Cells {
		if c.Workload.Engine == experiment.SlapWorkload {
			return true
		}
	}
	return false
}

// What the runner finds overrides the plan, and the cell says why: a
// server started for a cell the plan runs on the running one (a resumed
// run), and data loaded again after the cell before failed.
func TestOverridesSayWhy(t *testing.T) {
	t.Parallel()
	plan := fakePlan(t, fakeHead+"order = \"written\"\n[workload]\nname = \"oltp_read_only\"\ntable_size = 1000\n[axes]\nthreads = [1, 2, 4]\n")
	if got := planCosts(plan); got != "threads=1:start+reload threads=2:none threads=4:none" {
		t.Fatalf("plan: %s", got)
	}
	r := &Runner{plan: plan, m: plan.Manifest, flavor: plan.Flavor, readOnly: map[string]bool{}}
	// Resumed at the second cell: a new server.
	res := &record.Cell{Data: "loaded"}
	res.Change.Start = true
	ch := r.did(&plan.Cells[1], res)
	if ch.Cost() != "start+reload" || len(ch.Overrides) != 1 || !strings.Contains(ch.Overrides[0], "a new server for this cell (the plan's change was none)") {
		t.Fatalf("resumed: %s %q", ch.Cost(), ch.Overrides)
	}
	// That cell failed, the server died and came back: its data is gone.
	r.chg.lastErr = "the server died: invalid connection"
	ch = r.did(&plan.Cells[2], &record.Cell{Data: "loaded"})
	if ch.Cost() != "reload" || len(ch.Overrides) != 1 || !strings.Contains(ch.Overrides[0], "after the cell before failed (the server died: invalid connection)") {
		t.Fatalf("after a dead server: %s %q", ch.Cost(), ch.Overrides)
	}
	if ch.Reason != "the data the plan expected was gone" {
		t.Fatalf("reason %q", ch.Reason)
	}
}
