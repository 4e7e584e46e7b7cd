package main

// plan --shards N [--json] [--github-matrix] (issue 19): which cell runs
// each shard runs, as text, JSON, or the matrix a CI workflow takes.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"benchmatrix/exitcode"
	"benchmatrix/experiment"
	"benchmatrix/runner"
	"benchmatrix/shard"
)

// shardFlags are plan's sharding flags.
type shardFlags struct {
	n            *int
	githubMatrix *bool
	ef           *engineFlags // --duration, --warmup, --repeats, --observe as the shards will run
	fs           *flag.FlagSet
}

func addShardFlags(fs *flag.FlagSet) shardFlags {
	ef := &engineFlags{}
	addEngineFlags(fs, ef)
	return shardFlags{
		ef:           ef,
		fs:           fs,
		n:            fs.Int("shards", 0, "split the plan over N machines (shards) and print which cell runs each one runs"),
		githubMatrix: fs.Bool("github-matrix", false, "with --shards: print the JSON a GitHub Actions strategy.matrix takes (fromJSON)"),
	}
}

// wanted says whether plan was asked for shards.
func (f shardFlags) wanted() bool { return f.given() || *f.githubMatrix || len(f.ef.args) > 0 }

// given: --shards was on the command line (--shards 0 too, which is refused).
func (f shardFlags) given() bool {
	given := false
	f.fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == "shards" })
	return given
}

// writeShards prints the plan's assignment to shards.
func (f shardFlags) write(ctx context.Context, m *experiment.Manifest, p *experiment.Plan, asJSON bool, stdout, stderr io.Writer) int {
	if *f.n == 0 && f.given() {
		fmt.Fprintln(stderr, "benchmatrix plan: --shards 0: want at least 1")
		return exitcode.Usage
	}
	if *f.n == 0 {
		fmt.Fprintln(stderr, "benchmatrix plan: --github-matrix, --duration, --warmup, --repeats and --observe go with --shards N")
		return exitcode.Usage
	}
	if len(f.ef.args) > 0 {
		fl := f.ef.flags()
		fl.Provider = ""
		var err error
		if p, err = runner.Resolve(ctx, m, fl); err != nil {
			fmt.Fprintln(stderr, err)
			return exitcode.Of(err)
		}
	}
	a, err := shard.Assign(p, *f.n)
	if err != nil {
		fmt.Fprintf(stderr, "benchmatrix plan: %v\n", err)
		return exitcode.Of(err)
	}
	switch {
	case *f.githubMatrix:
		err = writeGitHubMatrix(stdout, a)
	case asJSON:
		err = writeShardsJSON(stdout, p, a)
	default:
		err = writeShardsText(stdout, p, a)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitcode.Failure
	}
	return exitcode.OK
}

// matrixEntry is one job of a CI matrix: `--shard ${{ matrix.shard }}`,
// and k for names that cannot hold a slash (artifacts).
type matrixEntry struct {
	Shard string `json:"shard"`
	K     int    `json:"k"`
	N     int    `json:"n"`
	Runs  int    `json:"cell_runs"`
	// Estimate is the shard's estimated wall time, for timeout-minutes.
	Estimate string `json:"estimate"`
	Minutes  int    `json:"estimate_minutes"`
	// Timeout is a job timeout for timeout-minutes (workflow expressions
	// cannot multiply): 3 × the estimate + 10 minutes.
	Timeout int `json:"timeout_minutes"`
}

func writeGitHubMatrix(w io.Writer, a *shard.Assignment) error {
	var m struct {
		Include []matrixEntry `json:"include"`
	}
	for _, s := range a.Shards {
		m.Include = append(m.Include, matrixEntry{
			Shard: shard.Spec{K: s.K, N: a.N}.String(), K: s.K, N: a.N, Runs: len(s.Cells),
			Estimate: s.Estimate.Round(time.Second).String(), Minutes: int((s.Estimate + time.Minute - 1) / time.Minute),
			Timeout: int((3*s.Estimate+time.Minute-1)/time.Minute) + 10,
		})
	}
	// One line: $GITHUB_OUTPUT takes key=value lines.
	return json.NewEncoder(w).Encode(m)
}

// shardJSON is one shard as `plan --shards N --json` prints it.
type shardJSON struct {
	Shard        string                 `json:"shard"`
	K            int                    `json:"k"`
	WholeRounds  []int                  `json:"whole_rounds,omitempty"`
	Estimate     string                 `json:"estimate"`
	EstimateSecs float64                `json:"estimate_seconds"`
	Cells        []experiment.PlanEntry `json:"cells"`
}

func writeShardsJSON(w io.Writer, p *experiment.Plan, a *shard.Assignment) error {
	out := struct {
		Experiment string      `json:"experiment"`
		Shards     int         `json:"shards"`
		Runs       int         `json:"cell_runs"`
		PlanSHA256 string      `json:"plan_sha256"`
		Assignment []shardJSON `json:"assignment"`
	}{p.Manifest.Name, a.N, a.Runs, a.PlanSHA256, nil}
	for _, s := range a.Shards {
		var b strings.Builder
		if err := a.Plan(p, s.K).WriteJSON(&b); err != nil {
			return err
		}
		sj := shardJSON{Shard: shard.Spec{K: s.K, N: a.N}.String(), K: s.K, WholeRounds: s.Rounds,
			Estimate: s.Estimate.Round(time.Second).String(), EstimateSecs: s.Estimate.Seconds()}
		if err := json.Unmarshal([]byte(b.String()), &sj.Cells); err != nil {
			return err
		}
		out.Assignment = append(out.Assignment, sj)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeShardsText(w io.Writer, p *experiment.Plan, a *shard.Assignment) error {
	var longest time.Duration
	for _, s := range a.Shards {
		longest = max(longest, s.Estimate)
	}
	fmt.Fprintf(w, "%s: %d cell runs over %d shards; one machine would take about %s, %d machines about %s (the longest shard)\n",
		p.Manifest.Name, a.Runs, a.N, p.Estimate().Round(time.Second), a.N, longest.Round(time.Second))
	for _, s := range a.Shards {
		sub := a.Plan(p, s.K)
		whole := 0
		for _, c := range sub.Cells {
			if slices.Contains(s.Rounds, c.Repeat) {
				whole++
			}
		}
		var parts []string
		if len(s.Rounds) > 0 {
			parts = append(parts, "whole rounds "+joinInts(s.Rounds))
		}
		if whole < len(sub.Cells) {
			parts = append(parts, fmt.Sprintf("%d cell runs of the rounds left over", len(sub.Cells)-whole))
		}
		rounds := strings.Join(parts, " and ")
		fmt.Fprintf(w, "\nshard %d/%d (--shard %d/%d): %d cell runs, %s, estimated %s\n", s.K, a.N, s.K, a.N, len(s.Cells), rounds, s.Estimate.Round(time.Second))
		for _, c := range sub.Cells {
			fmt.Fprintf(w, "  [%d] %s (repeat %d)  %s\n", c.Index+1, c.Name, c.Repeat, c.Change.Cost())
		}
	}
	return nil
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}
