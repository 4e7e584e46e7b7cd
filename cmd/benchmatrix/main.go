// Command benchmatrix runs benchmark matrices against MySQL-family servers.
// This file is wiring only: flags, signals and exit codes; the behaviour
// lives in experiment/, runner/, server/, oltp/ and results/.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/mattn/go-isatty"

	"benchmatrix/catalog"
	cmdprocs "benchmatrix/cmd/internal/procs"
	"benchmatrix/exitcode"
	"benchmatrix/experiment"
	"benchmatrix/oltp"
	"benchmatrix/record"
	"benchmatrix/results"
	"benchmatrix/runner"
	"benchmatrix/server"
	"benchmatrix/slap"
	"benchmatrix/tpcc"
	"benchmatrix/version"
)

const usage = `benchmatrix: what does this server setting, workload change or version cost?

Usage:
  benchmatrix run MANIFEST [-o DIR] [--duration D] [--warmup D] [--repeats N] [--resume] [-q] [--check]
                 [--until conclusive|repeats] [--max-repeats N] [--budget D]
                 [--provider sandbox|docker|external] [--dsn DSN]... [--force] [--observe on|off]
  benchmatrix run --rerun DIR [-o NEWDIR]
  benchmatrix run MANIFEST --shard K/N -o DIR   one shard of the plan (plan --shards N)
  benchmatrix merge -o OUT DIR... [--partial]   one results directory from shard runs
  benchmatrix k8s MANIFEST --shards N --image IMG   print a Kubernetes Indexed Job; k8s collect -o DIR [LOG...]
  benchmatrix swarm MANIFEST --shards N -o DIR [--image IMG] [--timeout D]   shards as Docker Swarm jobs, merged
  benchmatrix plan MANIFEST [--json] [--shards N [--github-matrix] [--duration D] [--warmup D] [--repeats N]]
  benchmatrix report DIR [--html]
  benchmatrix compare BASE_DIR NEW_DIR [--threshold PCT] [--allow-mismatch] [--markdown] [--html OUT]
  benchmatrix compare --history[=PATH|DSN] [--base BRANCH|--base-label L|--base-run ID] NEW_DIR [flags as above]
  benchmatrix oltp [sysbench options] WORKLOAD prepare|prewarm|run|cleanup|help
  benchmatrix restore DSN   put back globals a killed run left changed on an external server
  benchmatrix slap [mysqlslap options]
  benchmatrix cache ls|rm ID...|prune [--max-size SIZE] [--dir DIR]   prepared data kept across runs
  benchmatrix history add|check|show|list|rm   runs over time, change points, trends (run --history[=PATH|DSN])
  benchmatrix version
`

// procs is the process's GOMAXPROCS policy for the engine's blocking
// sockets: the command owns the process, so the command owns GOMAXPROCS.
var procs = cmdprocs.New()

func main() {
	// The MySQL driver logs every connection a stopped or killed server
	// drops; benchmatrix reports those itself.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	// A password on the command line leaves argv first (secretargs.go).
	argv, err := hideSecretArgs(os.Args, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(exitcode.Failure)
	}
	ctx, stop := signalContext(interruptNote(argv[1:]))
	code := dispatch(ctx, argv[1:], os.Stdout, os.Stderr)
	stop()
	server.Cleanup()
	os.Exit(code)
}

// interruptNote is what the first interrupt says the command will do.
func interruptNote(args []string) string {
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "run", "swarm-task", "k8s-task", "swarm", "k8s":
		return "stopping the current cell and keeping finished results"
	case "oltp":
		return "stopping the benchmark and reporting what it measured"
	case "slap":
		return "stopping the benchmark"
	default:
		return "stopping"
	}
}

