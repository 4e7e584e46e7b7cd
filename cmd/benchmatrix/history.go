package main

// benchmatrix history: the runs kept over time, their change points and
// trends (history/; docs/history.md). Wiring only.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"benchmatrix/exitcode"
	"benchmatrix/history"
	"benchmatrix/record"
	"benchmatrix/results"
)

const historyUsage = `Usage:
  benchmatrix history add DIR... [--history PATH|DSN] [--label L] [--commit C] [--branch B]
  benchmatrix history check [--series S]... [--metric tps|p99|ratio]... [--alpha A] [--permutations R] [--significance P]
                            [--min-size N] [--min-change PCT] [--history PATH|DSN]   exit 3: a new regression
  benchmatrix history show [--series S]... [--metric M]... [--last N] [--markdown] [--plots DIR] [--history PATH|DSN]
  benchmatrix history list [--runs] [--history PATH|DSN]
  benchmatrix history rm RUNID [--history PATH|DSN]
  benchmatrix history export RUNID -o DIR [--history PATH|DSN]   the run's run.json; report DIR rebuilds the rest
  benchmatrix compare --history[=PATH|DSN] [--base BRANCH|--base-label L|--base-run ID] NEW_DIR
  benchmatrix run MANIFEST --history[=PATH|DSN] [--label L]   record the run when it ends

The history is a SQLite file (default $BENCHMATRIX_HISTORY, else
$XDG_STATE_HOME/benchmatrix/history.db, else ~/.local/state/benchmatrix/history.db)
or a MySQL/MariaDB database: --history mysql://user@host:port/db, the password in
$BENCHMATRIX_HISTORY_PASSWORD (or $BENCHMATRIX_PASSWORD), never in the DSN.
`

func cmdHistory(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, historyUsage)
		return exitcode.Usage
	}
	var err error
	switch args[0] {
	case "add":
		err = historyAdd(ctx, args[1:], stdout, stderr)
	case "check":
		err = historyCheck(ctx, args[1:], stdout, stderr, false)
	case "show":
		err = historyCheck(ctx, args[1:], stdout, stderr, true)
	case "list", "ls":
		err = historyList(ctx, args[1:], stdout, stderr)
	case "rm":
		err = historyRm(ctx, args[1:], stdout, stderr)
	case "export":
		err = historyExport(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, historyUsage)
		return exitcode.OK
	default:
		fmt.Fprintf(stderr, "benchmatrix history: unknown command %q\n\n%s", args[0], historyUsage)
		return exitcode.Usage
	}
	if err != nil && !errors.Is(err, errReported) {
		fmt.Fprintf(stderr, "benchmatrix history: %v\n", err)
	}
	return exitcode.Of(err)
}

// errReported is an exit code whose cause is printed already.
var errReported = errors.New("reported")

type seriesList []string

func (l *seriesList) String() string { return strings.Join(*l, ",") }
func (l *seriesList) Set(s string) error {
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			*l = append(*l, x)
		}
	}
	return nil
}

func historyFlags(name string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("history "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("history", "", "the history: a SQLite file, or mysql://user@host:port/db (default: see docs/history.md)")
	return fs, target
}

func parseHistory(fs *flag.FlagSet, args []string) ([]string, error) {
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, exitcode.UsageError(errReported)
	}
	return pos, nil
}

