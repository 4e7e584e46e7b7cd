package runner

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"benchmatrix/results"
)

// The shipped stand-in for the group replication question
// (manifests/group-standin.toml, run as shipped): on a real 3-node Galera
// cluster under 128-thread inserts, a 5 s global read lock every 60 s on
// node 1. The stall detector finds both injected stalls and no other, the
// period is the injected 60 s, node 1's wsrep_local_state falls from 4
// (Synced) to 2 (desynced while the lock is held) at the onsets, and the
// Conclusion names the period and node 1's columns that moved. About
// 3 minutes.
func TestGroupStandinOnGalera(t *testing.T) {
	needGalera(t)
	src, err := os.ReadFile("../manifests/group-standin.toml")
	if err != nil {
		t.Fatal(err)
	}
	plan := planFromText(t, string(src))
	dir := t.TempDir()
	run, err := Run(context.Background(), plan, Config{OutDir: dir, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	c := run.Cells[0]
	if c.Status != results.CellOK {
		t.Fatalf("cell %s: %s", c.Status, c.Error)
	}
	if c.Detector == nil || c.Detector.Injected != 2 || c.Detector.Hits != 2 || c.Detector.FalseAlarms != 0 {
		t.Fatalf("detector: %+v (stalls: %s)", c.Detector, c.Stalls.Text)
	}
	if p := c.Stalls.PeriodSeconds; p < 58 || p > 62 {
		t.Errorf("period %.1f s, injected 60 s (%s)", p, c.Stalls.Text)
	}
	moved := false
	for _, e := range c.StallEvidence {
		moved = moved || strings.HasPrefix(e, "node1.wsrep_local_state ×0.5 (4 → 2)")
	}
	if !moved {
		t.Errorf("node1.wsrep_local_state did not move at the onsets: %q", c.StallEvidence)
	}
	b, err := os.ReadFile(filepath.Join(dir, results.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	conclusion, _, _ := strings.Cut(string(b), "## Environment")
	if !regexp.MustCompile(`2 stalls to zero, (59|60|61)\.\d s apart`).MatchString(conclusion) || !strings.Contains(conclusion, "at the onsets: node1.") {
		t.Errorf("the Conclusion does not name the period and node 1's columns:\n%s", conclusion)
	}
	if left := leftBehind(t); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}
