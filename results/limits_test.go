package results

import (
	"strings"
	"testing"

	"benchmatrix/catalog"
	"benchmatrix/record"
	"benchmatrix/server"
)

// withLimits gives a synthetic run a plan whose cells run under the given
// limits (by cell name; the rest under none), and the runner's records.
func withLimits(r *record.Run, lim map[string]catalog.LimitSet) *record.Run {
	seen := map[string]bool{}
	for i, c := range r.Cells {
		if !seen[c.Name] {
			seen[c.Name] = true
			r.Plan = append(r.Plan, record.PlanCell{Name: c.Name, Limits: lim[c.Name]})
		}
		if l, ok := lim[c.Name]; ok {
			r.Cells[i].Limits = &server.LimitsInForce{Requested: l, Mechanism: "cgroup v1", Device: "254:0 (vda)",
				ReadBack: map[string]string{"blkio.throttle.write_iops_device": "254:0 100"}}
			r.Cells[i].DiskCheck = &server.DiskCheck{Seconds: 3, Loops: 132, LoopsPerSec: 44, DeviceWriteIOPS: 99.9,
				FsyncAvgMs: 11.8, FsyncMaxMs: 40.2, CapWriteIOPS: 100, Ratio: 0.999}
		}
	}
	return r
}

// summary.md names the limits per group of cells, how they were applied
// and what the disk self-check measured; a run without limits says nothing.
func TestLimitsInSummary(t *testing.T) {
	t.Parallel()
	slow := catalog.LimitSet{DiskWriteIOPS: 100, DiskReadIOPS: 200}
	r := withLimits(synthRun(1, 1, flushCells()), map[string]catalog.LimitSet{"b1e1/threads=1": slow, "b1e1/threads=8": slow})
	var b strings.Builder
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| resource limits | disk_write_iops=100 disk_read_iops=200 (b1e1/threads=1, b1e1/threads=8); none (b0e1/threads=1, b0e1/threads=8, b0e0/threads=1, b0e0/threads=8) |",
		"| limits applied by | cgroup v1 on 254:0 (vda) (read back before each cell) |",
		"| disk self-check | cap 100 write IOPS: 99.9 device writes/s, 44 write+fsync/s, fsync avg 11.8 ms, max 40.2 ms",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	var plain strings.Builder
	if err := WriteMarkdown(&plain, synthRun(1, 1, flushCells())); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "limits") {
		t.Error("a run without limits mentions limits")
	}
}

// Limits are conditions, like the server's variables: a difference is
// listed in EnvDiff, per cell, and does not make the runs incomparable.
func TestLimitsInFingerprint(t *testing.T) {
	t.Parallel()
	slow := catalog.LimitSet{DiskWriteIOPS: 100}
	base := withLimits(synthRun(1, 1, flushCells()), map[string]catalog.LimitSet{"b1e1/threads=1": slow})
	faster := withLimits(synthRun(2, 1, flushCells()), map[string]catalog.LimitSet{"b1e1/threads=1": {DiskWriteIOPS: 3000}})
	same := withLimits(synthRun(3, 1, flushCells()), map[string]catalog.LimitSet{"b1e1/threads=1": slow})
	none := withLimits(synthRun(4, 1, flushCells()), nil)
	bf := ComputeFingerprint(base)
	if got := bf.Limits["b1e1/threads=1"]; got != "disk_write_iops=100" || len(bf.Limits) != 1 {
		t.Fatalf("fingerprint limits %v", bf.Limits)
	}
	for _, c := range []struct {
		new  *record.Run
		want []record.Mismatch
	}{
		{same, nil},
		{faster, []record.Mismatch{{Cell: "b1e1/threads=1", Key: "b1e1/threads=1: limits", Base: "disk_write_iops=100", New: "disk_write_iops=3000"}}},
		{none, []record.Mismatch{{Cell: "b1e1/threads=1", Key: "b1e1/threads=1: limits", Base: "disk_write_iops=100", New: "none"}}},
	} {
		nf := ComputeFingerprint(c.new)
		if d := bf.Diff(nf); len(d) != 0 {
			t.Errorf("limits made the runs incomparable: %v", d)
		}
		var got []record.Mismatch
		for _, m := range bf.EnvDiff(nf) {
			if strings.HasSuffix(m.Key, ": limits") {
				got = append(got, m)
			}
		}
		if len(got) != len(c.want) || len(got) > 0 && got[0] != c.want[0] {
			t.Errorf("EnvDiff limits = %v, want %v", got, c.want)
		}
	}
	// A cell only one run has is unmatched, not a difference.
	other := withLimits(synthRun(5, 1, flushCells()[2:]), nil)
	for _, m := range bf.EnvDiff(ComputeFingerprint(other)) {
		if strings.HasSuffix(m.Key, ": limits") {
			t.Errorf("unmatched cell listed: %v", m)
		}
	}
}