// signalContext cancels on the first SIGINT or SIGTERM (a graceful stop
// that keeps results); the second kills every sandbox and exits at once.
func signalContext(note string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		n := 0
		for range ch {
			n++
			if n == 1 {
				fmt.Fprintf(os.Stderr, "\nbenchmatrix: interrupted; %s (interrupt again to quit at once)\n", note)
				cancel()
				continue
			}
			fmt.Fprintln(os.Stderr, "benchmatrix: interrupted twice; killing servers and exiting")
			server.KillAll()
			server.Cleanup()
			os.Exit(exitcode.Interrupted)
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitcode.Usage
	}
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr)
	case "plan":
		return cmdPlan(ctx, args[1:], stdout, stderr)
	case "report":
		return cmdReport(args[1:], stdout, stderr)
	case "slap":
		return slap.Main(ctx, args[1:], os.Stdin, stdout, stderr)
	case "oltp":
		return cmdOLTP(ctx, args[1:], stdout, stderr)
	case "compare":
		return cmdCompare(ctx, args[1:], stdout, stderr)
	case "merge":
		return cmdMerge(args[1:], stdout, stderr) // merge.go
	case "swarm":
		return cmdSwarm(ctx, args[1:], stdout, stderr) // swarm.go
	case "swarm-task":
		return cmdSwarmTask(ctx, args[1:], stderr) // swarm.go
	case "k8s":
		return cmdK8s(ctx, args[1:], stdout, stderr) // k8s.go
	case "k8s-task":
		return cmdK8sTask(ctx, args[1:], stdout, stderr) // k8s.go
	case "restore":
		return cmdRestore(ctx, args[1:], stdout, stderr)
	case "cache":
		return cmdCache(args[1:], stdout, stderr) // cache.go
	case "history":
		return cmdHistory(ctx, args[1:], stdout, stderr) // history.go
	case "version", "--version":
		fmt.Fprintf(stdout, "benchmatrix %s\n", version.Version)
		return exitcode.OK
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitcode.OK
	}
	fmt.Fprintf(stderr, "benchmatrix: unknown command %q\n\n%s", args[0], usage)
	return exitcode.Usage
}

// parseInterleaved parses flags that may come before or after the one
// positional argument.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// optDuration is a duration flag that knows whether it was given.
type optDuration struct{ d *time.Duration }

func (o *optDuration) String() string {
	if o.d == nil {
		return ""
	}
	return o.d.String()
}

func (o *optDuration) Set(s string) error {
	d, err := experiment.ParseDuration(s)
	o.d = &d
	return err
}

// optBool is an on/off flag that knows whether it was given.
type optBool struct{ b *bool }

func (o *optBool) String() string { return "" }
func (o *optBool) Set(s string) error {
	b, err := oltp.ParseBool(s)
	o.b = &b
	return err
}

// runFlags defines run's flags onto req; quiet is -q.
func runFlags(stderr io.Writer, req *runner.Request, quiet *bool) (*flag.FlagSet, func()) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var duration, warmup, budget optDuration
	var observe optBool
	fs.StringVar(&req.OutDir, "o", "", "results directory (default runs/<experiment>-<timestamp>)")
	fs.Var(&duration, "duration", "measured time per cell, overriding the manifest (e.g. 10s)")
	fs.Var(&warmup, "warmup", "fixed warm-up per cell, overriding the manifest (also warmup = \"auto\")")
	fs.IntVar(&req.Flags.Repeats, "repeats", 0, "repeats per cell, overriding the manifest (with --until conclusive: the rounds before the first look)")
	fs.StringVar(&req.Flags.Until, "until", "", "conclusive: add paired rounds until every comparison is decided; repeats: exactly --repeats rounds (overrides [experiment] until)")
	fs.IntVar(&req.Flags.MaxRepeats, "max-repeats", 0, "with --until conclusive: the most rounds (default 12)")
	fs.Var(&budget, "budget", "with --until conclusive: no round is started that would end past this wall time (e.g. 10m)")
	fs.BoolVar(quiet, "q", false, "no progress lines")
	fs.BoolVar(&req.Resume, "resume", false, "continue the interrupted run in -o DIR: finished cell runs are kept, the rest run")
	fs.StringVar(&req.Flags.Provider, "provider", "", strings.Join(catalog.ProviderNames(), ", ")+" (overrides [server] provider)")
	var dsns dsnList
	fs.Var(&dsns, "dsn", "external server: user[:password]@tcp(host:port)/schema; or give the password in $"+catalog.PasswordEnv+
		"; once per node for a [topology] of existing servers, the primary first")
	fs.Var(&observe, "observe", "on or off: per-second server and OS sampling, table growth and waits (overrides the manifest)")
	fs.BoolVar(&req.Force, "force", false, "external server: prepare even if the schema holds tables the workload does not define")
	addShardRunFlag(fs, req) // merge.go
	fs.StringVar(&req.Rerun, "rerun", "", "run a stored run again: its manifest, plan, durations and random seeds (results in -o or a new directory)")
	return fs, func() {
		req.Flags.Duration, req.Flags.Warmup, req.Flags.Observe, req.Flags.Budget = duration.d, warmup.d, observe.b, budget.d
		switch {
		case len(dsns) == 1:
			req.Flags.DSN = dsns[0]
		case len(dsns) > 1:
			req.Flags.DSNs = dsns
		}
	}
}

// dsnList is --dsn, once per server: several are the nodes of a topology.
type dsnList []string

