package main

// run --shard K/N and merge -o OUT DIR... (issue 19).

import (
	"flag"
	"fmt"
	"io"

	"benchmatrix/exitcode"
	"benchmatrix/results"
	"benchmatrix/runner"
	"benchmatrix/shard"
)

// addShardRunFlag is run's --shard K/N.
func addShardRunFlag(fs *flag.FlagSet, req *runner.Request) {
	fs.Func("shard", "run only shard K of N of the plan (see plan --shards N); merge the shards' directories with merge", func(s string) error {
		sp, err := shard.ParseSpec(s)
		req.Shard = sp
		return err
	})
}

func cmdMerge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "the merged results directory (new or empty)")
	var opt results.MergeOptions
	fs.BoolVar(&opt.Partial, "partial", false, "merge what exists: missing shards and unfinished shard runs are allowed, and the merged run says so")
	dirs, err := parseInterleaved(fs, args)
	if err != nil {
		return exitcode.Usage
	}
	if *out == "" || len(dirs) == 0 {
		fmt.Fprintln(stderr, "benchmatrix merge: want -o OUT and the shard directories (run --shard K/N -o DIR)")
		return exitcode.Usage
	}
	run, err := results.Merge(*out, dirs, opt)
	if err != nil {
		fmt.Fprintf(stderr, "benchmatrix merge: %v\n", err)
		return exitcode.Of(err)
	}
	fmt.Fprintf(stdout, "merged %d shard%s (%d of %d cell runs) into %s\n", len(run.Shard.Merged), map[bool]string{true: "s"}[len(run.Shard.Merged) != 1],
		len(run.Cells), run.Shard.PlanRuns, *out)
	_ = results.WriteTable(stdout, run)
	return exitcode.OK
}
