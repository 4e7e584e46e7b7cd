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
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"

	"benchmatrix/experiment"
	"benchmatrix/oltp"
	"benchmatrix/results"
	"benchmatrix/runner"
	"benchmatrix/server"
)

// Exit codes (DESIGN.md).
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitRegression  = 3
	exitInterrupted = 130
)

const usage = `benchmatrix: what does this server setting, workload change or version cost?

Usage:
  benchmatrix run MANIFEST [-o DIR] [--duration D] [--warmup D] [--repeats N] [--resume] [-q]
                 [--provider sandbox|docker|external] [--dsn DSN] [--force] [--observe on|off]
  benchmatrix run --rerun DIR [-o NEWDIR]
  benchmatrix plan MANIFEST
  benchmatrix report DIR
  benchmatrix compare BASE_DIR NEW_DIR [--threshold PCT] [--allow-mismatch] [--markdown]
  benchmatrix oltp [sysbench options] WORKLOAD prepare|prewarm|run|cleanup|help
  benchmatrix version
`

func main() {
	ctx, stop := signalContext()
	code := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	server.Cleanup()
	os.Exit(code)
}

// signalContext cancels on the first SIGINT or SIGTERM (a graceful stop
// that keeps results); the second kills every sandbox and exits at once.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		n := 0
		for range ch {
			n++
			if n == 1 {
				fmt.Fprintln(os.Stderr, "\nbenchmatrix: interrupted; stopping the current cell and keeping finished results (interrupt again to quit at once)")
				cancel()
				continue
			}
			fmt.Fprintln(os.Stderr, "benchmatrix: interrupted twice; killing servers and exiting")
			server.KillAll()
			server.Cleanup()
			os.Exit(exitInterrupted)
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr)
	case "plan":
		return cmdPlan(args[1:], stdout, stderr)
	case "report":
		return cmdReport(args[1:], stdout, stderr)
	case "oltp":
		return cmdOLTP(ctx, args[1:], stdout, stderr)
	case "compare":
		return cmdCompare(args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintf(stdout, "benchmatrix %s\n", runner.Version)
		return exitOK
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "benchmatrix: unknown command %q\n\n%s", args[0], usage)
	return exitUsage
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

type optDuration struct {
	d   time.Duration
	set bool
}

func (o *optDuration) String() string { return o.d.String() }
func (o *optDuration) Set(s string) error {
	d, err := experiment.ParseDuration(s)
	if err != nil {
		return err
	}
	o.d, o.set = d, true
	return nil
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "results directory (default runs/<experiment>-<timestamp>)")
	var duration, warmup optDuration
	fs.Var(&duration, "duration", "measured time per cell, overriding the manifest (e.g. 10s)")
	fs.Var(&warmup, "warmup", "warm-up per cell, overriding the manifest")
	repeats := fs.Int("repeats", 0, "repeats per cell, overriding the manifest")
	quiet := fs.Bool("q", false, "no progress lines")
	resume := fs.Bool("resume", false, "continue the interrupted run in -o DIR: finished cell runs are kept, the rest run")
	provider := fs.String("provider", "", "sandbox, docker or external (overrides [server] provider)")
	dsn := fs.String("dsn", "", "external server: user[:password]@tcp(host:port)/schema; or give the password in $BENCHMATRIX_PASSWORD")
	observeFlag := fs.String("observe", "", "on or off: per-second server and OS sampling, table growth and waits (overrides the manifest)")
	force := fs.Bool("force", false, "external server: prepare even if the schema holds tables the workload does not define")
	rerun := fs.String("rerun", "", "run a stored run again: its manifest, plan, durations and random seeds (results in -o or a new directory)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return exitUsage
	}
	var m *experiment.Manifest
	var previous *results.Run
	switch {
	case *rerun != "" && len(pos) == 0:
		previous, err = results.ReadRun(*rerun)
		if err != nil {
			fmt.Fprintf(stderr, "benchmatrix run --rerun: %v\n", err)
			return exitUsage
		}
		m, err = experiment.Parse(previous.ManifestPath, previous.Manifest)
		if err == nil {
			m.Seed = previous.Seed
		}
	case *rerun == "" && len(pos) == 1:
		m, err = experiment.Load(pos[0])
	default:
		fmt.Fprintln(stderr, "benchmatrix run: want exactly one manifest (or --rerun DIR and none)")
		return exitUsage
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	if *provider != "" {
		m.Server.Provider = *provider
	}
	if *dsn != "" {
		m.Server.DSN = *dsn
	}
	if err := runner.CheckProvider(m); err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	if *repeats < 0 {
		fmt.Fprintln(stderr, "benchmatrix run: --repeats must be at least 1")
		return exitUsage
	}
	if *repeats > 0 {
		m.Repeats = *repeats
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("runs", m.Name+"-"+time.Now().Format("20060102-150405"))
	}
	var stored *results.Run
	if _, err := os.Stat(filepath.Join(dir, results.RunFile)); err == nil && !*resume {
		fmt.Fprintf(stderr, "benchmatrix run: %s already holds a run; continue it with --resume, or give another -o\n", dir)
		return exitUsage
	}
	if *resume {
		if *out == "" {
			fmt.Fprintln(stderr, "benchmatrix run: --resume needs -o DIR, the results directory to continue")
			return exitUsage
		}
		stored, err = results.ReadRun(dir)
		if err != nil {
			fmt.Fprintf(stderr, "benchmatrix run: cannot resume: %v\n", err)
			return exitUsage
		}
		if m.Seed == 0 {
			m.Seed = stored.Seed // the same shuffled order
		}
	}
	plan, err := experiment.Expand(m)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	var dp, wp *time.Duration
	if duration.set {
		dp = &duration.d
	}
	if warmup.set {
		wp = &warmup.d
	}
	plan.Override(dp, wp)
	switch *observeFlag {
	case "":
	case "on", "off":
		for i := range plan.Cells {
			plan.Cells[i].Policy.Observe = *observeFlag == "on"
		}
	default:
		fmt.Fprintf(stderr, "benchmatrix run: --observe=%s: want on or off\n", *observeFlag)
		return exitUsage
	}
	seeds := map[string]int64{}
	if previous != nil {
		for i := range plan.Cells {
			if i < len(previous.Plan) && !duration.set && !warmup.set {
				plan.Cells[i].Workload.Time = previous.Plan[i].Workload.Time
				plan.Cells[i].Workload.Warmup = previous.Plan[i].Workload.Warmup
			}
		}
		for _, c := range previous.Cells {
			seeds[results.RunKey(c.Name, c.Repeat)] = c.RandSeed
		}
	}
	var progress io.Writer = stderr
	var bar *runner.Bar
	switch {
	case *quiet:
		progress = io.Discard
	case stderr == os.Stderr && isatty.IsTerminal(os.Stderr.Fd()):
		bar = runner.NewBar(os.Stderr, plan)
		progress = bar
	}
	server.RemoveStale(m.Server.TempDir, func(d string) {
		fmt.Fprintf(stderr, "removed %s, left by a benchmatrix process that no longer runs\n", d)
	})
	cfg := runner.Config{
		OutDir:   dir,
		Log:      progress,
		Start:    runner.Starter(m),
		Force:    *force,
		Workload: runner.OLTP{Log: progress},
		Resume:   stored,
		Seeds:    seeds,
	}
	if bar != nil {
		cfg.Progress = bar
	}
	run, err := runner.Run(ctx, plan, cfg)
	if run != nil && len(run.Cells) > 0 {
		fmt.Fprintln(stdout)
		_ = results.WriteTable(stdout, run)
	}
	fmt.Fprintf(stderr, "results: %s\n", dir)
	return exitCode(err, stderr)
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "benchmatrix: %v\n", err)
	var me *experiment.Error
	var ue *runner.UsageError
	var nf *server.NotFoundError
	var du *server.DockerUnavailableError
	var im *server.ImageMissingError
	switch {
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &me), errors.As(err, &ue), errors.As(err, &nf), errors.As(err, &du), errors.As(err, &im):
		return exitUsage
	}
	return exitFailure
}

