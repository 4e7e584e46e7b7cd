package main

// swarm MANIFEST --shards N -o DIR, and swarm-task, what each swarm task
// runs (issue 19: swarm/).

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/exitcode"
	"benchmatrix/experiment"
	"benchmatrix/results"
	"benchmatrix/runner"
	"benchmatrix/shard"
	"benchmatrix/swarm"
)

// engineFlags are the run flags an engine passes on to every shard.
type engineFlags struct {
	duration, warmup optDuration
	observe          optBool
	repeats          int
	args             []string // as given, for the shards' command lines
}

func addEngineFlags(fs *flag.FlagSet, ef *engineFlags) {
	pass := func(name string, v flag.Value) flag.Value { return passValue{v, name, &ef.args} }
	fs.Var(pass("duration", &ef.duration), "duration", "measured time per cell, overriding the manifest (passed to every shard)")
	fs.Var(pass("warmup", &ef.warmup), "warmup", "fixed warm-up per cell, overriding the manifest (passed to every shard)")
	fs.Var(pass("observe", &ef.observe), "observe", "on or off: per-second sampling (passed to every shard)")
	fs.Var(pass("repeats", intValue{&ef.repeats}), "repeats", "repeats per cell, overriding the manifest (passed to every shard)")
}

// passValue records a flag as given so that it can be passed on.
type passValue struct {
	flag.Value
	name string
	args *[]string
}

// String is the flag's value; flag's help calls it on a zero passValue
// (to tell a default), which has no Value.
func (p passValue) String() string {
	if p.Value == nil {
		return ""
	}
	return p.Value.String()
}

func (p passValue) Set(s string) error {
	*p.args = append(*p.args, "--"+p.name, s)
	return p.Value.Set(s)
}

type intValue struct{ p *int }

func (v intValue) String() string { return "" }
func (v intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	*v.p = n
	return err
}

func (ef *engineFlags) flags() experiment.Flags {
	return experiment.Flags{Duration: ef.duration.d, Warmup: ef.warmup.d, Observe: ef.observe.b, Repeats: ef.repeats, Provider: "sandbox"}
}

// shardPlan resolves the manifest as the shards will (sandbox provider,
// the passed flags) and checks that it shards n ways.
func shardPlan(ctx context.Context, manifest string, ef *engineFlags, n int) (*experiment.Plan, *shard.Assignment, error) {
	m, err := experiment.Load(manifest)
	if err != nil {
		return nil, nil, err
	}
	p, err := runner.Resolve(ctx, m, ef.flags())
	if err != nil {
		return nil, nil, err
	}
	a, err := shard.Assign(p, n)
	return p, a, err
}

func cmdSwarm(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("swarm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var ef engineFlags
	addEngineFlags(fs, &ef)
	n := fs.Int("shards", 0, "number of shards, one swarm replicated job each")
	out := fs.String("o", "", "the results directory: the merged run, with the shards in shards/K and their logs in .swarm/")
	image := fs.String("image", "", "the image the tasks run (default: [server] image, else "+catalog.DefaultDockerImage+"); it needs mariadbd, and glibc for the bind-mounted benchmatrix binary")
	timeout := fs.Duration("timeout", 0, "remove the services after this long (default: 3 × the longest shard's estimate + 10 minutes)")
	quiet := fs.Bool("q", false, "no progress lines")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return exitcode.Usage
	}
	if len(pos) != 1 || *n < 1 || *out == "" {
		fmt.Fprintln(stderr, "benchmatrix swarm: want MANIFEST --shards N -o DIR")
		return exitcode.Usage
	}
	if *timeout < 0 {
		fmt.Fprintf(stderr, "benchmatrix swarm: --timeout %s: want more than 0, or none for the default\n", *timeout)
		return exitcode.Usage
	}
	p, a, err := shardPlan(ctx, pos[0], &ef, *n)
	if err != nil {
		fmt.Fprintf(stderr, "benchmatrix swarm: %v\n", err)
		return exitcode.Of(err)
	}
	cfg := swarm.Config{Manifest: pos[0], Shards: *n, Image: *image, RunArgs: ef.args, Timeout: *timeout, Log: stderr}
	if cfg.Image == "" {
		cfg.Image = p.Manifest.Server.Image
	}
	if cfg.Image == "" {
		cfg.Image = catalog.DefaultDockerImage
	}
	if cfg.Timeout == 0 {
		var longest time.Duration
		for _, s := range a.Shards {
			longest = max(longest, s.Estimate)
		}
		cfg.Timeout = 3*longest + 10*time.Minute
	}
	if *quiet {
		cfg.Log = io.Discard
	}
	if cfg.Dir, err = filepath.Abs(*out); err != nil {
		fmt.Fprintln(stderr, err)
		return exitcode.Usage
	}
	if cfg.Binary, err = os.Executable(); err != nil {
		fmt.Fprintln(stderr, err)
		return exitcode.Failure
	}
	if env := os.Getenv("BENCHMATRIX_SWARM_BINARY"); env != "" {
		cfg.Binary = env // a binary other than this one for the tasks (a static build for another libc)
	}
	began := time.Now()
	run, err := swarm.Run(ctx, cfg)
	if run != nil {
		fmt.Fprintf(stderr, "swarm: %d shards, %d cell runs, %s wall time\n", *n, len(run.Cells), time.Since(began).Round(time.Second))
		fmt.Fprintln(stdout)
		_ = results.WriteTable(stdout, run)
		fmt.Fprintf(stderr, "results: %s\n", cfg.Dir)
	}
	if err != nil {
		fmt.Fprintf(stderr, "benchmatrix swarm: %v\n", err)
	}
	return exitcode.Of(err)
}

// cmdSwarmTask is what a swarm task runs: benchmatrix run with its output
// in a log file, then its exit code in a status file, and always exit 0, so
// that Swarm never restarts a finished task (it retries failing job tasks
// without end).
func cmdSwarmTask(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("swarm-task", flag.ContinueOnError)
	fs.SetOutput(stderr)
	status := fs.String("status", "", "file to write the run's exit code to")
	logPath := fs.String("log", "", "file for the run's output")
	if err := fs.Parse(args); err != nil || *status == "" || *logPath == "" {
		fmt.Fprintln(stderr, "benchmatrix swarm-task: want --status FILE --log FILE -- run ARGS")
		return exitcode.OK
	}
	code := exitcode.Failure
	if f, err := os.Create(*logPath); err != nil {
		fmt.Fprintln(stderr, err)
	} else {
		host, _ := os.Hostname()
		fmt.Fprintf(f, "swarm task on %s: benchmatrix %v\n", host, fs.Args())
		code = dispatch(ctx, fs.Args(), f, f)
		f.Close()
	}
	tmp := *status + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(code)+"\n"), 0o644); err == nil {
		_ = os.Rename(tmp, *status)
	}
	return exitcode.OK
}
