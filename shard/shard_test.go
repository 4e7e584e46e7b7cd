package shard

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/engine"
	"benchmatrix/experiment"
)

// manifest is a 12-cell matrix (2 scenarios × 2 table sizes × 3 thread
// counts) with the given repeats and extra [experiment] lines.
func manifest(repeats int, extra string) string {
	return fmt.Sprintf(`
[experiment]
name = "m12"
baseline = "durable"
duration = "10s"
warmup = "2s"
repeats = %d
%s

[workload]
name = "oltp_read_write"
tables = 1
threads = 1

[scenarios]
durable = { innodb_flush_log_at_trx_commit = 1 }
lazy = { innodb_flush_log_at_trx_commit = 2 }

[axes]
table_size = [100000, 2000000]
threads = [1, 2, 4]
`, repeats, extra)
}

func plan(t *testing.T, src string) *experiment.Plan {
	t.Helper()
	m, err := experiment.Parse("m12.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := experiment.Resolve(m, experiment.Flags{Flavor: "mariadb"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Spec
		err  string
	}{
		{"1/1", Spec{1, 1}, ""},
		{"2/3", Spec{2, 3}, ""},
		{"3/3", Spec{3, 3}, ""},
		{"0/3", Spec{}, "1 <= K <= N"},
		{"4/3", Spec{}, "1 <= K <= N"},
		{"1/0", Spec{}, "1 <= K <= N"},
		{"2", Spec{}, "want K/N"},
		{"a/b", Spec{}, "want K/N"},
		{"", Spec{}, "want K/N"},
	} {
		got, err := ParseSpec(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseSpec(%q) error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSpec(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// invariants every assignment keeps: each cell run in exactly one shard,
// each shard non-empty and in plan order, sub-plans starting their own
// server and loading their own data.
func invariants(t *testing.T, p *experiment.Plan, a *Assignment) {
	t.Helper()
	seen := map[int]int{}
	for _, s := range a.Shards {
		if len(s.Cells) == 0 {
			t.Errorf("shard %d is empty", s.K)
		}
		for j, i := range s.Cells {
			if j > 0 && i <= s.Cells[j-1] {
				t.Errorf("shard %d not in plan order: %v", s.K, s.Cells)
			}
			seen[i]++
		}
		sub := a.Plan(p, s.K)
		if len(sub.Cells) != len(s.Cells) {
			t.Fatalf("shard %d: sub-plan has %d cells, assignment %d", s.K, len(sub.Cells), len(s.Cells))
		}
		if ch := sub.Cells[0].Change; !ch.Start || !ch.Reload {
			t.Errorf("shard %d: first cell %s does not start a server and load data: %+v", s.K, sub.Cells[0].Name, ch)
		}
		for j, c := range sub.Cells {
			if c.Index != s.Cells[j] {
				t.Errorf("shard %d: sub-plan cell %d has index %d, want %d", s.K, j, c.Index, s.Cells[j])
			}
		}
	}
	for i := range p.Cells {
		if seen[i] != 1 {
			t.Errorf("cell run %d (%s #%d) is in %d shards", i, p.Cells[i].Name, p.Cells[i].Repeat, seen[i])
		}
	}
}

func TestAssign(t *testing.T) {
	for _, tc := range []struct {
		name     string
		repeats  int
		n        int
		rounds   [][]int // whole rounds per shard
		sizes    []int   // cell runs per shard
		reloads  []int   // data loads per shard's sub-plan, nil: not checked
		allCells bool    // every shard measures every cell
	}{
		{"one shard takes all", 3, 1, [][]int{{1, 2, 3}}, []int{36}, nil, true},
		{"a round per shard", 3, 3, [][]int{{1}, {2}, {3}}, []int{12, 12, 12}, nil, true},
		{"two rounds per shard", 6, 3, [][]int{{1, 4}, {2, 5}, {3, 6}}, []int{24, 24, 24}, nil, true},
		// Cut by time: the second piece pays the large table's load.
		{"one round cut in three", 1, 3, [][]int{nil, nil, nil}, []int{5, 3, 4}, nil, false},
		// Grouped order puts the 6 cells of each table size together: two
		// shards each load one size once.
		{"one round cut along the data", 1, 2, [][]int{nil, nil}, []int{6, 6}, []int{1, 1}, false},
		{"a round each and one cut", 4, 3, [][]int{{1}, {2}, {3}}, []int{17, 15, 16}, nil, true},
		{"more shards than rounds", 2, 3, [][]int{nil, nil, nil}, []int{8, 8, 8}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := plan(t, manifest(tc.repeats, ""))
			a, err := Assign(p, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			invariants(t, p, a)
			for i, s := range a.Shards {
				if !reflect.DeepEqual(s.Rounds, tc.rounds[i]) {
					t.Errorf("shard %d whole rounds %v, want %v", s.K, s.Rounds, tc.rounds[i])
				}
				if len(s.Cells) != tc.sizes[i] {
					t.Errorf("shard %d has %d cell runs, want %d", s.K, len(s.Cells), tc.sizes[i])
				}
				sub := a.Plan(p, s.K)
				if tc.reloads != nil {
					n := 0
					for _, c := range sub.Cells {
						if c.Change.Reload {
							n++
						}
					}
					if n != tc.reloads[i] {
						t.Errorf("shard %d loads data %d times, want %d", s.K, n, tc.reloads[i])
					}
				}
				names := map[string]bool{}
				for _, c := range sub.Cells {
					names[c.Name] = true
				}
				if all := len(names) == 12; all != tc.allCells {
					t.Errorf("shard %d measures %d of 12 cells", s.K, len(names))
				}
			}
			again, _ := Assign(p, tc.n)
			if !reflect.DeepEqual(a, again) {
				t.Error("two assignments of one plan differ")
			}
		})
	}
}

// TestAssignBalance: a cut round is cut by estimated time, not by count:
// when the last cells run longer, their shard takes fewer of them, and the
// longest shard is shorter than with an even cut by count.
func TestAssignBalance(t *testing.T) {
	p := plan(t, manifest(1, ""))
	for i := 8; i < 12; i++ {
		p.Cells[i].Workload = p.Cells[i].Workload.With(func(c *engine.Common) { c.Time = 100 * time.Second })
	}
	a, err := Assign(p, 2)
	if err != nil {
		t.Fatal(err)
	}
	invariants(t, p, a)
	longest := max(a.Shards[0].Estimate, a.Shards[1].Estimate)
	byCount := max(p.Subset(func(c experiment.Cell) bool { return c.Index < 6 }).Estimate(),
		p.Subset(func(c experiment.Cell) bool { return c.Index >= 6 }).Estimate())
	if longest >= byCount {
		t.Errorf("longest shard estimated %v, an even cut by count %v", longest, byCount)
	}
	if n := len(a.Shards[1].Cells); n >= 6 {
		t.Errorf("the shard of the long cells has %d cell runs", n)
	}
}

func TestAssignRefuses(t *testing.T) {
	p := plan(t, manifest(1, ""))
	for _, tc := range []struct {
		p    *experiment.Plan
		n    int
		want string
	}{
		{p, 0, "at least 1"},
		{p, 13, "only 12 cell runs"},
		{plan(t, manifest(1, `order = "shuffled"`)), 2, "set [experiment] seed"},
	} {
		_, err := Assign(tc.p, tc.n)
		var se *Error
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Assign(%d) = %v, want an *Error saying %q", tc.n, err, tc.want)
		}
	}
	if _, err := Assign(plan(t, manifest(1, "order = \"shuffled\"\nseed = 7")), 2); err != nil {
		t.Errorf("a shuffled plan with a seed: %v", err)
	}
}

// TestPlanHash: the hash ignores the changes (flavor-dependent) but not
// what a cell runs.
func TestPlanHash(t *testing.T) {
	p := plan(t, manifest(2, ""))
	h := PlanHash(p)
	if PlanHash(p.ForTarget(catalog.Target{Flavor: "mysql"})) != h {
		t.Error("the hash depends on the flavor's restart decisions")
	}
	q := plan(t, strings.Replace(manifest(2, ""), `duration = "10s"`, `duration = "11s"`, 1))
	if PlanHash(q) == h {
		t.Error("plans with different durations hash alike")
	}
	a, _ := Assign(p, 2)
	if a.PlanSHA256 != h || a.Runs != 24 {
		t.Errorf("assignment plan %s/%d runs, want %s/24", a.PlanSHA256, a.Runs, h)
	}
}
