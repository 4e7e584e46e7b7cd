package runner

import (
	"context"
	"testing"

	"benchmatrix/shard"
)

// Each shard's sub-plan runs as the plan says (its first cell starts the
// server and loads data), cell runs keep their index in the whole plan,
// and a cold shard restarts once per cell, after the cell's data is in
// place (coldstart.go: the first cell's load filled the buffer pool, so it
// restarts too), and never twice.
func TestShardRunsItsSubPlan(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		fakeHead + "repeats = 3\n[workload]\nname = \"oltp_insert\"\n[scenarios]\nb1 = { sync_binlog = 1, log_bin = \"ON\" }\nb0 = { sync_binlog = 0 }\n",
		fakeHead + "cold = true\nrepeats = 3\n[workload]\nname = \"oltp_point_select\"\ntable_size = 1000\n[axes]\nthreads = [1, 2]\n",
	} {
		plan := fakePlan(t, src)
		for k := 1; k <= 3; k++ {
			sub, _, err := shard.Select(plan, shard.Spec{K: k, N: 3})
			if err != nil {
				t.Fatal(err)
			}
			rig := newFakeRig()
			if _, err := Run(context.Background(), sub, rig.cfg); err != nil {
				t.Fatal(err)
			}
			if got, want := costs(rig.sink.cells), planCosts(sub); got != want {
				t.Errorf("shard %d of\n%s\nrun did  %s\nplan said %s", k, src, got, want)
			}
			for i, c := range rig.sink.cells {
				if c.Index != sub.Cells[i].Index || c.Repeat != k {
					t.Errorf("shard %d cell %d: index %d repeat %d, want index %d repeat %d", k, i, c.Index, c.Repeat, sub.Cells[i].Index, k)
				}
			}
			if rig.starts != 1 || rig.sink.cells[0].Change.Cold {
				t.Errorf("shard %d: %d starts, first cell cold %v", k, rig.starts, rig.sink.cells[0].Change.Cold)
			}
			if rig.srv.restarts != len(rig.sink.cells) && sub.Cells[0].Policy.Cold {
				t.Errorf("shard %d (cold): %d restarts for %d cells, want one per cell, after its data is in place", k, rig.srv.restarts, len(rig.sink.cells))
			}
		}
	}
}
