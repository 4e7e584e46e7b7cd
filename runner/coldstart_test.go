package runner

import (
	"context"
	"math"
	"slices"
	"testing"

	"benchmatrix/catalog"
	"benchmatrix/engine"
	"benchmatrix/record"
)

// A cold start that is cold for MyISAM too: on a real sandbox in its own
// cgroup (a memory limit, so that the server's reads are counted), a
// MyISAM table is loaded (its files land in the page cache), the first
// cell restarts the server after the load and drops the datadir from the
// page cache, and reads its data from the disk; the warm cell after it
// finds the data in memory; a cold cell on the reused data restarts and
// drops again. Each cell records its time to a steady state and the data
// against memory.
func TestColdStartIsCold(t *testing.T) {
	needServer(t)
	needLimits(t, catalog.LimitSet{Memory: 1 << 30})
	plan := planFrom(t, `
[experiment]
duration = "4s"
warmup = "0s"
order = "written"
[server.config]
memory = "1G"
[workload]
name = "oltp_read_only"
engine = "myisam"
tables = 1
table_size = 100000
threads = 2
[scenarios]
cold = { cold = true }
warm = { cold = false }
again = { cold = true }
`)
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: sandboxStart, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Cells) != 3 {
		t.Fatalf("%d cells", len(run.Cells))
	}
	cold, warm, again := run.Cells[0], run.Cells[1], run.Cells[2]
	for _, c := range []record.Cell{cold, again} {
		cs := c.ColdStart
		if cs == nil || !cs.Restarted || !cs.PageCache {
			t.Fatalf("%s: cold start %+v", c.Name, cs)
		}
		// The load (cold) or the warm cell's reads (again) left the table
		// in the page cache; the drop took it out.
		if cs.CachedBefore < 4<<20 || cs.CachedAfter > cs.CachedBefore/20 {
			t.Errorf("%s: page cache %d bytes before the drop, %d after", c.Name, cs.CachedBefore, cs.CachedAfter)
		}
	}
	if warm.ColdStart != nil {
		t.Errorf("warm: cold start %+v", warm.ColdStart)
	}
	reads := func(c record.Cell) float64 {
		j := slices.Index(run.MetricColumns, "cg_reads_s")
		sum := 0.0
		for i, iv := range c.Intervals {
			if iv.Phase == engine.PhaseRun && i < len(c.Metrics) && j >= 0 && j < len(c.Metrics[i]) && !math.IsNaN(c.Metrics[i][j]) {
				sum += c.Metrics[i][j]
			}
		}
		return sum
	}
	t.Logf("server reads in the measured window: cold %.0f, warm %.0f, again %.0f", reads(cold), reads(warm), reads(again))
	if reads(cold) <= reads(warm) || reads(again) <= reads(warm) {
		t.Errorf("the cold cells read no more from the disk than the warm one: cold %.0f, warm %.0f, again %.0f", reads(cold), reads(warm), reads(again))
	}
	for _, c := range run.Cells {
		if c.Steady == nil || len(c.Steady.Series) == 0 {
			t.Errorf("%s: no steady state recorded", c.Name)
		}
		if c.Binding == nil || c.Binding.Data == nil || c.Binding.Data.Engine != "myisam" || !c.Binding.Data.Fits {
			t.Errorf("%s: data against memory %+v", c.Name, c.Binding)
		}
	}
}
