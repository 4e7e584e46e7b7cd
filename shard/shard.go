// Package shard splits a plan's cell runs over N machines (shards) that an
// existing engine runs: a CI job matrix, Docker Swarm, a Kubernetes Indexed
// Job. It is pure: the same plan and N always give the same assignment.
//
// The rules, in order:
//
//   - Whole rounds first. Repeats are rounds (every cell once, A B C, then
//     again). With R repeats and N shards, each shard gets R/N whole rounds
//     (round k goes to shard (k-1) mod N + 1), so every machine measures
//     every cell and a round's paired ratios are measured on one machine:
//     the machine becomes a unit of replication, like a round.
//   - The R mod N rounds left over (all rounds when R < N) are cut into N
//     contiguous pieces of about equal estimated time, in plan order, so
//     that cells sharing loaded data and startup options stay together; a
//     piece's first cell pays a server start and a data load, and the
//     estimate counts it.
//   - Each shard runs its cell runs in plan order and keeps each one's
//     Index (its place in the whole plan).
package shard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"benchmatrix/exitcode"
	"benchmatrix/experiment"
)

// Spec names one shard: K of N, K from 1.
type Spec struct {
	K, N int
}

func (s Spec) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// ParseSpec reads "K/N".
func ParseSpec(text string) (Spec, error) {
	a, b, ok := strings.Cut(text, "/")
	k, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return Spec{}, fmt.Errorf("--shard %q: want K/N, e.g. 2/3", text)
	}
	if n < 1 || k < 1 || k > n {
		return Spec{}, fmt.Errorf("--shard %q: want 1 <= K <= N", text)
	}
	return Spec{K: k, N: n}, nil
}

// Shard is one shard's share of the plan.
type Shard struct {
	K int `json:"shard"` // from 1
	// Cells are the positions in the whole plan (Cell.Index) of the
	// shard's cell runs, in plan order.
	Cells []int `json:"cells"`
	// Rounds are the whole rounds (repeats) the shard runs; the other
	// cell runs are a piece of the rounds left over.
	Rounds []int `json:"whole_rounds,omitempty"`
	// Estimate is the estimated wall time of the shard on its own machine
	// (experiment.Plan.Estimate of its sub-plan).
	Estimate time.Duration `json:"estimate_ns"`
}

// Assignment is a plan's cell runs over N shards.
type Assignment struct {
	N      int     `json:"shards"`
	Shards []Shard `json:"assignment"`
	// PlanSHA256 identifies the whole plan (PlanHash).
	PlanSHA256 string `json:"plan_sha256"`
	Runs       int    `json:"cell_runs"`
}

// Error is a plan that cannot be sharded as asked; the CLI exits 2.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// ExitCode implements exitcode.Coder: a usage problem.
func (e *Error) ExitCode() int { return exitcode.Usage }

// Check says whether a plan can be sharded N ways.
func Check(p *experiment.Plan, n int) error {
	switch {
	case n < 1:
		return &Error{Msg: fmt.Sprintf("--shards %d: want at least 1", n)}
	case n > len(p.Cells):
		return &Error{Msg: fmt.Sprintf("--shards %d: the plan has only %d cell runs; give at most %d shards", n, len(p.Cells), len(p.Cells))}
	case p.Order == experiment.Shuffled && p.Manifest != nil && p.Manifest.Seed == 0:
		return &Error{Msg: "order = \"shuffled\" without a seed: every shard expands the plan on its own machine, so set [experiment] seed to shard it"}
	}
	return nil
}

// Assign splits the plan's cell runs over n shards.
func Assign(p *experiment.Plan, n int) (*Assignment, error) {
	if err := Check(p, n); err != nil {
		return nil, err
	}
	rounds := 1
	for _, c := range p.Cells {
		rounds = max(rounds, c.Repeat)
	}
	whole := rounds / n * n // rounds 1..whole go whole, round robin
	a := &Assignment{N: n, Shards: make([]Shard, n), PlanSHA256: PlanHash(p), Runs: len(p.Cells)}
	member := make([]int, len(p.Cells)) // position -> shard index
	var rest []int                      // positions of the leftover rounds' cell runs
	for i := range a.Shards {
		a.Shards[i].K = i + 1
	}
	for r := 1; r <= whole; r++ {
		s := (r - 1) % n
		a.Shards[s].Rounds = append(a.Shards[s].Rounds, r)
	}
	for i, c := range p.Cells {
		if c.Repeat <= whole {
			member[i] = (c.Repeat - 1) % n
		} else {
			rest = append(rest, i)
		}
	}
	for piece, positions := range split(p, rest, n) {
		for _, i := range positions {
			member[i] = piece
		}
	}
	for i := range p.Cells {
		s := &a.Shards[member[i]]
		s.Cells = append(s.Cells, p.Cells[i].Index)
	}
	for i := range a.Shards {
		a.Shards[i].Estimate = a.Plan(p, i+1).Estimate()
	}
	return a, nil
}

