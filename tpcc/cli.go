package tpcc

// The drop-in for sysbench-tpcc: `benchmatrix oltp /path/to/tpcc.lua
// --tables=.. --scale=.. --threads=.. --time=.. prepare|run|cleanup|check`
// with sysbench-tpcc's command line verbatim. The script is recognised
// by its file name (tpcc.lua, whatever the directory; the bare name
// "tpcc" too); its options (scale, tables, use_fk, force_pk, trx_level,
// enable_purge, report_csv, mysql_storage_engine, mysql_table_options,
// splittable, pgsql_schema) are read here, and every other option
// (threads, time, report interval, the connection) by the OLTP engine's
// sysbench parser, so both read them alike. The output is sysbench's
// layout (the oltp package's report functions).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"benchmatrix/oltp"
	"benchmatrix/sqlconn"
)

// IsScript reports whether a sysbench command line names sysbench-tpcc's
// tpcc.lua (or the bare name tpcc) as its test.
func IsScript(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "--") {
			if v, ok := strings.CutPrefix(a, "--test="); ok {
				return isTPCC(v)
			}
			continue
		}
		return isTPCC(a)
	}
	return false
}

func isTPCC(test string) bool {
	base := filepath.Base(filepath.ToSlash(test))
	return base == "tpcc.lua" || base == "tpcc"
}

// scriptOptions are the options sysbench-tpcc declares.
var scriptOptions = map[string]bool{"scale": true, "tables": true, "use_fk": true, "force_pk": true, "trx_level": true,
	"enable_purge": true, "report_csv": true, "pgsql_schema": true, "mysql_storage_engine": true,
	"mysql_table_options": true, "splittable": true,
	"insert_load": true} // insert_load: benchmatrix's own (prepare with INSERTs, as sysbench-tpcc)

// oltpScriptOptions are the OLTP scripts' own options, which tpcc.lua does
// not declare: sysbench refuses them ("invalid option").
var oltpScriptOptions = map[string]bool{"table_size": true, "range_size": true, "point_selects": true,
	"simple_ranges": true, "sum_ranges": true, "order_ranges": true, "distinct_ranges": true, "index_updates": true,
	"non_index_updates": true, "delete_inserts": true, "range_selects": true, "auto_inc": true, "skip_trx": true,
	"secondary": true, "create_secondary": true, "reinsert_id": true, "recreate": true, "random_points": true,
	"number_of_ranges": true, "delta": true, "create_table_options": true}

// Invocation is a parsed sysbench-tpcc command line.
type Invocation struct {
	oltp.Invocation
	TPCC      Options
	ReportCSV bool
}