func (l *dsnList) String() string { return "" } // never the password
func (l *dsnList) Set(s string) error {
	*l = append(*l, s)
	return nil
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	args, hist, err := takeRunHistory(args) // history.go: --history[=PATH|DSN], --label
	if err == nil {
		err = hist.open(ctx) // a bad history fails before the run, not after it
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitcode.Of(err)
	}
	var req runner.Request
	var quiet bool
	fs, apply := runFlags(stderr, &req, &quiet)
	check := fs.Bool("check", false, "exit 3 when an expectation of the manifest ([experiment] expect) is broken with significance")
	pos, err := parseInterleaved(fs, args)
	if err != nil || len(pos) > 1 {
		fmt.Fprintln(stderr, "benchmatrix run: want exactly one manifest (or --rerun DIR and none)")
		return exitcode.Usage
	}
	apply()
	req.Notices = stderr
	if len(pos) == 1 {
		req.Manifest = pos[0]
	}
	plan, cfg, err := runner.Setup(ctx, req)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitcode.Of(err)
	}
	cfg.Log = stderr
	switch {
	case quiet:
		cfg.Log = io.Discard
	case stderr == os.Stderr && isatty.IsTerminal(os.Stderr.Fd()):
		bar := runner.NewBar(os.Stderr, plan)
		cfg.Log, cfg.Progress = bar, bar
	}
	cfg.Procs = procs // each cell runs on its engine (workloads/)
	run, err := runner.Run(ctx, plan, cfg)
	if err == nil && *check {
		err = results.CheckExpectations(run)
	}
	for _, c := range failedCells(run, quiet) {
		fmt.Fprintln(stderr, c)
	}
	if run != nil && len(run.Cells) > 0 {
		fmt.Fprintln(stdout)
		_ = results.WriteTable(stdout, run)
	}
	if _, serr := os.Stat(filepath.Join(cfg.OutDir, results.RunFile)); serr == nil {
		fmt.Fprintf(stderr, "results: %s\n", cfg.OutDir)
		if herr := hist.record(ctx, cfg.OutDir, stderr); herr != nil && err == nil {
			err = herr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "benchmatrix: %v\n", err)
	}
	return exitcode.Of(err)
}

func cmdPlan(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print a JSON array, one object per cell run")
	shards := addShardFlags(fs) // shard.go
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return exitcode.Usage
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "benchmatrix plan: want exactly one manifest")
		return exitcode.Usage
	}
	m, err := experiment.Load(pos[0])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitcode.Of(err)
	}
	plan, err := runner.Resolve(ctx, m, experiment.Flags{})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitcode.Of(err)
	}
	if shards.wanted() {
		return shards.write(ctx, m, plan, *asJSON, stdout, stderr) // shard.go
	}
	write := plan.WriteText
	if *asJSON {
		write = plan.WriteJSON
	}
	if err := write(stdout); err != nil {
		fmt.Fprintln(stderr, err)
		return exitcode.Failure
	}
	return exitcode.OK
}

func cmdReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	htmlOnly := fs.Bool("html", false, "write only report.html (the other reports are left as they are)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return exitcode.Usage
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "benchmatrix report: want one results directory")
		return exitcode.Usage
	}
	dir := pos[0]
	run, err := results.ReadRun(dir)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitcode.Usage
	}
	if *htmlOnly {
		if err := results.RegenerateHTML(dir); err != nil {
			fmt.Fprintf(stderr, "benchmatrix report: %v\n", err)
			return exitcode.Failure
		}
		fmt.Fprintf(stderr, "regenerated %s\n", filepath.Join(dir, results.ReportFile))
		return exitcode.OK
	}
	// Tables, results.txt, report.html and plots again from the stored results.
	if err := results.Regenerate(dir); err != nil {
		fmt.Fprintf(stderr, "benchmatrix report: %v\n", err)
		return exitcode.Failure
	}
	if err := results.WriteTable(stdout, run); err != nil {
		fmt.Fprintln(stderr, err)
		return exitcode.Failure
	}
	fmt.Fprintf(stderr, "regenerated %s and %s\n", filepath.Join(dir, results.SummaryFile), filepath.Join(dir, results.ReportFile))
	return exitcode.OK
}

func cmdOLTP(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if tpcc.IsScript(args) { // sysbench-tpcc's tpcc.lua: the tpcc package (which imports oltp)
		return tpcc.MainWith(ctx, args, stdout, stderr, procs)
	}
	return oltp.MainWith(ctx, args, stdout, stderr, procs)
}