func cmdPlan(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print a JSON array, one object per cell run")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "benchmatrix plan: want exactly one manifest")
		return exitUsage
	}
	m, err := experiment.Load(pos[0])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	plan, err := experiment.Expand(m)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	write := plan.WriteText
	if *asJSON {
		write = plan.WriteJSON
	}
	if err := write(stdout); err != nil {
		fmt.Fprintln(stderr, err)
		return exitFailure
	}
	return exitOK
}

func cmdReport(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "benchmatrix report: want one results directory")
		return exitUsage
	}
	run, err := results.ReadRun(args[0])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	// Tables, results.txt and plots again from the stored results.
	if err := results.Regenerate(args[0]); err != nil {
		fmt.Fprintf(stderr, "benchmatrix report: %v\n", err)
		return exitFailure
	}
	if err := results.WriteTable(stdout, run); err != nil {
		fmt.Fprintln(stderr, err)
		return exitFailure
	}
	fmt.Fprintf(stderr, "regenerated %s\n", filepath.Join(args[0], results.SummaryFile))
	return exitOK
}

func cmdOLTP(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return oltp.Main(ctx, args, stdout, stderr)
}

func cmdCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	opt := results.DefaultCompareOptions()
	fs.Float64Var(&opt.Threshold, "threshold", opt.Threshold, "a regression is significant and worse than this many percent")
	fs.BoolVar(&opt.AllowMismatch, "allow-mismatch", false, "compare runs whose workload definitions or server versions differ, and mark the table")
	markdown := fs.Bool("markdown", false, "print Markdown (for PR comments and $GITHUB_STEP_SUMMARY)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 2 {
		fmt.Fprintln(stderr, "benchmatrix compare: want BASE_DIR NEW_DIR")
		return exitUsage
	}
	var runs [2]*results.Run
	for i, dir := range pos {
		r, err := results.ReadRun(dir)
		if err != nil {
			fmt.Fprintf(stderr, "benchmatrix compare: %v\n", err)
			return exitUsage
		}
		runs[i] = r
	}
	cmp, err := results.Compare(runs[0], runs[1], opt)
	var mm *results.MismatchError
	if errors.As(err, &mm) {
		fmt.Fprintf(stderr, "benchmatrix compare: %v\n(--allow-mismatch compares anyway)\n", err)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "benchmatrix compare: %v\n", err)
		return exitUsage
	}
	if err := results.WriteComparison(stdout, cmp, *markdown); err != nil {
		fmt.Fprintln(stderr, err)
		return exitFailure
	}
	if len(cmp.Regressed()) > 0 {
		return exitRegression
	}
	return exitOK
}
