package main

// k8s MANIFEST --shards N (the Indexed Job), k8s collect (shard
// directories back from the pods' logs) and k8s-task (what each pod runs).
// Issue 19: k8s/.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"benchmatrix/exitcode"
	"benchmatrix/k8s"
	"benchmatrix/results"
	"benchmatrix/version"
)

func cmdK8s(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "collect" {
		return cmdK8sCollect(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("k8s", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var ef engineFlags
	addEngineFlags(fs, &ef)
	var cfg k8s.Config
	fs.IntVar(&cfg.Shards, "shards", 0, "number of shards: the Job's completions, one pod each")
	fs.StringVar(&cfg.Image, "image", "", "image holding "+k8s.DefaultBinary+" and mariadbd, pullable by the cluster (required)")
	fs.StringVar(&cfg.Binary, "binary", k8s.DefaultBinary, "path of benchmatrix in the image")
	fs.StringVar(&cfg.Name, "name", "", "name of the Job and ConfigMap (default benchmatrix-<experiment>)")
	fs.StringVar(&cfg.Namespace, "namespace", "", "namespace of the objects (default: kubectl's)")
	fs.StringVar(&cfg.CPU, "cpu", "", "CPU request and limit of each pod (e.g. 2)")
	fs.StringVar(&cfg.Memory, "memory", "", "memory request and limit of each pod (e.g. 4Gi)")
	fs.StringVar(&cfg.VolumeClaim, "volume-claim", "", "a PersistentVolumeClaim for the results (ReadWriteMany): shards resume there when a pod runs again")
	fs.BoolVar(&cfg.NoStream, "no-stream", false, "with --volume-claim: do not print the shard's archive on the pod's log")
	deadline := fs.Duration("deadline", 0, "the Job's activeDeadlineSeconds (default: 3 × the longest shard's estimate + 10 minutes)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return exitcode.Usage
	}
	if len(pos) != 1 || cfg.Shards < 1 {
		fmt.Fprintln(stderr, "benchmatrix k8s: want MANIFEST --shards N --image IMAGE (or k8s collect -o DIR [LOG...])")
		return exitcode.Usage
	}
	if *deadline < 0 || (*deadline > 0 && *deadline < time.Second) {
		fmt.Fprintf(stderr, "benchmatrix k8s: --deadline %s: want at least 1s (activeDeadlineSeconds), or none for the default\n", *deadline)
		return exitcode.Usage
	}
	if cfg.NoStream && cfg.VolumeClaim == "" {
		fmt.Fprintln(stderr, "benchmatrix k8s: --no-stream needs --volume-claim: the results would be lost with the pods")
		return exitcode.Usage
	}
	p, a, err := shardPlan(ctx, pos[0], &ef, cfg.Shards)
	if err != nil {
		fmt.Fprintf(stderr, "benchmatrix k8s: %v\n", err)
		return exitcode.Of(err)
	}
	cfg.Experiment, cfg.ManifestFile, cfg.ManifestText = p.Manifest.Name, filepath.Base(pos[0]), p.Manifest.Stored()
	cfg.RunArgs = ef.args
	var longest time.Duration
	for _, s := range a.Shards {
		longest = max(longest, s.Estimate)
	}
	if *deadline == 0 {
		*deadline = 3*longest + 10*time.Minute
	}
	cfg.DeadlineSeconds = int64(deadline.Seconds())
	cm, job, err := k8s.Objects(cfg)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitcode.Usage
	}
	fmt.Fprintf(stdout, "# benchmatrix %s: %d cell runs of %s in %d shards (longest estimated %s); kubectl apply -f this, then\n"+
		"# kubectl wait --for=condition=complete job/%s --timeout=%ds; kubectl logs -l job-name=%s --tail=-1 --prefix --max-log-requests=%d | benchmatrix k8s collect -o DIR\n",
		version.Version, a.Runs, p.Manifest.Name, cfg.Shards, longest.Round(time.Second), job.Name, cfg.DeadlineSeconds, job.Name, max(cfg.Shards, 5))
	if err := k8s.WriteYAML(stdout, cm, job); err != nil {
		fmt.Fprintln(stderr, err)
		return exitcode.Failure
	}
	return exitcode.OK
}

func cmdK8sCollect(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("k8s collect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "the results directory: the merged run, the shards in shards/K")
	noMerge := fs.Bool("no-merge", false, "only unpack the shard directories")
	var opt results.MergeOptions
	fs.BoolVar(&opt.Partial, "partial", false, "merge the shards found even if some are missing")
	logs, err := parseInterleaved(fs, args)
	if err != nil {
		return exitcode.Usage
	}
	if *out == "" {
		fmt.Fprintln(stderr, "benchmatrix k8s collect: want -o DIR, and the pods' logs on stdin or as files")
		return exitcode.Usage
	}
	var readers []io.Reader
	for _, l := range logs {
		f, err := os.Open(l)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitcode.Usage
		}
		defer f.Close()
		readers = append(readers, f)
	}
	if len(readers) == 0 {
		readers = append(readers, os.Stdin)
	}
	shards, err := k8s.Collect(io.MultiReader(readers...))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitcode.Failure
	}
	if len(shards) == 0 {
		fmt.Fprintln(stderr, "benchmatrix k8s collect: no shard archive in the logs (kubectl logs --tail=-1 prints them whole)")
		return exitcode.Failure
	}
	var dirs []string
	for _, s := range shards {
		d := filepath.Join(*out, "shards", strconv.Itoa(s.K))
		if err := s.Extract(d); err != nil {
			fmt.Fprintf(stderr, "benchmatrix k8s collect: shard %d/%d: %v\n", s.K, s.N, err)
			return exitcode.Failure
		}
		fmt.Fprintf(stderr, "shard %d/%d: %s\n", s.K, s.N, d)
		dirs = append(dirs, d)
	}
	if *noMerge {
		return exitcode.OK
	}
	opt.AllowIn = []string{"shards"}
	run, err := results.Merge(*out, dirs, opt)
	if err != nil {
		fmt.Fprintf(stderr, "benchmatrix k8s collect: %v\n", err)
		return exitcode.Of(err)
	}
	fmt.Fprintf(stdout, "merged %d shards (%d of %d cell runs) into %s\n", len(run.Shard.Merged), len(run.Cells), run.Shard.PlanRuns, *out)
	_ = results.WriteTable(stdout, run)
	return exitcode.OK
}

// cmdK8sTask is what a pod of the Indexed Job runs: shard index+1 of N
// into OUT/shards/K (resumed when a volume kept it), progress on stderr,
// then the shard directory as a framed archive on stdout; the run's exit
// code is the pod's (the Job's pod failure policy reads it).
func cmdK8sTask(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("k8s-task", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("shards", 0, "number of shards")
	manifest := fs.String("manifest", "", "the manifest (mounted from the ConfigMap)")
	out := fs.String("out", "", "the results volume")
	noStream := fs.Bool("no-stream", false, "do not print the archive")
	if err := fs.Parse(args); err != nil || *n < 1 || *manifest == "" || *out == "" {
		fmt.Fprintln(stderr, "benchmatrix k8s-task: want --shards N --manifest FILE --out DIR -- [run flags]")
		return exitcode.Usage
	}
	idx, err := strconv.Atoi(os.Getenv(k8s.IndexEnv))
	if err != nil || idx < 0 || idx >= *n {
		fmt.Fprintf(stderr, "benchmatrix k8s-task: $%s=%q: want 0..%d (the Job must have completionMode Indexed)\n", k8s.IndexEnv, os.Getenv(k8s.IndexEnv), *n-1)
		return exitcode.Usage
	}
	k := idx + 1
	dir := filepath.Join(*out, "shards", strconv.Itoa(k))
	run := []string{"run", *manifest, "--shard", fmt.Sprintf("%d/%d", k, *n), "-o", dir, "--provider", "sandbox"}
	if _, err := os.Stat(filepath.Join(dir, results.RunFile)); err == nil {
		run = append(run, "--resume")
	}
	run = append(run, fs.Args()...)
	code := dispatch(ctx, run, stderr, stderr)
	if _, err := os.Stat(filepath.Join(dir, results.RunFile)); err != nil {
		return code // refused before the first cell: nothing to send
	}
	if err := k8s.RecordNode(dir, os.Getenv(k8s.NodeEnv)); err != nil {
		fmt.Fprintf(stderr, "benchmatrix k8s-task: %v\n", err)
	}
	if !*noStream {
		if err := k8s.WriteShard(stdout, k, *n, dir); err != nil {
			fmt.Fprintf(stderr, "benchmatrix k8s-task: %v\n", err)
			return exitcode.Failure
		}
	}
	return code
}