// ParseCommandLine reads a sysbench-tpcc command line.
func ParseCommandLine(args []string) (Invocation, error) {
	inv := Invocation{TPCC: DefaultOptions()}
	var rest []string
	var test, command string
	for _, a := range args {
		if !strings.HasPrefix(a, "--") {
			switch {
			case test == "":
				test = a
				rest = append(rest, "oltp_point_select") // the engine's parser reads the common options
			case command == "":
				command = a
				c := a
				if c == "check" {
					c = "run"
				}
				rest = append(rest, c)
			default:
				rest = append(rest, a) // a third word: the engine's parser reports it
			}
			continue
		}
		body := a[2:]
		name, value, hasValue := strings.Cut(body, "=")
		key := strings.ReplaceAll(strings.ToLower(name), "-", "_")
		switch {
		case key == "test":
			test = value
			rest = append(rest, "--test=oltp_point_select")
			continue
		case scriptOptions[key]:
			if !hasValue {
				value = "1" // sysbench gives a bare option "on"
				if key == "enable_purge" || key == "splittable" || key == "report_csv" {
					value = "yes"
				}
			}
			switch key {
			case "report_csv":
				if err := setYesNo(&inv.ReportCSV, key, value); err != nil {
					return inv, &oltp.UsageError{Kind: oltp.KindInvalidOption, Option: "--" + name, Msg: "invalid option: " + a + " (" + err.Error() + ")"}
				}
			case "pgsql_schema":
				// PostgreSQL only; accepted, as sysbench does with the mysql driver.
			default:
				if err := inv.TPCC.Set(key, value); err != nil {
					return inv, &oltp.UsageError{Kind: oltp.KindInvalidOption, Option: "--" + name, Msg: "invalid option: " + a + " (" + err.Error() + ")"}
				}
			}
			continue
		case oltpScriptOptions[key]:
			return inv, &oltp.UsageError{Kind: oltp.KindInvalidOption, Option: "--" + name,
				Msg: fmt.Sprintf("invalid option: %s (tpcc.lua does not read it; its options: --%s)", a, strings.ReplaceAll(strings.Join(slices.Sorted(maps.Keys(scriptOptions)), ", --"), "_", "-"))}
		}
		rest = append(rest, a)
	}
	if test == "" {
		test = "tpcc.lua"
	}
	if command == "" && !hasFlag(args, "help") && !hasFlag(args, "version") {
		return inv, &oltp.UsageError{Kind: oltp.KindFatal, Msg: "Command is required. Supported commands: prepare, run, cleanup, check, help"}
	}
	base, err := oltp.ParseCommandLine(rest)
	inv.Invocation = base
	inv.TestName = filepath.Base(filepath.ToSlash(test))
	inv.Command = command
	inv.Workload = "tpcc"
	if err != nil {
		return inv, err
	}
	switch command {
	case "prepare", "run", "cleanup", "check", "help", "":
	default:
		return inv, &oltp.UsageError{Kind: oltp.KindUnknownCommand, Msg: "Unknown command: " + command}
	}
	o := &inv.TPCC
	so := base.Options
	o.Threads, o.Time, o.Events, o.Warmup = so.Threads, so.Time, so.Events, so.Warmup
	o.Interval, o.Percentile, o.RandSeed = so.ReportInterval, so.Percentile, so.RandSeed
	o.IgnoreErrors, o.IgnoreAll = so.IgnoreErrors, so.IgnoreAllErrors
	if err := o.Validate(); err != nil {
		return inv, &oltp.UsageError{Kind: oltp.KindFatal, Msg: err.Error()}
	}
	return inv, nil
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--"+name || strings.HasPrefix(a, "--"+name+"=") {
			return true
		}
	}
	return false
}

// Main runs a sysbench-tpcc command line and returns sysbench's exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return MainWith(ctx, args, stdout, stderr, nil)
}