func cmdCompare(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	args, hb, err := takeCompareHistory(args) // history.go: --history and the base in it
	if err != nil {
		fmt.Fprintf(stderr, "benchmatrix compare: %v\n", err)
		return exitcode.Usage
	}
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	opt := results.DefaultCompareOptions()
	fs.Float64Var(&opt.Threshold, "threshold", opt.Threshold, "a regression is significant and worse than this many percent")
	fs.BoolVar(&opt.AllowMismatch, "allow-mismatch", false, "compare cells whose workload definition differs (workload, its options, data shape), and mark them; settings, versions and limits that differ are compared without it")
	markdown := fs.Bool("markdown", false, "print Markdown (for PR comments and $GITHUB_STEP_SUMMARY)")
	htmlOut := fs.String("html", "", "also write the comparison as one self-contained HTML page to this file")
	// Taken out by takeCompareHistory before parsing; here for --help.
	fs.String("history", "", "compare NEW_DIR against a run in the history (a SQLite file or mysql://user@host:port/db; bare: the default history)")
	fs.String("base", "main", "with --history: the newest run on this branch is the base")
	fs.String("base-label", "", "with --history: the newest run with this label is the base")
	fs.String("base-run", "", "with --history: this run (its id, or 4+ leading digits) is the base")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return exitcode.Usage
	}
	if hb.set {
		pos = append([]string{""}, pos...) // the base comes from the history
	}
	if len(pos) != 2 {
		fmt.Fprintln(stderr, "benchmatrix compare: want BASE_DIR NEW_DIR, or --history NEW_DIR")
		return exitcode.Usage
	}
	var runs [2]*record.Run
	for i, dir := range pos {
		if dir == "" {
			continue
		}
		r, err := results.ReadRun(dir)
		if err != nil {
			fmt.Fprintf(stderr, "benchmatrix compare: %v\n", err)
			return exitcode.Usage
		}
		runs[i] = r
	}
	if hb.set {
		base, header, err := hb.base(ctx, runs[1])
		if err != nil {
			fmt.Fprintf(stderr, "benchmatrix compare: %v\n", err)
			return exitcode.Of(err)
		}
		runs[0], pos[0] = base, strings.TrimPrefix(header, "base from ")
		fmt.Fprintf(stdout, "%s\n\n", header)
	}
	cmp, err := results.Compare(runs[0], runs[1], opt)
	var mm *results.MismatchError
	if errors.As(err, &mm) {
		fmt.Fprintf(stderr, "benchmatrix compare: %v\n(--allow-mismatch compares anyway)\n", err)
		return exitcode.Usage
	}
	if err != nil {
		fmt.Fprintf(stderr, "benchmatrix compare: %v\n", err)
		return exitcode.Usage
	}
	if err := results.WriteComparison(stdout, cmp, *markdown); err != nil {
		fmt.Fprintln(stderr, err)
		return exitcode.Failure
	}
	if *htmlOut != "" {
		if err := results.WriteCompareHTML(*htmlOut, pos[0], pos[1], runs[0], runs[1], cmp); err != nil {
			fmt.Fprintf(stderr, "benchmatrix compare: %s: %v\n", *htmlOut, err)
			return exitcode.Failure
		}
		fmt.Fprintf(stderr, "wrote %s\n", *htmlOut)
	}
	if len(cmp.Regressed()) > 0 {
		return exitcode.Regression
	}
	return exitcode.OK
}

// cmdRestore connects to an external server, which puts back every global a
// benchmatrix process that no longer runs left changed there (its journal),
// and says what it did.
func cmdRestore(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintf(stderr, "benchmatrix restore: want one DSN (user@tcp(host:port)/; the password in $%s)\n", catalog.PasswordEnv)
		return exitcode.Usage
	}
	if _, err := mysql.ParseDSN(args[0]); err != nil {
		fmt.Fprintf(stderr, "benchmatrix restore: not a DSN such as \"bench@tcp(db1:3306)/\" (user@tcp(host:port)/, the password in $%s): %s\n",
			catalog.PasswordEnv, experiment.Redact(err.Error()))
		return exitcode.Usage
	}
	e, err := server.ConnectExternal(ctx, server.ExternalConfig{DSN: args[0]})
	if err != nil {
		fmt.Fprintf(stderr, "benchmatrix restore: %v\n", err)
		return exitcode.Failure
	}
	defer e.Stop(context.WithoutCancel(ctx))
	if len(e.Recovered()) == 0 {
		fmt.Fprintln(stdout, "nothing to put back: no benchmatrix run left globals changed on this server")
	}
	for _, note := range e.Recovered() {
		fmt.Fprintln(stdout, note)
	}
	return exitcode.OK
}

// failedCells says why cells failed, for -q, which silences the progress
// lines that say it as it happens.
func failedCells(run *record.Run, quiet bool) []string {
	var out []string
	if run == nil || !quiet {
		return nil
	}
	for _, c := range run.Cells {
		if c.Status != record.CellOK {
			out = append(out, fmt.Sprintf("cell %s (repeat %d) failed: %s", c.Name, c.Repeat, c.Error))
		}
	}
	return out
}
