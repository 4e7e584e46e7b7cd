package runner

import (
	"fmt"

	"benchmatrix/experiment"
	"benchmatrix/record"
	"benchmatrix/shard"
)

// selectShard narrows the plan to the shard run --shard K/N asks for
// (issue 19), and returns the record run.json keeps of it; the zero Spec
// leaves the plan whole. A resumed shard must be the same shard.
func selectShard(plan *experiment.Plan, s shard.Spec, resume *record.Run, dir string) (*experiment.Plan, *record.ShardRecord, error) {
	var had *record.ShardRecord
	if resume != nil {
		had = resume.Shard
	}
	if s.N == 0 {
		if had != nil && had.K > 0 {
			return nil, nil, &UsageError{Msg: fmt.Sprintf("cannot resume %s: it holds shard %d/%d; resume it with --shard %d/%d", dir, had.K, had.N, had.K, had.N)}
		}
		return plan, nil, nil
	}
	if resume != nil && (had == nil || had.K != s.K || had.N != s.N) {
		what := "a whole plan, not a shard"
		if had != nil {
			what = fmt.Sprintf("shard %d/%d", had.K, had.N)
		}
		return nil, nil, &UsageError{Msg: fmt.Sprintf("cannot resume %s as shard %s: it holds %s", dir, s, what)}
	}
	sub, a, err := shard.Select(plan, s)
	if err != nil {
		return nil, nil, err
	}
	return sub, &record.ShardRecord{K: s.K, N: s.N, PlanSHA256: a.PlanSHA256, PlanRuns: a.Runs, WholeRounds: a.Shards[s.K-1].Rounds}, nil
}