// MainWith is Main whose runs use procs (see RunWith); the command that
// owns the process passes the one that may change GOMAXPROCS.
func MainWith(ctx context.Context, args []string, stdout, stderr io.Writer, procs sqlconn.ProcReserver) int {
	inv, err := ParseCommandLine(args)
	if err != nil {
		ue := &oltp.UsageError{Kind: oltp.KindFatal, Msg: err.Error()}
		errors.As(err, &ue)
		switch ue.Kind {
		case oltp.KindUnrecognized:
			fmt.Fprintln(stderr, ue.Msg)
		case oltp.KindFatal:
			oltp.WriteBanner(stdout)
			fmt.Fprintf(stdout, "FATAL: %s\n", ue.Msg)
		default:
			oltp.WriteBanner(stdout)
			fmt.Fprintln(stderr, ue.Msg)
		}
		return oltp.ExitUsage
	}
	if inv.ShowVersion {
		fmt.Fprintln(stdout, oltp.Banner())
		return oltp.ExitOK
	}
	quiet := inv.Verbosity < 3 || inv.Format == "json"
	out := stdout
	if quiet {
		out = io.Discard
	}
	oltp.WriteBanner(out)
	if inv.ShowHelp || inv.Command == "help" {
		writeHelp(stdout)
		return oltp.ExitOK
	}
	o := inv.TPCC
	fail := func(err error) int {
		msg := err.Error()
		if p := inv.Conn.Password; p != "" {
			msg = strings.ReplaceAll(msg, p, "***")
		}
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "benchmatrix oltp: interrupted (%s)\n", msg)
			return oltp.ExitInterrupted
		}
		fmt.Fprintf(stdout, "FATAL: %s\n", msg)
		return oltp.ExitFailure
	}
	switch inv.Command {
	case "prepare":
		if o.Threads > 1 {
			fmt.Fprintf(out, "Initializing worker threads...\n\n")
		}
		st, err := Prepare(ctx, inv.Config, o, out)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(extrasWriter(&inv, stdout, stderr), "benchmatrix: prepared %d rows in %.1f s (%.0f rows/s; tables %.1f s, rows %.1f s, indexes and keys %.1f s)\n",
			st.TotalRows, st.Elapsed.Seconds(), st.RowsPerSecond(), st.Create.Seconds(), st.Load.Seconds(), st.Index.Seconds())
		if inv.Format == "json" {
			_ = json.NewEncoder(stdout).Encode(map[string]any{"command": "prepare", "prepare": st})
		}
		return oltp.ExitOK
	case "cleanup":
		if err := Cleanup(ctx, inv.Config, o, out); err != nil {
			return fail(err)
		}
		return oltp.ExitOK
	case "check":
		res, err := Check(ctx, inv.Config, o)
		if err != nil {
			return fail(err)
		}
		writeCheck(out, res)
		if !res.Passed {
			return oltp.ExitFailure
		}
		return oltp.ExitOK
	}
	so := inv.Options
	so.Workload = "tpcc"
	oltp.WriteRunHeader(out, so)
	var intervals []Interval
	report := func(iv Interval) {
		if inv.Format == "json" {
			intervals = append(intervals, iv)
			return
		}
		if o.Interval <= 0 || iv.Partial {
			return
		}
		if inv.ReportCSV {
			fmt.Fprintln(out, csvInterval(iv, o.Percentile))
			return
		}
		fmt.Fprintln(out, formatInterval(iv, o.Percentile))
	}
	res, err := RunWith(ctx, inv.Config, o, report, procs)
	if err != nil && res == nil {
		return fail(err)
	}
	if o.CheckAfter && err == nil {
		c, cerr := Check(ctx, inv.Config, o)
		if cerr != nil {
			return fail(cerr)
		}
		res.Check = c
	}
	if inv.Format == "json" {
		_ = json.NewEncoder(stdout).Encode(map[string]any{"command": "run", "intervals": intervals, "result": res})
	} else {
		if inv.Options.Histogram {
			oltp.WriteHistogram(out, res.Sysbench.Histogram)
		}
		oltp.WriteSummary(out, res.Sysbench)
		WriteTPCC(extrasWriter(&inv, stdout, stderr), res)
	}
	if err != nil {
		return fail(err)
	}
	if res.Check != nil && !res.Check.Passed {
		return oltp.ExitFailure
	}
	return oltp.ExitOK
}

// extrasWriter is where benchmatrix's own lines go: stdout with --extras,
// else stderr, so that stdout stays sysbench's.
func extrasWriter(inv *Invocation, stdout, stderr io.Writer) io.Writer {
	if inv.Format == "json" {
		return io.Discard
	}
	if inv.Extras {
		return stdout
	}
	return stderr
}

// csvInterval is sysbench's report_csv line (sysbench.report_csv):
// time,threads,tps,qps,reads,writes,others,latency,err/s,reconn/s.
func csvInterval(iv Interval, pct float64) string {
	_ = pct
	return fmt.Sprintf("%.0f,%d,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f",
		iv.End.Seconds(), iv.Threads, iv.PerSecond(iv.Events), iv.PerSecond(iv.Reads+iv.Writes+iv.Others),
		iv.PerSecond(iv.Reads), iv.PerSecond(iv.Writes), iv.PerSecond(iv.Others),
		iv.LatPct, iv.PerSecond(iv.Errors), iv.PerSecond(iv.Reconnects))
}