// Plan is shard k's sub-plan: its cell runs in plan order, each keeping its
// Index, with its own server start and data loads.
func (a *Assignment) Plan(p *experiment.Plan, k int) *experiment.Plan {
	mine := map[int]bool{}
	for _, i := range a.Shards[k-1].Cells {
		mine[i] = true
	}
	return p.Subset(func(c experiment.Cell) bool { return mine[c.Index] })
}

// Select is the sub-plan of shard s of the plan.
func Select(p *experiment.Plan, s Spec) (*experiment.Plan, *Assignment, error) {
	a, err := Assign(p, s.N)
	if err != nil {
		return nil, nil, err
	}
	return a.Plan(p, s.K), a, nil
}

// split cuts the cell runs at positions (in plan order) into n contiguous
// pieces whose largest estimate is as small as the greedy cut allows: the
// smallest bound for which cutting greedily needs at most n pieces, found
// by bisection. Fewer than n runs give fewer non-empty pieces.
func split(p *experiment.Plan, positions []int, n int) [][]int {
	out := make([][]int, n)
	if len(positions) == 0 {
		return out
	}
	cost := make([]time.Duration, len(positions))  // in sequence
	first := make([]time.Duration, len(positions)) // what starting a piece here adds
	for j, i := range positions {
		c := p.Cells[i]
		one := &experiment.Plan{Cells: []experiment.Cell{c}}
		cost[j] = one.Estimate()
		c.Change.Start, c.Change.Reload = true, true
		fresh := &experiment.Plan{Cells: []experiment.Cell{c}}
		first[j] = max(0, fresh.Estimate()-cost[j])
	}
	cut := func(bound time.Duration) [][]int {
		var pieces [][]int
		var cur []int
		var sum time.Duration
		for j, i := range positions {
			add := cost[j]
			if len(cur) == 0 || sum+add > bound {
				if len(cur) > 0 {
					pieces = append(pieces, cur)
				}
				cur, sum = nil, first[j]
			}
			cur = append(cur, i)
			sum += add
		}
		return append(pieces, cur)
	}
	var lo, hi time.Duration
	for j := range cost {
		lo = max(lo, cost[j]+first[j])
		hi += cost[j] + first[j]
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if len(cut(mid)) <= n {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	pieces := cut(lo)
	// Fewer pieces than shards: split the largest (by count) until there
	// are n, or every piece is one cell run.
	for len(pieces) < n {
		big := 0
		for j := range pieces {
			if len(pieces[j]) > len(pieces[big]) {
				big = j
			}
		}
		if len(pieces[big]) < 2 {
			break
		}
		h := len(pieces[big]) / 2
		a, b := pieces[big][:h:h], pieces[big][h:]
		pieces = append(pieces[:big], append([][]int{a, b}, pieces[big+1:]...)...)
	}
	// The shards with fewest whole rounds... all have the same; the pieces
	// go to shards 1.. in order.
	copy(out, pieces)
	return out
}

// PlanHash identifies a plan's cell runs and what each runs, apart from
// the changes between them (those depend on the server's flavor, which a
// shard learns only when its server starts): shards must agree on it.
func PlanHash(p *experiment.Plan) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	cells := append([]experiment.Cell(nil), p.Cells...)
	sort.SliceStable(cells, func(i, j int) bool { return cells[i].Index < cells[j].Index })
	for _, c := range cells {
		c.Change = experiment.Change{}
		_ = enc.Encode(c)
	}
	return hex.EncodeToString(h.Sum(nil))
}
