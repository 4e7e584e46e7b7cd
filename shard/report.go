package shard

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"benchmatrix/record"
	"benchmatrix/section"
)

// Report is how a merged run's machines enter the Conclusion and compare
// (issue 19).
//
// Assign gives each shard whole rounds where the repeats allow it, so
// a round (every cell once) runs on one machine. The per-round ratios of
// the Conclusion then pair cells measured on the same machine: what the
// machines differ in cancels inside a ratio, and the ratios' spread across
// rounds holds the spread across machines, so the machine is a unit of
// replication just as the round is. Rounds cut across shards (fewer
// repeats than shards, or repeats not a multiple of the shard count) pair
// cells of two machines, and the Conclusion says how many pairs do.
var Report = section.Feature{
	Name:            "shard",
	Paragraph:       writeReplication,
	Warnings:        []section.Warnings{{After: "repeats", Lines: warnings}},
	CompareWarnings: compareWarnings,
}

// isMerged says whether a run was merged from shards.
func isMerged(r *record.Run) bool { return r.Shard != nil && len(r.Shard.Merged) > 0 }

// cellShard is the shard (and host) a cell run came from.
func cellShard(r *record.Run, c *record.Cell) (int, string) {
	if c.Shard > 0 {
		return c.Shard, c.Host
	}
	return 0, r.Host.Hostname
}

// roundsSplit lists the rounds whose cell runs came from more than one shard.
func roundsSplit(r *record.Run) []int {
	shards := map[int]map[int]bool{}
	for i := range r.Cells {
		k, _ := cellShard(r, &r.Cells[i])
		if shards[r.Cells[i].Repeat] == nil {
			shards[r.Cells[i].Repeat] = map[int]bool{}
		}
		shards[r.Cells[i].Repeat][k] = true
	}
	var out []int
	for rep, ks := range shards {
		if len(ks) > 1 {
			out = append(out, rep)
		}
	}
	sort.Ints(out)
	return out
}

// mergedHosts lists the distinct hosts of a run's cell runs.
func mergedHosts(r *record.Run) []string {
	var out []string
	for i := range r.Cells {
		_, h := cellShard(r, &r.Cells[i])
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// writeReplication is the Conclusion's paragraph on the machines of a
// merged run.
func writeReplication(w io.Writer, r *record.Run) {
	if !isMerged(r) {
		return
	}
	hosts := mergedHosts(r)
	fmt.Fprintf(w, "Machines: merged from %d shard%s on %d host%s (%s). ", len(r.Shard.Merged), section.Plural(len(r.Shard.Merged)), len(hosts), section.Plural(len(hosts)), strings.Join(hosts, ", "))
	switch split := roundsSplit(r); {
	case len(split) == 0 && len(hosts) == 1:
		fmt.Fprintf(w, "Each round ran whole in one shard, so each per-round ratio compares cells measured in the same shard; all ran on one host, so the spread across rounds has no machine-to-machine part. ")
	case len(split) == 0:
		fmt.Fprintf(w, "Each round ran whole in one shard, so each per-round ratio compares cells measured on the same machine: what the machines differ in cancels inside a ratio, "+
			"and the spread of the ratios across rounds includes the spread across machines; the machine is a unit of replication like the round. ")
	default:
		fmt.Fprintf(w, "Round%s %s ran cut across shards: their pairs may compare cells of two machines (see below). ", section.Plural(len(split)), section.IntsOrNone(split))
	}
	if len(hosts) > 1 {
		fmt.Fprintf(w, "A cell's repeats ran on different machines, so a trend over its repeats can be a difference between machines.")
	}
	fmt.Fprintf(w, "\n\n")
}

// warnings are what a merged run's machines undermine: pairs whose two
// cells ran in different shards, and shards that shared a host at the same
// time (they competed for it).
func warnings(in section.Conclusion) []string {
	r, br := in.Run, in.ByRepeat
	if !isMerged(r) {
		return nil
	}
	var out []string
	cross, pairs := 0, 0
	for _, l := range in.Pairs {
		for rep, x := range br[l.Cell] {
			y, ok := br[l.Baseline][rep]
			if !ok {
				continue
			}
			pairs++
			kx, _ := cellShard(r, x)
			ky, _ := cellShard(r, y)
			if kx != ky {
				cross++
			}
		}
	}
	if cross > 0 {
		out = append(out, fmt.Sprintf("%d of %d paired rounds compare a cell and its baseline measured in different shards (rounds %s were cut across shards): "+
			"such a ratio includes the difference between the machines; with --repeats a multiple of the shard count every round runs whole on one machine",
			cross, pairs, section.IntsOrNone(roundsSplit(r))))
	}
	if r.Shard.Partial {
		out = append(out, fmt.Sprintf("partial merge: %d of the plan's %d cell runs, shards missing: %s", len(r.Cells), r.Shard.PlanRuns, section.IntsOrNone(r.Shard.Missing)))
	}
	// Shards on one host whose runs overlapped in time competed for it.
	ms := r.Shard.Merged
	together := map[string][]int{}
	for i := range ms {
		for j := range ms {
			a, b := ms[i], ms[j]
			if i != j && a.Host.Hostname == b.Host.Hostname && a.Started.Before(b.Finished) && b.Started.Before(a.Finished) {
				together[a.Host.Hostname] = append(together[a.Host.Hostname], a.K)
				break
			}
		}
	}
	for _, h := range slices.Sorted(maps.Keys(together)) {
		out = append(out, fmt.Sprintf("shards %s ran on host %s at the same time and competed for its CPUs and disk: "+
			"their absolute figures are lower than one shard alone would measure (the contention flag marks the cells where it was seen); ratios within a shard stay paired",
			section.IntsOrNone(together[h]), h))
	}
	return out
}

// compareWarnings say how the machines of merged runs bear on a
// comparison: compare treats each repeat as a sample, and in a merged run
// the repeats of a cell come from different machines.
func compareWarnings(base, new *record.Run) []string {
	if !isMerged(base) && !isMerged(new) {
		return nil
	}
	bh, nh := mergedHosts(base), mergedHosts(new)
	b, n := slices.Clone(bh), slices.Clone(nh)
	sort.Strings(b)
	sort.Strings(n)
	if slices.Equal(b, n) {
		return []string{fmt.Sprintf("both runs spread their repeats over the same host%s (%s): differences between machines fall on both sides alike, and widen the intervals",
			section.Plural(len(b)), strings.Join(b, ", "))}
	}
	return []string{fmt.Sprintf("the repeats ran on different machines: base on %d host%s (%s), new on %d (%s); each repeat is one machine's measurement, "+
		"so a difference can be the machines' as well as the change's: run both on the same machines (the same shards) to compare the change alone",
		len(bh), section.Plural(len(bh)), strings.Join(bh, ", "), len(nh), strings.Join(nh, ", "))}
}