// formatInterval is the interval line of tpcc.lua: its report_intermediate
// hook calls sysbench.report_default, whose Lua layout differs from
// sysbench's built-in line ("err/s 0.50", no colon; whole seconds).
func formatInterval(iv Interval, pct float64) string {
	return fmt.Sprintf("[ %.0fs ] thds: %d tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) lat (ms,%d%%): %4.2f err/s %4.2f reconn/s: %4.2f",
		iv.End.Seconds(), iv.Threads, iv.PerSecond(iv.Events), iv.PerSecond(iv.Reads+iv.Writes+iv.Others),
		iv.PerSecond(iv.Reads), iv.PerSecond(iv.Writes), iv.PerSecond(iv.Others),
		int(pct), iv.LatPct, iv.PerSecond(iv.Errors), iv.PerSecond(iv.Reconnects))
}

// WriteTPCC writes the TPC-C block: NOPM, TPM, each type's count and
// latency, errors by number.
func WriteTPCC(w io.Writer, r *Result) {
	fmt.Fprintf(w, "TPC-C (benchmatrix; NOPM and TPM as HammerDB defines them, not audited tpmC):\n")
	fmt.Fprintf(w, "    NOPM (new orders per minute):        %.0f\n", r.NOPM)
	fmt.Fprintf(w, "    TPM (transactions per minute):       %.0f\n", r.TPM)
	fmt.Fprintf(w, "    %-14s %10s %8s %9s %9s %9s %9s %9s\n", "type", "committed", "share", "restarts", "avg ms", "p95 ms", "p99 ms", "max ms")
	for _, t := range r.Types {
		fmt.Fprintf(w, "    %-14s %10d %7.1f%% %9d %9.2f %9.2f %9.2f %9.2f\n", t.Type, t.Committed, 100*t.Share, t.Restarts,
			t.Latency.Avg, t.Latency.P95, t.Latency.P99, t.Latency.Max)
	}
	for _, t := range r.Types {
		if t.RolledBack > 0 {
			fmt.Fprintf(w, "    %s rolled back by design (unused item): %d\n", t.Type, t.RolledBack)
		}
	}
	if codes := r.ErrorCodes(); len(codes) > 0 {
		var parts []string
		for _, c := range codes {
			if c == 0 {
				continue
			}
			parts = append(parts, fmt.Sprintf("%d: %d", c, r.Errors[c]))
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "    server errors (restarted events): %s\n", strings.Join(parts, ", "))
		}
	}
	if r.Check != nil {
		writeCheck(w, r.Check)
	}
	fmt.Fprintln(w)
}

func writeHelp(w io.Writer) {
	d := DefaultOptions()
	fmt.Fprintf(w, "tpcc.lua options (benchmatrix's TPC-C, sysbench-tpcc's command line):\n")
	rows := [][2]string{
		{"--scale=N", fmt.Sprintf("Scale factor (warehouses) [%d]", d.Scale)},
		{"--tables=N", fmt.Sprintf("Number of tables (table sets) [%d]", d.Tables)},
		{"--use_fk=N", "Use foreign keys [1]"},
		{"--force_pk=N", "Force using auto-inc PK on history table [0]"},
		{"--trx_level=STRING", "Transaction isolation level (RC, RR or SER) [RR]"},
		{"--enable_purge=STRING", "Use purge transaction (yes, no) [no]"},
		{"--report_csv=STRING", "Report output in csv (yes, no) [no]"},
		{"--mysql_storage_engine=STRING", "Storage engine [innodb]"},
		{"--mysql_table_options=STRING", "Extra table options, e.g. 'COLLATE latin1_bin' []"},
		{"--splittable=STRING", "START TRANSACTION READ WRITE / READ ONLY instead of BEGIN (yes, no) [no]"},
	}
	for _, r := range rows {
		fmt.Fprintf(w, "  %-30s %s\n", r[0], r[1])
	}
	fmt.Fprintf(w, "\nCommands: prepare, run, cleanup, check (the consistency conditions).\n\n")
}