func historyAdd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, target := historyFlags("add", stderr)
	label := fs.String("label", "", "a label for the run(s) (a release, a PR, 'nightly')")
	commit := fs.String("commit", "", "the commit the run measured (default: the git repository of the current directory, or the CI's variables)")
	branch := fs.String("branch", "", "its branch (default: as --commit)")
	dirs, err := parseHistory(fs, args)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return exitcode.UsageError(errors.New("history add: want one or more results directories"))
	}
	runs := make([]*record.Run, len(dirs))
	for i, d := range dirs {
		if runs[i], err = results.ReadRun(d); err != nil {
			return exitcode.UsageError(fmt.Errorf("history add %s: %w", d, err))
		}
	}
	st, err := history.Open(ctx, *target)
	if err != nil {
		return err
	}
	defer st.Close()
	meta := history.Meta{Label: *label, Commit: *commit, Branch: *branch}
	if meta.Commit == "" || meta.Branch == "" {
		c, b := history.GitInfo(ctx, ".")
		meta.Commit, meta.Branch = or(meta.Commit, c), or(meta.Branch, b)
	}
	for i, d := range dirs {
		meta.Source = d
		if err := recordRun(ctx, st, runs[i], meta, stdout); err != nil {
			return err
		}
	}
	return nil
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func recordRun(ctx context.Context, st *history.Store, run *record.Run, meta history.Meta, w io.Writer) error {
	a, err := st.Add(ctx, run, meta)
	if err != nil {
		return err
	}
	if a.Duplicate {
		if len(a.Notes) == 0 {
			fmt.Fprintf(w, "history %s: run %s (%s) is recorded already; nothing changed\n", st.Where, a.RunID, meta.Source)
			return nil
		}
		fmt.Fprintf(w, "history %s: run %s (%s) is recorded already\n", st.Where, a.RunID, meta.Source)
		for _, n := range a.Notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
		return nil
	}
	fmt.Fprintf(w, "history %s: recorded run %s (%s, %d cells", st.Where, a.RunID, meta.Source, a.Cells)
	if meta.Commit != "" {
		fmt.Fprintf(w, ", commit %.10s", meta.Commit)
	}
	if meta.Label != "" {
		fmt.Fprintf(w, ", label %s", meta.Label)
	}
	fmt.Fprintln(w, ")")
	for _, n := range a.Notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	return nil
}

func historyCheck(ctx context.Context, args []string, stdout, stderr io.Writer, show bool) error {
	name := "check"
	if show {
		name = "show"
	}
	fs, target := historyFlags(name, stderr)
	var series seriesList
	fs.Var(&series, "series", "a series (its id, experiment, cell or experiment/cell); repeat or comma-separate (default: all)")
	opt := history.DefaultOptions()
	fs.Float64Var(&opt.Alpha, "alpha", opt.Alpha, "E-divisive's distance exponent, 0 < alpha < 2")
	fs.IntVar(&opt.Permutations, "permutations", opt.Permutations, "permutations per significance test")
	fs.Float64Var(&opt.Significance, "significance", opt.Significance, "a change point is kept when its p-value is at most this")
	fs.IntVar(&opt.MinSize, "min-size", opt.MinSize, "the fewest runs between change points")
	var metrics seriesList
	fs.Var(&metrics, "metric", "the metrics to check: tps, p99, ratio (to the baseline scenario in the same run); repeat or comma-separate (default: all)")
	minChange := fs.Float64("min-change", 0, "the smallest change reported, in percent (default 0: every significant change)")
	var last int
	var markdown bool
	var plots string
	if show {
		fs.IntVar(&last, "last", 20, "the last N runs of each series (0: all)")
		fs.BoolVar(&markdown, "markdown", false, "Markdown tables (a PR comment)")
		fs.StringVar(&plots, "plots", "history-plots", "directory for the trend plots, one PNG per series (\"\" for none)")
	}
	pos, err := parseHistory(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return exitcode.UsageError(fmt.Errorf("history %s: unexpected argument %q (series are chosen with --series)", name, pos[0]))
	}
	opt.MinChange = *minChange / 100
	for _, m := range metrics {
		known := false
		for _, k := range history.Metrics {
			known = known || k.Name == m
		}
		if !known {
			return exitcode.UsageError(fmt.Errorf("--metric %s: want tps, p99 or ratio", m))
		}
	}
	opt.Metrics = metrics
	switch {
	case opt.Alpha <= 0 || opt.Alpha >= 2:
		return exitcode.UsageError(fmt.Errorf("--alpha %g: want 0 < alpha < 2", opt.Alpha))
	case opt.Permutations < 19:
		return exitcode.UsageError(fmt.Errorf("--permutations %d: want at least 19 (the smallest p-value is 1/(permutations+1))", opt.Permutations))
	case opt.Significance <= 0 || opt.Significance >= 1:
		return exitcode.UsageError(fmt.Errorf("--significance %g: want 0 < p < 1", opt.Significance))
	case opt.MinSize < 2:
		return exitcode.UsageError(fmt.Errorf("--min-size %d: want at least 2", opt.MinSize))
	case opt.MinChange < 0:
		return exitcode.UsageError(fmt.Errorf("--min-change %g: want a percentage >= 0", *minChange))
	case last < 0:
		return exitcode.UsageError(fmt.Errorf("--last %d: want N >= 0", last))
	}
	st, err := history.Open(ctx, *target)
	if err != nil {
		return err
	}
	defer st.Close()
	checks, err := st.Check(ctx, series, opt)
	if err != nil {
		return err
	}
	if len(checks) == 0 {
		fmt.Fprintf(stdout, "history %s: no runs recorded yet\n", st.Where)
		return nil
	}
	if show {
		if err := history.WriteShow(stdout, checks, last, markdown); err != nil {
			return err
		}
		if plots != "" {
			files, err := history.WritePlots(plots, checks, last)
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "plots: %s\n", strings.Join(files, ", "))
		}
		return nil
	}
	if err := history.WriteCheck(stdout, checks, opt); err != nil {
		return err
	}
	for _, c := range checks {
		if c.Regressed() {
			return exitcode.WithCode(errReported, exitcode.Regression)
		}
	}
	return nil
}

func historyList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, target := historyFlags("list", stderr)
	runs := fs.Bool("runs", false, "list the recorded runs instead of the series")
	if _, err := parseHistory(fs, args); err != nil {
		return err
	}
	st, err := history.Open(ctx, *target)
	if err != nil {
		return err
	}
	defer st.Close()
	if *runs {
		rs, err := st.Runs(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-12s  %-20s  %-16s  %-8s  %5s  %s\n", "run", "experiment", "started", "status", "cells", "commit / label / from")
		for _, r := range rs {
			ref := strings.TrimSpace(fmt.Sprintf("%.10s %s %s", r.Commit, r.Label, r.Source))
			if !r.FullRun {
				ref += " (run.json not kept: recorded before history schema 2; no base for compare --history)"
			}
			fmt.Fprintf(stdout, "%-12s  %-20s  %-16s  %-8s  %5d  %s\n", r.ID, r.Experiment, shortStarted(r.Started), r.Status, r.Cells, ref)
		}
		return nil
	}
	ss, err := st.ListSeries(ctx, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%-12s  %-20s  %-24s  %4s  %-16s  %s\n", "series", "experiment", "cell", "runs", "first", "last")
	for _, s := range ss {
		fmt.Fprintf(stdout, "%-12s  %-20s  %-24s  %4d  %-16s  %s\n", s.ID, s.Experiment, s.Cell, s.Runs, shortStarted(s.First), shortStarted(s.Last))
	}
	return nil
}

func shortStarted(s string) string {
	if len(s) >= 16 {
		return strings.Replace(s[:16], "T", " ", 1)
	}
	return s
}

func historyRm(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, target := historyFlags("rm", stderr)
	pos, err := parseHistory(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return exitcode.UsageError(errors.New("history rm: want one run id (history list --runs shows them)"))
	}
	st, err := history.Open(ctx, *target)
	if err != nil {
		return err
	}
	defer st.Close()
	id, err := st.Remove(ctx, pos[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "history %s: forgot run %s\n", st.Where, id)
	return nil
}

// runHistory is run's --history[=PATH|DSN] and --label, taken out of run's
// arguments before its flags are parsed: --history may come without a
// value (the default history), which the flag package cannot express.
type runHistory struct {
	set           bool
	target, label string
}

// takeRunHistory removes --history [VALUE] and --label VALUE from args. A
// bare --history takes the next argument as its value only when that is
// not a flag and not the manifest (a .toml file).
func takeRunHistory(args []string) ([]string, runHistory, error) {
	var h runHistory
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || (name != "history" && name != "label") {
			rest = append(rest, a)
			continue
		}
		if name == "label" {
			if !hasVal {
				if i+1 >= len(args) {
					return nil, h, exitcode.UsageError(errors.New("run: --label wants a value"))
				}
				i++
				val = args[i]
			}
			h.label = val
			continue
		}
		h.set = true
		if hasVal {
			h.target = val
			continue
		}
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && !strings.HasSuffix(args[i+1], ".toml") {
			i++
			h.target = args[i]
		}
	}
	if h.label != "" && !h.set {
		return nil, h, exitcode.UsageError(errors.New("run: --label is for --history"))
	}
	return rest, h, nil
}

// record adds a finished run to the history; a run that did not finish
// (interrupted before its first cell) has nothing to add.
func (h runHistory) record(ctx context.Context, dir string, stderr io.Writer) error {
	if !h.set || ctx.Err() != nil {
		return nil // an interrupted run is not a point of a trend
	}
	run, err := results.ReadRun(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	if len(run.Cells) == 0 || run.Status == record.StatusRunning {
		return nil
	}
	st, err := history.Open(ctx, h.target)
	if err != nil {
		return err
	}
	defer st.Close()
	commit, branch := history.GitInfo(ctx, ".")
	return recordRun(ctx, st, run, history.Meta{Commit: commit, Branch: branch, Label: h.label, Source: dir}, stderr)
}

// open checks the history opens (created or migrated) before a run.
func (h runHistory) open(ctx context.Context) error {
	if !h.set {
		return nil
	}
	st, err := history.Open(ctx, h.target)
	if err != nil {
		return err
	}
	return st.Close()
}

func historyExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, target := historyFlags("export", stderr)
	out := fs.String("o", "", "the results directory to write (new or empty)")
	pos, err := parseHistory(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *out == "" {
		return exitcode.UsageError(errors.New("history export: want one run id and -o DIR (history list --runs shows the runs)"))
	}
	if ents, err := os.ReadDir(*out); err == nil && len(ents) > 0 {
		return exitcode.UsageError(fmt.Errorf("history export -o %s: the directory is not empty; left as it is", *out))
	}
	st, err := history.Open(ctx, *target)
	if err != nil {
		return err
	}
	defer st.Close()
	info, err := st.FindBase(ctx, history.BaseQuery{RunID: pos[0]})
	if err != nil {
		return err
	}
	run, err := st.FullRun(ctx, info.ID)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	w := &results.Writer{Dir: *out}
	if err := w.WriteRun(run); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "history %s: wrote run %s to %s (run.json; `benchmatrix report %s` rebuilds its tables and plots)\n", st.Where, info.ID, *out, *out)
	return nil
}

// compareBase is compare's --history[=PATH|DSN] and the flags that choose
// the base in it, taken out of compare's arguments before its flags are
// parsed (a bare --history, as run's).
type compareBase struct {
	set                  bool
	target               string
	branch, label, runID string
}

// takeCompareHistory removes --history [VALUE], --base B, --base-label L and
// --base-run ID from args. A bare --history takes the next argument as its
// value only when that is neither a flag nor a directory (NEW_DIR is a
// directory; a history never is).
func takeCompareHistory(args []string) ([]string, compareBase, error) {
	cb := compareBase{branch: "main"}
	var rest []string
	chosen := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			rest = append(rest, a)
			continue
		}
		switch name {
		case "history":
			cb.set = true
			if hasVal {
				cb.target = val
			} else if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && !isDir(args[i+1]) {
				i++
				cb.target = args[i]
			}
			continue
		case "base", "base-label", "base-run":
		default:
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, cb, exitcode.UsageError(fmt.Errorf("--%s wants a value", name))
			}
			i++
			val = args[i]
		}
		if val == "" {
			return nil, cb, exitcode.UsageError(fmt.Errorf("--%s wants a value", name))
		}
		chosen++
		switch name {
		case "base":
			cb.branch = val
		case "base-label":
			cb.label = val
		case "base-run":
			cb.runID = val
		}
	}
	if chosen > 0 && !cb.set {
		return nil, cb, exitcode.UsageError(errors.New("--base, --base-label and --base-run choose a base in the history: give --history too"))
	}
	if chosen > 1 {
		return nil, cb, exitcode.UsageError(errors.New("--base, --base-label and --base-run: give one"))
	}
	return rest, cb, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// base finds and reads the base run of newRun in the history, and the
// line that names it.
func (cb compareBase) base(ctx context.Context, newRun *record.Run) (*record.Run, string, error) {
	st, err := history.Open(ctx, cb.target)
	if err != nil {
		return nil, "", err
	}
	defer st.Close()
	q := history.BaseQuery{Experiment: newRun.Experiment, Branch: cb.branch, Label: cb.label, RunID: cb.runID,
		NewID: history.RunID(newRun), NewStarted: newRun.Started}
	info, err := st.FindBase(ctx, q)
	if err != nil {
		return nil, "", err
	}
	run, err := st.FullRun(ctx, info.ID)
	if err != nil {
		return nil, "", err
	}
	var ref []string
	if info.Commit != "" {
		ref = append(ref, "commit "+info.Commit)
	}
	if info.Branch != "" {
		ref = append(ref, "branch "+info.Branch)
	}
	if info.Label != "" {
		ref = append(ref, "label "+info.Label)
	}
	ref = append(ref, "started "+shortStarted(info.Started)+" UTC")
	header := fmt.Sprintf("base from history %s: run %s (%s)", st.Where, info.ID, strings.Join(ref, ", "))
	if q.RunID == "" {
		header += ", " + q.Sought()
	}
	return run, header, nil
}
