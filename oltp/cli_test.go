package oltp

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/engine"
	"benchmatrix/server"
)

func cliFields(s string) []string { return strings.Fields(s) }

func TestParseCommandLine(t *testing.T) {
	t.Parallel()
	def := DefaultOptions()
	cases := []struct {
		line  string
		check func(t *testing.T, inv Invocation)
	}{
		{"oltp_read_write run", func(t *testing.T, inv Invocation) {
			want := def
			if inv.Workload != "oltp_read_write" || inv.Command != "run" || !reflect.DeepEqual(inv.Options, want) {
				t.Errorf("got %+v", inv.Options)
			}
			if inv.Format != "text" || inv.Verbosity != 3 {
				t.Errorf("format %q verbosity %d", inv.Format, inv.Verbosity)
			}
			// localhost is the Unix socket, as for libmysqlclient (socket.go).
			if inv.Config.Net != "unix" || inv.Config.Addr != systemSocket() || inv.Config.User != "sbtest" || inv.Config.DBName != "sbtest" {
				t.Errorf("config %s %s %s %s", inv.Config.Net, inv.Config.Addr, inv.Config.User, inv.Config.DBName)
			}
		}},
		// §4's command line, verbatim.
		{"oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=3306 --mysql-user=sbtest --mysql-password=secret --mysql-db=sbtest --tables=10 --table-size=1000000 --threads=64 --time=300 --report-interval=10 --percentile=95 --rand-type=uniform run",
			func(t *testing.T, inv Invocation) {
				o := inv.Options
				if o.Tables != 10 || o.TableSize != 1000000 || o.Threads != 64 || o.Time != 300*time.Second ||
					o.ReportInterval != 10*time.Second || o.Percentile != 95 || o.RandType != "uniform" {
					t.Errorf("options %+v", o)
				}
				if inv.Config.Passwd != "secret" || inv.Config.Addr != "127.0.0.1:3306" {
					t.Errorf("config addr %s", inv.Config.Addr)
				}
			}},
		// A 0.5-era line (issue 14): --test naming a legacy script, its
		// --oltp-* options and the deprecated run-control aliases, which
		// win over the new names when set, with sysbench's warnings.
		{"--test=/src/tests/include/oltp_legacy/oltp.lua --oltp-table-size=500 --oltp-tables-count=3 --mysql-table-engine=myisam --oltp-auto-inc=off --oltp-range-selects=off --num-threads=4 --threads=2 --max-requests=100 --max-time=0 --rand-init=on --oltp-read-only=on run",
			func(t *testing.T, inv Invocation) {
				o := inv.Options
				if inv.Workload != "oltp_legacy" || inv.Command != "run" || o.TableSize != 500 || o.Tables != 3 || o.StorageEngine != "myisam" ||
					o.AutoInc || o.RangeSelects || o.Threads != 4 || o.Events != 100 || o.IndexUpdates != 0 || o.DeleteInserts != 0 || o.PointSelects != 10 {
					t.Errorf("workload %s options %+v", inv.Workload, o)
				}
				var notes []string
				for _, n := range inv.Notices {
					notes = append(notes, n.Text)
				}
				want := []string{
					"WARNING: the --test option is deprecated. You can pass a script name or path on the command line without any options.",
					"WARNING: --num-threads is deprecated, use --threads instead",
					"WARNING: --max-requests is deprecated, use --events instead",
				}
				if !reflect.DeepEqual(notes, want) {
					t.Errorf("notices %q", notes)
				}
			}},
		{"--test=insert.lua --oltp-auto-inc=off prepare", func(t *testing.T, inv Invocation) {
			if inv.Workload != "legacy_insert" || inv.Options.AutoInc {
				t.Errorf("workload %s auto_inc %v", inv.Workload, inv.Options.AutoInc)
			}
		}},
		// The scripts see an undeclared option as a string, "" when bare:
		// set_vars() turns read_only/skip_trx on only for "on", auto_inc off
		// only for "off"; common.lua tests oltp_secondary for truth, so any
		// value, "off" too, turns it on; a bare number keeps its default.
		{"--test=/x/oltp_legacy/oltp.lua --oltp-read-only --oltp-skip-trx --oltp-auto-inc --oltp-secondary=off --oltp-table-size --oltp-range-selects=OFF run",
			func(t *testing.T, inv Invocation) {
				o := inv.Options
				if o.IndexUpdates != 1 || o.SkipTrx || !o.AutoInc || !o.Secondary || o.TableSize != 10000 || !o.RangeSelects {
					t.Errorf("options %+v", o)
				}
			}},
		// --test naming a 1.0 script runs that workload; the 1.0
		// select_random_points.lua is not the legacy one of the same name.
		{"--test=/usr/share/sysbench/select_random_points.lua run", func(t *testing.T, inv Invocation) {
			if inv.Workload != "select_random_points" || inv.Legacy != nil || inv.TestName != "select_random_points.lua" {
				t.Errorf("workload %s legacy %v", inv.Workload, inv.Legacy)
			}
		}},
		{"--mysql-socket=/tmp/s.sock --mysql-port=1 oltp_read_write run", func(t *testing.T, inv Invocation) {
			if inv.Config.Net != "unix" || inv.Config.Addr != "/tmp/s.sock" {
				t.Errorf("config %s %s", inv.Config.Net, inv.Config.Addr)
			}
		}},
		{"--mysql-socket=/tmp/s.sock --mysql-host=db1 oltp_read_write run", func(t *testing.T, inv Invocation) {
			if inv.Config.Net != "tcp" || inv.Config.Addr != "db1:3306" {
				t.Errorf("config %s %s", inv.Config.Net, inv.Config.Addr)
			}
		}},
		// No test: sysbench reads a script from standard input.
		{"--threads=4 --unknown", func(t *testing.T, inv Invocation) {
			if !inv.FromStdin {
				t.Errorf("FromStdin not set")
			}
		}},
		// Options after the command, before the workload, with _ or -.
		{"--threads=4 /usr/share/sysbench/oltp_read_only.lua run --table_size=500 --range-size=10", func(t *testing.T, inv Invocation) {
			if inv.Workload != "oltp_read_only" || inv.Options.Workload != "oltp_read_only" || inv.Options.Threads != 4 ||
				inv.Options.TableSize != 500 || inv.Options.RangeSize != 10 {
				t.Errorf("got %s %+v", inv.Workload, inv.Options)
			}
		}},
		{"./oltp_point_select.lua prepare", func(t *testing.T, inv Invocation) {
			if inv.Workload != "oltp_point_select" || inv.Command != "prepare" {
				t.Errorf("got %q %q", inv.Workload, inv.Command)
			}
		}},
		// Booleans: bare means on; on/off/true/false/1/0.
		{"oltp_read_write --skip_trx --histogram --auto-inc=off --secondary=true --create_secondary=0 --range_selects=1 run", func(t *testing.T, inv Invocation) {
			o := inv.Options
			if !o.SkipTrx || !o.Histogram || o.AutoInc || !o.Secondary || o.CreateSecondary || !o.RangeSelects {
				t.Errorf("options %+v", o)
			}
		}},
		// Deprecated aliases.
		{"oltp_read_write --num-threads=3 --max-time=7 --max-requests=99 --tx-rate=50 run", func(t *testing.T, inv Invocation) {
			o := inv.Options
			if o.Threads != 3 || o.Time != 7*time.Second || o.Events != 99 || o.Rate != 50 {
				t.Errorf("options %+v", o)
			}
		}},
		// Sub-second report interval, warm-up, rate, seeds, PS mode, errors.
		{"oltp_write_only --report-interval=0.5 --warmup-time=30 --rate=100.5 --rand-seed=42 --db-ps-mode=disable --mysql-ignore-errors=all --percentile=99 run", func(t *testing.T, inv Invocation) {
			o := inv.Options
			if o.ReportInterval != 500*time.Millisecond || o.Warmup != 30*time.Second || o.Rate != 100.5 || o.RandSeed != 42 ||
				o.PSMode != "disable" || !o.IgnoreAllErrors || o.Percentile != 99 {
				t.Errorf("options %+v", o)
			}
		}},
		{"oltp_read_write --mysql-ignore-errors=1062,1213 run", func(t *testing.T, inv Invocation) {
			if !reflect.DeepEqual(inv.Options.IgnoreErrors, []uint16{1062, 1213}) || inv.Options.IgnoreAllErrors {
				t.Errorf("ignore %v", inv.Options.IgnoreErrors)
			}
		}},
		// benchmatrix extras and accepted-but-ignored sysbench options.
		{"oltp_read_write --format=json --reinsert-id=auto --verbosity=5 --forced-shutdown=off --forced-shutdown=10 --mysql-ssl=off --mysql-debug=off --db-debug=on --thread-stack-size=64K --debug --validate=off --mysql-dry-run=off --pgsql-variant=redshift run", func(t *testing.T, inv Invocation) {
			if inv.Format != "json" || inv.Options.ReinsertID != "auto" || inv.Verbosity != 5 || inv.Config.TLSConfig != "" {
				t.Errorf("got format %q reinsert %q verbosity %d tls %q", inv.Format, inv.Options.ReinsertID, inv.Verbosity, inv.Config.TLSConfig)
			}
		}},
		// Lists: the first value wins, with a warning.
		{"oltp_read_write --mysql-host=db1,db2 --mysql-port=3307,3308 run", func(t *testing.T, inv Invocation) {
			if inv.Config.Addr != "db1:3307" || len(inv.Warnings) != 1 || !strings.Contains(inv.Warnings[0], "round-robin") {
				t.Errorf("addr %s warnings %q", inv.Config.Addr, inv.Warnings)
			}
		}},
		{"oltp_read_write --mysql-socket=/run/mysqld/mysqld.sock run", func(t *testing.T, inv Invocation) {
			if inv.Config.Net != "unix" || inv.Config.Addr != "/run/mysqld/mysqld.sock" || len(inv.Warnings) != 0 {
				t.Errorf("config %s %s", inv.Config.Net, inv.Config.Addr)
			}
		}},
		{"oltp_read_write --mysql-host=localhost --mysql-socket=/tmp/a.sock,/tmp/b.sock run", func(t *testing.T, inv Invocation) {
			if inv.Config.Net != "unix" || inv.Config.Addr != "/tmp/a.sock" || len(inv.Warnings) != 1 {
				t.Errorf("config %s %s", inv.Config.Net, inv.Config.Addr)
			}
		}},
		// A socket with a remote host is ignored, as libmysqlclient does.
		{"oltp_read_write --mysql-host=10.0.0.5 --mysql-socket=/tmp/a.sock run", func(t *testing.T, inv Invocation) {
			if inv.Config.Net != "tcp" || inv.Config.Addr != "10.0.0.5:3306" {
				t.Errorf("config %s %s", inv.Config.Net, inv.Config.Addr)
			}
		}},
		{"oltp_read_write --mysql-host=::1 --mysql-port=3310 run", func(t *testing.T, inv Invocation) {
			if inv.Config.Addr != "[::1]:3310" {
				t.Errorf("addr %s", inv.Config.Addr)
			}
		}},
		{"oltp_read_write --mysql-ssl=on --mysql-compression=on run", func(t *testing.T, inv Invocation) {
			if inv.Config.TLSConfig != "skip-verify" || !inv.Conn.Compression {
				t.Errorf("tls %q compression %v", inv.Config.TLSConfig, inv.Conn.Compression)
			}
		}},
		{"oltp_read_write --mysql-ssl=verify_identity run", func(t *testing.T, inv Invocation) {
			if inv.Config.TLSConfig != "true" {
				t.Errorf("tls %q", inv.Config.TLSConfig)
			}
		}},
		// An empty password and an empty db are values, not missing ones.
		{"oltp_read_write --mysql-password= --mysql-user=root run", func(t *testing.T, inv Invocation) {
			if inv.Config.Passwd != "" || inv.Config.User != "root" {
				t.Errorf("user %q", inv.Config.User)
			}
		}},
		// Later options win, as in sysbench.
		{"oltp_read_write --threads=2 run --threads=8", func(t *testing.T, inv Invocation) {
			if inv.Options.Threads != 8 {
				t.Errorf("threads %d", inv.Options.Threads)
			}
		}},
		// prepare needs no end of run; warmup is master's name for prewarm.
		{"oltp_read_write --time=0 --events=0 prepare", func(t *testing.T, inv Invocation) {}},
		{"oltp_read_write warmup", func(t *testing.T, inv Invocation) {
			if inv.Command != "prewarm" {
				t.Errorf("command %q", inv.Command)
			}
		}},
		{"oltp_read_write help", func(t *testing.T, inv Invocation) {}},
		{"--help", func(t *testing.T, inv Invocation) {
			if !inv.ShowHelp {
				t.Error("help not set")
			}
		}},
		{"--version", func(t *testing.T, inv Invocation) {
			if !inv.ShowVersion {
				t.Error("version not set")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			inv, err := ParseCommandLine(cliFields(c.line))
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, inv)
		})
	}
}

func TestParseCommandLineErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		line   string
		option string // UsageError.Option
		msg    string // substring of the message
	}{
		{"oltp_read_write --foo=1 run", "--foo", "invalid option: --foo=1"},
		{"oltp_read_write --foo run", "--foo", "invalid option: --foo"},
		{"oltp_read_write --workload=oltp_read_only run", "--workload", "invalid option: --workload=oltp_read_only"},
		{"oltp_read_write --oltp-table-size=5 run", "--oltp-table-size", "invalid option: --oltp-table-size=5\n(--oltp-table-size is a 0.5-era option: 1.0 workloads read --table-size"},
		{"oltp_read_write --oltp-read-only=on run", "--oltp-read-only", "use the workloads oltp_read_only or oltp_write_only"},
		{"oltp_read_write --threads=abc run", "--threads", `invalid option: --threads=abc ("abc" is not an integer)`},
		{"oltp_read_write --threads=0 run", "--threads", "invalid option: --threads=0"},
		{"oltp_read_write --threads run", "--threads", "option --threads needs a value: write --threads=VALUE"},
		{"oltp_read_write --skip_trx=maybe run", "--skip_trx", "invalid option: --skip_trx=maybe"},
		{"oltp_read_write --db-driver=pgsql run", "--db-driver", "only mysql is supported"},
		{"oltp_read_write --mysql-port=99999 run", "--mysql-port", "not a port number"},
		{"oltp_read_write --mysql-port=abc run", "--mysql-port", "not a port number"},
		{"oltp_read_write --mysql-host= run", "--mysql-host", "no host given"},
		{"oltp_read_write --mysql-password run", "--mysql-password", "needs a value"},
		{"oltp_read_write --mysql-ssl=maybe run", "--mysql-ssl", "invalid value for --mysql-ssl"},
		{"oltp_read_write --mysql-ssl-cipher=AES run", "--mysql-ssl-cipher", "not supported"},
		{"oltp_read_write --mysql-dry-run prepare", "--mysql-dry-run", "for run only"},
		{"oltp_read_write --report-checkpoints=10,x run", "--report-checkpoints", "Invalid value for --report-checkpoints: 'x'"},
		{"oltp_read_write --report-checkpoints=-1 run", "--report-checkpoints", "Invalid value for --report-checkpoints: '-1'"},
		{"oltp_read_write --format=xml run", "--format", "want text or json"},
		{"oltp_read_write --verbosity=9 run", "--verbosity", "want 0..5"},
		{"oltp_read_write --forced-shutdown=soon run", "--forced-shutdown", "want off, seconds or N%"},
		{"oltp_read_write --rand-type=zipf run", "--rand-type", "invalid option: --rand-type=zipf"},
		{"oltp_read_write --percentile=101 run", "--percentile", "invalid option: --percentile=101"},
		{"oltp_read_write --rate=NaN run", "--rate", "not a finite number"},
		{"oltp_read_write --histogram --percentile=0 run", "--histogram", "--histogram cannot be used with --percentile=0"},
		{"oltp_read_write --=1 run", "--", "malformed option"},
		{"oltp_read_write -- run", "--", "malformed option"},
		{"oltp_read_write", "", "Command is required. Supported commands: prepare, prewarm, run, cleanup, help"},
		{"oltp_read_write bogus", "", "Unknown command: bogus"},
		{"oltp_read_write run extra", "", "Unrecognized command line argument: extra"},
		{"oltp_common run", "", "Cannot find benchmark 'oltp_common': no such built-in test, file or module"},
		// --name value is not sysbench syntax: the value becomes the test,
		// and the third word is an error, as in sysbench.
		{"--threads 8 oltp_read_write run", "", "Unrecognized command line argument: run"},
		{"--test=/x/oltp_legacy/oltp.lua prewarm", "", "Unknown command: prewarm"},
		{"--test=/x/oltp_legacy/oltp.lua --oltp-read-only=on --oltp-write-only=on run", "--oltp-write-only", "mutually exclusive"},
		{"oltp_read_write --time=0 --events=0 run", "", "both 0"},
		{"select_random_points --tables=2 run", "", "one table only"},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			_, err := ParseCommandLine(cliFields(c.line))
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v (%T), want *UsageError", err, err)
			}
			if ue.Option != c.option || !strings.Contains(ue.Msg, c.msg) {
				t.Fatalf("got option %q msg %q; want option %q msg containing %q", ue.Option, ue.Msg, c.option, c.msg)
			}
		})
	}
}

// TestParseBooleanOptions: sysbench's on/off options are recognised as
// such (a bare --name means on), and numeric or string ones are not.
func TestParseBooleanOptions(t *testing.T) {
	t.Parallel()
	b := booleanOptions()
	for _, name := range []string{"range_selects", "auto_inc", "skip_trx", "secondary", "create_secondary", "histogram"} {
		if !b[name] {
			t.Errorf("%s is not boolean", name)
		}
	}
	for _, name := range []string{"tables", "table_size", "mysql_storage_engine", "rand_type", "percentile", "mysql_ignore_errors", "time", "reinsert_id"} {
		if b[name] {
			t.Errorf("%s is boolean", name)
		}
	}
}

// TestParseEveryOptionReachable: every option of options.go can be given
// on the command line (except workload, which is positional).
func TestParseEveryOptionReachable(t *testing.T) {
	t.Parallel()
	d := DefaultOptions()
	for _, name := range OptionNames() {
		if name == "workload" {
			continue
		}
		_, err := ParseCommandLine([]string{"oltp_read_write", "run", "--" + name + "=" + sampleValue(t, d, name)})
		var ue *UsageError
		if errors.As(err, &ue) && strings.Contains(ue.Msg, "unknown option") {
			t.Errorf("--%s is not reachable: %v", name, err)
		}
	}
}

// TestCLIEveryOptionDocumented: every option of options.go is listed by
// `WORKLOAD help` or by --help, so a new option cannot stay hidden.
func TestCLIEveryOptionDocumented(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeUsage(&b)
	for _, w := range Workloads() {
		WriteHelp(&b, w, DefaultOptions())
		WriteOwnHelp(&b, w, DefaultOptions())
	}
	text := b.String()
	for _, name := range OptionNames() {
		if name == "workload" {
			continue
		}
		if !strings.Contains(text, "--"+name) && !strings.Contains(text, "--"+strings.ReplaceAll(name, "_", "-")) {
			t.Errorf("--%s appears in no help text", name)
		}
	}
}

// sampleValue is the option's default, rendered back as text.
func sampleValue(t *testing.T, d Options, name string) string {
	if booleanOptions()[name] {
		return "on"
	}
	v, ok := OptionsMap(d)[name]
	if !ok {
		return "1"
	}
	switch x := v.(type) {
	case []uint16:
		return "1213"
	case string:
		return x
	default:
		return fmt.Sprint(x)
	}
}

func TestParsePasswordNeverPrinted(t *testing.T) {
	t.Parallel()
	const pw = "s3cr3t-Pa55"
	inv, err := ParseCommandLine([]string{"oltp_read_write", "--mysql-password=" + pw, "--mysql-host=db1,db2", "run"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{fmt.Sprint(inv), fmt.Sprintf("%+v", inv), fmt.Sprintf("%#v", inv), inv.Conn.String(),
		fmt.Sprint(inv.Conn), strings.Join(inv.Warnings, "\n")} {
		if strings.Contains(s, pw) {
			t.Errorf("password printed: %s", s)
		}
	}
	// A bad option after the password, a typo'd password option, and the
	// password given sysbench-incorrectly as "--mysql-password VALUE".
	for _, args := range [][]string{
		{"oltp_read_write", "--mysql-password=" + pw, "--threads=x", "run"},
		{"oltp_read_write", "--mysql-pasword=" + pw, "run"},
		{"oltp_read_write", "--mysql-password", pw, "run"},
		{"oltp_read_write", "--mysql-password=" + pw, "--db-driver=" + pw, "run"},
	} {
		var stdout, stderr bytes.Buffer
		code := mainWith(context.Background(), args, strings.NewReader(""), &stdout, &stderr, fakeEngine(nil, nil, nil))
		if code != ExitUsage || strings.Contains(stdout.String()+stderr.String(), pw) {
			t.Errorf("%q: code %d, output %q", args, code, stdout.String()+stderr.String())
		}
	}
	// An engine error that quotes a DSN is scrubbed, in text and JSON.
	for _, format := range []string{"text", "json"} {
		var stdout, stderr bytes.Buffer
		eng := fakeEngine(nil, nil, fmt.Errorf("dial root:%s@tcp(db1:3306)/sbtest: refused", pw))
		code := mainWith(context.Background(), []string{"oltp_read_write", "--mysql-password=" + pw, "--format=" + format, "run"}, strings.NewReader(""), &stdout, &stderr, eng)
		if code != ExitFailure || strings.Contains(stdout.String()+stderr.String(), pw) || !strings.Contains(stdout.String()+stderr.String(), "root:***@tcp") {
			t.Errorf("%s: code %d, output %q", format, code, stdout.String()+stderr.String())
		}
	}
}

// ---- Main with a fake engine ----

// fakeEngine replays intervals and returns res and err from run; the other
// commands print sysbench's progress lines and return err. A nil res with
// a nil err makes run wait for ctx and return a result with ctx.Err().
func fakeEngine(res *Result, intervals []Interval, err error) engineFuncs {
	progress := func(verb string) func(ctx context.Context, cfg *mysql.Config, o Options, log io.Writer) error {
		return func(ctx context.Context, cfg *mysql.Config, o Options, log io.Writer) error {
			for i := 1; i <= o.Tables; i++ {
				fmt.Fprintf(log, "%s 'sbtest%d'...\n", verb, i)
			}
			return err
		}
	}
	return engineFuncs{
		prepare: progress("Creating table"),
		prewarm: progress("Prewarming table"),
		cleanup: progress("Dropping table"),
		run: func(ctx context.Context, cfg *mysql.Config, o Options, report func(Interval)) (*Result, error) {
			for _, iv := range intervals {
				report(iv)
			}
			if res == nil && err == nil {
				<-ctx.Done()
				r := sampleReportResult()
				r.Options = o
				return r, ctx.Err()
			}
			return res, err
		},
	}
}

func runIntervals(n int, step time.Duration) []Interval {
	var out []Interval
	for i := 0; i < n; i++ {
		iv := sampleReportInterval()
		iv.Start, iv.End = time.Duration(i)*step, time.Duration(i+1)*step
		iv.Events = int64(1000 + 37*i)
		out = append(out, iv)
	}
	return out
}

func TestCLIMainRunTextGolden(t *testing.T) {
	t.Parallel()
	args := cliFields("oltp_read_write --threads=2 --time=3 --report-interval=1 --rand-seed=42 --histogram=on run")
	res := sampleReportResult()
	res.Options.Histogram, res.Options.RandSeed = true, 42
	res.Histogram = [][2]float64{{0.76, 3}, {1.98, 90}, {3.75, 20}, {14.1, 1}}
	var stdout, stderr bytes.Buffer
	code := mainWith(context.Background(), args, strings.NewReader(""), &stdout, &stderr, fakeEngine(res, runIntervals(3, time.Second), nil))
	if code != ExitOK || stderr.Len() != 0 {
		t.Fatalf("code %d stderr %q", code, stderr.String())
	}
	checkGolden(t, "cli_run.golden", stdout.String())
}

func TestCLIMainRateGolden(t *testing.T) {
	t.Parallel()
	args := cliFields("oltp_point_select --extras --rate=200 --warmup-time=1 --report-interval=0.5 run")
	res := sampleReportResult()
	res.Options.Rate, res.Options.Warmup = 200, time.Second
	res.Late, res.Dropped = 4, 1
	ivs := runIntervals(4, 500*time.Millisecond)
	ivs[0].Phase, ivs[1].Phase = engine.PhaseWarmup, engine.PhaseWarmup
	ivs[3].Queue = 12
	var stdout, stderr bytes.Buffer
	code := mainWith(context.Background(), args, strings.NewReader(""), &stdout, &stderr, fakeEngine(res, ivs, nil))
	if code != ExitOK {
		t.Fatalf("code %d stderr %q", code, stderr.String())
	}
	checkGolden(t, "cli_rate.golden", stdout.String())
}

// TestCLIMainStdin: without a test sysbench runs the Lua script on its
// standard input; an empty one does nothing (exit 0), any other is refused.
func TestCLIMainStdin(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		stdin, args string
		code        int
		want        string
	}{
		{"", "--unknown", ExitOK, Banner() + "\n\n"},
		{"print('test')\n", "", ExitFailure, "FATAL: benchmatrix oltp does not run Lua scripts"},
	} {
		var stdout, stderr bytes.Buffer
		code := mainWith(context.Background(), cliFields(c.args), strings.NewReader(c.stdin), &stdout, &stderr, fakeEngine(nil, nil, nil))
		if code != c.code || !strings.Contains(stdout.String(), c.want) {
			t.Errorf("stdin %q: code %d stdout %q stderr %q", c.stdin, code, stdout.String(), stderr.String())
		}
	}
}

// /dev/null is an empty script, not a terminal, though a character device:
// bash 5.2 gives an empty here-document as /dev/null (sysbench's cmdline.t,
// `sysbench --unknown <<EOF`).
func TestCLIMainStdinDevNull(t *testing.T) {
	t.Parallel()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	var stdout, stderr bytes.Buffer
	code := mainWith(context.Background(), cliFields("--unknown"), null, &stdout, &stderr, fakeEngine(nil, nil, nil))
	if code != ExitOK || stdout.String() != Banner()+"\n\n" || stderr.Len() != 0 {
		t.Errorf("stdin /dev/null: code %d stdout %q stderr %q", code, stdout.String(), stderr.String())
	}
}

func TestCLIMainCommands(t *testing.T) {
	t.Parallel()
	cases := []struct {
		line   string
		err    error
		code   int
		stdout string // golden file or "" for none
		stderr string // substring
	}{
		{"oltp_read_write --tables=2 prepare", nil, ExitOK, "cli_prepare.golden", ""},
		{"oltp_read_write --tables=2 prewarm", nil, ExitOK, "cli_prewarm.golden", ""},
		{"oltp_read_write --tables=2 cleanup", nil, ExitOK, "cli_cleanup.golden", ""},
		{"oltp_read_write help", nil, ExitOK, "cli_help.golden", ""},
		{"oltp_read_write help --extras", nil, ExitOK, "cli_help_extras.golden", ""},
		{"bulk_insert help", nil, ExitFailure, "cli_help_bulk_insert.golden", "'bulk_insert' test does not implement the 'help' command.\n"},
		{"--help", nil, ExitOK, "cli_usage.golden", ""},
		{"--version", nil, ExitOK, "cli_version.golden", ""},
		{"oltp_read_write prepare", errors.New("Error 1050 (42S01): Table 'sbtest1' already exists"), ExitFailure, "cli_prepare_fatal.golden", ""},
		{"oltp_read_write run", errors.New("Error 1062: Duplicate entry '5033' for key 'PRIMARY'"), ExitFailure, "cli_run_fatal.golden", ""},
		{"oltp_read_write --verbosity=0 --tables=2 prepare", nil, ExitOK, "cli_quiet.golden", ""},
		{"oltp_read_write --verbosity=2 run", errors.New("boom"), ExitFailure, "cli_quiet_fatal.golden", ""},
		// sysbench's texts and exit code 1 for command-line errors (issue 14).
		{"oltp_read_write --bogus run", nil, ExitUsage, "cli_banner.golden", "invalid option: --bogus\n"},
		{"oltp_read_write --oltp-tables-count=2 run", nil, ExitUsage, "cli_banner.golden", "invalid option: --oltp-tables-count=2\n(--oltp-tables-count is a 0.5-era option: 1.0 workloads read --tables;"},
		{"--verbosity=0 oltp_read_write --bogus run", nil, ExitUsage, "cli_empty.golden", "invalid option: --bogus\n"},
		{"oltp_read_write", nil, ExitUsage, "cli_no_command.golden", ""},
		{"oltp_read_write bogus", nil, ExitUsage, "cli_banner.golden", "Unknown command: bogus\n"},
		{"foo bar", nil, ExitUsage, "cli_unknown_test.golden", ""},
		{"foo bar baz", nil, ExitUsage, "cli_empty.golden", "Unrecognized command line argument: baz\n"},
		{"--mysql-pasword=s3cr3t oltp_read_write run", nil, ExitUsage, "cli_banner.golden", "invalid option: --mysql-pasword=***\n"},
		// Parallel commands print "Initializing worker threads..." only
		// with more than one thread; the scripts' messages ignore
		// --verbosity (cli_quiet.golden); --extras adds benchmatrix's block.
		{"oltp_read_write --threads=2 --tables=2 prepare", nil, ExitOK, "cli_prepare_threads.golden", ""},
		{"oltp_read_write --extras run", nil, ExitOK, "cli_run_extras.golden", ""},
		{"--test=/x/oltp_legacy/oltp.lua --max-requests=5 prepare", nil, ExitOK, "cli_legacy_prepare.golden", "WARNING: the --test option is deprecated."},
		{"oltp_read_write --mysql-host=a,b prepare", nil, ExitOK, "", "warning: several --mysql-host"},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			var res *Result
			if c.err == nil {
				res = sampleReportResult()
			}
			var stdout, stderr bytes.Buffer
			code := mainWith(context.Background(), cliFields(c.line), strings.NewReader(""), &stdout, &stderr, fakeEngine(res, nil, c.err))
			if code != c.code {
				t.Errorf("code %d, want %d (stderr %q)", code, c.code, stderr.String())
			}
			if c.stdout != "" {
				checkGolden(t, c.stdout, stdout.String())
			}
			if !strings.Contains(stderr.String(), c.stderr) {
				t.Errorf("stderr %q, want it to contain %q", stderr.String(), c.stderr)
			}
		})
	}
}

func TestCLIMainInterruptedPrintsWhatWasMeasured(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	ivs := runIntervals(2, time.Second)
	eng := fakeEngine(nil, ivs, nil)
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	var stdout, stderr bytes.Buffer
	code := mainWith(ctx, cliFields("oltp_read_write --report-interval=1 run"), strings.NewReader(""), &stdout, &stderr, eng)
	if code != ExitInterrupted {
		t.Fatalf("code %d, want %d", code, ExitInterrupted)
	}
	out := stdout.String()
	if strings.Count(out, "] thds: ") != 2 || !strings.Contains(out, "SQL statistics:") || !strings.Contains(out, "Threads fairness:") {
		t.Fatalf("stdout lacks the measured part:\n%s", out)
	}
	if strings.Contains(out, "FATAL") || !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("stdout %q stderr %q", out, stderr.String())
	}
}

func TestCLIMainJSON(t *testing.T) {
	t.Parallel()
	res := sampleReportResult()
	var stdout, stderr bytes.Buffer
	code := mainWith(context.Background(), cliFields("oltp_read_write --format=json --threads=2 --report-interval=1 --mysql-password=pw1234 --time=3 run"),
		strings.NewReader(""), &stdout, &stderr, fakeEngine(res, runIntervals(3, time.Second), nil))
	if code != ExitOK {
		t.Fatalf("code %d stderr %q", code, stderr.String())
	}
	var doc JSONReport
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v", err)
	}
	if dec.More() {
		t.Fatal("more than one document on stdout")
	}
	if doc.Command != "run" || doc.Workload != "oltp_read_write" || len(doc.Intervals) != 3 || doc.Result == nil ||
		doc.Result.Events != res.Events || doc.Options["threads"].(float64) != 2 || doc.Options["time"].(float64) != 3 ||
		doc.Connection.Address != systemSocket() || doc.Interrupted || doc.Error != "" {
		t.Fatalf("doc = %+v", doc)
	}
	if doc.Intervals[1].TPS != 1037 || doc.Intervals[1].EndS != 2 {
		t.Fatalf("interval = %+v", doc.Intervals[1])
	}

	// prepare: progress to stderr, the document to stdout.
	stdout.Reset()
	stderr.Reset()
	code = mainWith(context.Background(), cliFields("oltp_read_write --format=json --tables=2 prepare"), strings.NewReader(""), &stdout, &stderr, fakeEngine(res, nil, nil))
	if code != ExitOK || !strings.Contains(stderr.String(), "Creating table 'sbtest2'") || json.Unmarshal(stdout.Bytes(), &doc) != nil || doc.Command != "prepare" {
		t.Fatalf("code %d stdout %q stderr %q", code, stdout.String(), stderr.String())
	}
}

// ---- compatibility with sysbench's own output ----

// sysbenchParsers are the regexes typical sysbench result parsers use.
var sysbenchParsers = map[string]*regexp.Regexp{
	"transactions": regexp.MustCompile(`transactions:\s+(\d+)\s+\(([\d.]+) per sec\.\)`),
	"queries":      regexp.MustCompile(`queries:\s+(\d+)\s+\(([\d.]+) per sec\.\)`),
	"percentile":   regexp.MustCompile(`(\d+)th percentile:\s+([\d.]+)`),
	"read":         regexp.MustCompile(`read:\s+(\d+)`),
	"write":        regexp.MustCompile(`write:\s+(\d+)`),
	"other":        regexp.MustCompile(`other:\s+(\d+)`),
	"total":        regexp.MustCompile(`total:\s+(\d+)`),
	"errors":       regexp.MustCompile(`ignored errors:\s+(\d+)\s+\(([\d.]+) per sec\.\)`),
	"reconnects":   regexp.MustCompile(`reconnects:\s+(\d+)\s+\(([\d.]+) per sec\.\)`),
	"total_time":   regexp.MustCompile(`total time:\s+([\d.]+)s`),
	"events":       regexp.MustCompile(`total number of events:\s+(\d+)`),
	"min":          regexp.MustCompile(`min:\s+([\d.]+)`),
	"avg":          regexp.MustCompile(`avg:\s+([\d.]+)`),
	"max":          regexp.MustCompile(`max:\s+([\d.]+)`),
	"sum":          regexp.MustCompile(`sum:\s+([\d.]+)`),
	"fair_events":  regexp.MustCompile(`events \(avg/stddev\):\s+([\d.]+)/([\d.]+)`),
	"fair_time":    regexp.MustCompile(`execution time \(avg/stddev\):\s+([\d.]+)/([\d.]+)`),
}

var intervalParser = regexp.MustCompile(`(?m)^\[ (\d+)s \] thds: (\d+) tps: ([\d.]+) qps: ([\d.]+) \(r/w/o: ([\d.]+)/([\d.]+)/([\d.]+)\) lat \(ms,(\d+)%\): ([\d.]+) err/s: ([\d.]+) reconn/s: ([\d.]+)$`)

// parseSysbench applies sysbenchParsers, requiring each to match exactly once.
func parseSysbench(t *testing.T, out string) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	for name, re := range sysbenchParsers {
		m := re.FindAllStringSubmatch(out, -1)
		if len(m) != 1 {
			t.Errorf("%s: %d matches of %s, want 1", name, len(m), re)
			continue
		}
		got[name] = m[0][1:]
	}
	return got
}

func TestSummaryParsesWithSysbenchRegexes(t *testing.T) {
	t.Parallel()
	// The whole output (intervals, histogram, summary, extras) must give the
	// same values a sysbench parser would read from sysbench.
	res := sampleReportResult()
	res.Options.Histogram, res.Options.Rate, res.Options.Warmup = true, 1000, 5*time.Second
	res.Histogram = [][2]float64{{1.98, 10}}
	var stdout, stderr bytes.Buffer
	code := mainWith(context.Background(), cliFields("oltp_read_write --threads=2 --report-interval=1 --histogram --rate=1000 --warmup-time=5 run"),
		strings.NewReader(""), &stdout, &stderr, fakeEngine(res, runIntervals(3, time.Second), nil))
	if code != ExitOK {
		t.Fatal(code, stderr.String())
	}
	p := parseSysbench(t, stdout.String())
	want := map[string][]string{
		"transactions": {"10096", "1009.46"},
		"queries":      {"201937", "20190.87"},
		"percentile":   {"95", "3.75"},
		"read":         {"141358"}, "write": {"40386"}, "other": {"20193"}, "total": {"201937"},
		"errors":     {"1", "0.10"},
		"reconnects": {"0", "0.00"},
		"total_time": {"10.0014"},
		"events":     {"10096"},
		"min":        {"0.76"}, "avg": {"1.98"}, "max": {"14.10"}, "sum": {"19988.49"},
		"fair_events": {"5048.0000", "81.00"},
		"fair_time":   {"9.9942", "0.00"},
	}
	for k, v := range want {
		if !reflect.DeepEqual(p[k], v) {
			t.Errorf("%s = %q, want %q", k, p[k], v)
		}
	}
	ivs := intervalParser.FindAllStringSubmatch(stdout.String(), -1)
	if len(ivs) != 3 || ivs[2][1] != "3" || ivs[2][3] != "1074.00" || ivs[2][8] != "95" {
		t.Errorf("intervals = %q", ivs)
	}
}

// sysbenchDryRun runs the real sysbench 1.0.20 without a server.
func sysbenchDryRun(t *testing.T, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("sysbench")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install sysbench: %v", err)
		}
		t.Skip("sysbench is not installed")
	}
	out, err := exec.Command(path, args...).Output()
	if err != nil {
		t.Fatalf("sysbench %q: %v\n%s", args, err, out)
	}
	if !strings.HasPrefix(string(out), "sysbench 1.0.20 ") {
		t.Skipf("not sysbench 1.0.20: %.40q", out)
	}
	return string(out)
}

var (
	layoutNumberRE  = regexp.MustCompile(`\d+(\.\d+)?`)
	layoutSpaceRE   = regexp.MustCompile(`\s+`)
	layoutHistRowRE = regexp.MustCompile(`^ +[\d.]+ \|\**\s+\d+$`)
)

// sysbenchLayout reduces output to its shape: the banner and benchmatrix's extras
// go, a run of histogram rows becomes one row, and a run of interval (and
// queue) lines becomes one line of each kind, since how many intervals a
// run prints depends on timing.
func sysbenchLayout(out string) []string {
	norm := func(s string) string {
		return layoutSpaceRE.ReplaceAllString(layoutNumberRE.ReplaceAllString(s, "#"), " ")
	}
	var shape []string
	seen := map[string]bool{} // interval-line kinds in the current run
	for _, l := range strings.Split(out, "\n")[1:] {
		if strings.HasPrefix(l, "benchmatrix extras") {
			break
		}
		if !strings.HasPrefix(l, "[ ") {
			seen = map[string]bool{}
		} else if seen[norm(l)] {
			continue
		} else {
			seen[norm(l)] = true
		}
		if layoutHistRowRE.MatchString(l) {
			if len(shape) > 0 && shape[len(shape)-1] == "<histogram row>" {
				continue
			}
			l = "<histogram row>"
		}
		shape = append(shape, l)
	}
	return shape
}

// sameLayout: equal once numbers are # and spaces collapsed, and either
// the first number starts in the same column (left-aligned fields) or the
// lines have the same length (right-aligned fields).
func sameLayout(a, b string) bool {
	norm := func(s string) string {
		return layoutSpaceRE.ReplaceAllString(layoutNumberRE.ReplaceAllString(s, "#"), " ")
	}
	if norm(a) != norm(b) {
		return false
	}
	ia, ib := layoutNumberRE.FindStringIndex(a), layoutNumberRE.FindStringIndex(b)
	return ia == nil && ib == nil || ia != nil && ib != nil && ia[0] == ib[0] || len(a) == len(b)
}

func TestCLIOutputMatchesSysbenchLayout(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args      string
		intervals int
	}{
		{"oltp_read_write --time=2 --report-interval=1 run", 2},
		{"oltp_point_select --time=2 --report-interval=1 --rate=100 --rand-seed=42 --histogram=on --percentile=99 --threads=2 run", 2},
		{"oltp_read_only --events=2000 --time=0 --percentile=0 --threads=2 run", 0},
	}
	for _, c := range cases {
		t.Run(c.args, func(t *testing.T) {
			t.Parallel()
			args := cliFields(c.args)
			theirs := sysbenchDryRun(t, append([]string{"--mysql-dry-run=on"}, args...)...)
			inv, err := ParseCommandLine(args)
			if err != nil {
				t.Fatal(err)
			}
			res := sampleReportResult()
			res.Options = inv.Options
			res.Histogram = [][2]float64{{0.5, 3}, {1.98, 90}, {3.75, 20}}
			var stdout, stderr bytes.Buffer
			if code := mainWith(context.Background(), args, strings.NewReader(""), &stdout, &stderr, fakeEngine(res, runIntervals(c.intervals, time.Second), nil)); code != 0 {
				t.Fatal(code, stderr.String())
			}
			ours := stdout.String()
			a, b := sysbenchLayout(theirs), sysbenchLayout(ours)
			for i := 0; i < max(len(a), len(b)); i++ {
				var x, y string
				if i < len(a) {
					x = a[i]
				}
				if i < len(b) {
					y = b[i]
				}
				if !sameLayout(x, y) {
					t.Errorf("line %d:\n  sysbench %q\n  ours     %q", i+2, x, y)
				}
			}
			// The parsers read both alike.
			if c.args[:4] == "oltp" && !strings.Contains(c.args, "--percentile=0") {
				parseSysbench(t, theirs)
				parseSysbench(t, ours)
			}
			if n, m := len(intervalParser.FindAllString(theirs, -1)), len(intervalParser.FindAllString(ours, -1)); (n == 0) != (m == 0) {
				t.Errorf("interval lines: sysbench %d, ours %d", n, m)
			}
		})
	}
}

func TestCLIHelpMatchesSysbench(t *testing.T) {
	t.Parallel()
	for _, w := range []string{"oltp_read_write", "oltp_point_select", "select_random_points", "select_random_ranges"} {
		theirs := sysbenchDryRun(t, w, "help")
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), []string{w, "help"}, &stdout, &stderr); code != 0 {
			t.Fatal(code, stderr.String())
		}
		// Byte for byte after the banner: benchmatrix's --recreate and
		// --reinsert_id follow it only with --extras.
		a, b := strings.Split(theirs, "\n")[1:], strings.Split(stdout.String(), "\n")[1:]
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s help differs:\n%s", w, lineDiff(strings.Join(a, "\n"), strings.Join(b, "\n")))
		}
	}
}

// ---- against a real server ----

// TestCLIIntegration runs prepare, run and cleanup through Main against a
// sandboxed server. It skips when no server binary is installed (fails
// under CI) and while the engine is not implemented yet.
func TestCLIIntegration(t *testing.T) {
	if _, err := server.FindBinary(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install a server: %v", err)
		}
		t.Skip(err)
	}
	if testing.Short() {
		t.Skip("-short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sb, err := server.StartSandbox(ctx, server.SandboxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Stop(context.Background()) })
	cfg := sb.Endpoint()
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS sbtest"); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(cfg.Addr)
	common := []string{"oltp_point_select", "--mysql-host=" + host, "--mysql-port=" + port, "--mysql-user=root", "--tables=1", "--table-size=1000"}
	main := func(extra ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := Main(ctx, append(append([]string(nil), common...), extra...), &stdout, &stderr)
		shown := regexp.MustCompile(`--mysql-password=\S*`).ReplaceAllString(strings.Join(extra, " "), "--mysql-password=***")
		t.Logf("benchmatrix oltp %s: exit %d\n%s%s", shown, code, stdout.String(), stderr.String())
		return code, stdout.String() + stderr.String()
	}

	code, out := main("prepare")
	if code != ExitOK && strings.Contains(out, "not implemented") {
		t.Skip("the engine is not implemented yet")
	}
	if code != ExitOK {
		t.Fatalf("prepare: exit %d", code)
	}
	var rows int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sbtest.sbtest1").Scan(&rows); err != nil || rows != 1000 {
		t.Fatalf("after prepare: %d rows, %v", rows, err)
	}

	code, out = main("--time=2", "--report-interval=1", "run")
	if code != ExitOK {
		if strings.Contains(out, "not implemented") {
			t.Skip("Run is not implemented yet")
		}
		t.Fatalf("run: exit %d", code)
	}
	if n := len(intervalParser.FindAllString(out, -1)); n < 1 {
		t.Errorf("run printed %d interval lines", n)
	}
	p := parseSysbench(t, out)
	if tx, _ := strconv.Atoi(p["transactions"][0]); tx <= 0 {
		t.Errorf("transactions = %q", p["transactions"])
	}
	if p["read"][0] != p["total"][0] {
		t.Errorf("point selects are all reads: read %s total %s", p["read"][0], p["total"][0])
	}

	// The real sysbench against the same tables, if installed: same layout,
	// histogram included.
	if _, err := exec.LookPath("sysbench"); err == nil {
		args := append(append([]string(nil), common...), "--time=2", "--report-interval=1", "--histogram=on", "--percentile=99", "run")
		theirs, err := exec.CommandContext(ctx, "sysbench", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("sysbench %q: %v\n%s", args, err, theirs)
		}
		code, ours := main(args[len(common):]...)
		if code != ExitOK {
			t.Fatalf("run --histogram: exit %d", code)
		}
		a, b := sysbenchLayout(string(theirs)), sysbenchLayout(ours)
		for i := 0; i < max(len(a), len(b)); i++ {
			var x, y string
			if i < len(a) {
				x = a[i]
			}
			if i < len(b) {
				y = b[i]
			}
			if !sameLayout(x, y) {
				t.Errorf("line %d:\n  sysbench %q\n  ours     %q", i+2, x, y)
			}
		}
		t.Logf("sysbench:\n%s", theirs)
	}

	var stdout, stderr bytes.Buffer
	if code := Main(ctx, append(append([]string(nil), common...), "--time=1", "--format=json", "run"), &stdout, &stderr); code != ExitOK {
		t.Fatalf("json run: exit %d: %s", code, stderr.String())
	}
	var doc JSONReport
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || doc.Result == nil || doc.Result.Events <= 0 {
		t.Fatalf("json run: %v %+v", err, doc.Result)
	}

	// An interrupt stops the run early, prints what was measured, exits 130.
	ictx, icancel := context.WithCancel(ctx)
	time.AfterFunc(1500*time.Millisecond, icancel)
	stdout.Reset()
	stderr.Reset()
	start := time.Now()
	code = Main(ictx, append(append([]string(nil), common...), "--time=60", "--report-interval=1", "run"), &stdout, &stderr)
	if code != ExitInterrupted || time.Since(start) > 20*time.Second {
		t.Fatalf("interrupted run: exit %d after %v\n%s%s", code, time.Since(start), stdout.String(), stderr.String())
	}
	if p := parseSysbench(t, stdout.String()); len(p["transactions"]) == 0 || p["transactions"][0] == "0" {
		t.Errorf("interrupted run printed no transactions:\n%s", stdout.String())
	}

	// A wrong password is a FATAL error that does not print the password.
	const badPassword = "Wr0ng-Pa55word"
	code, out = main("--mysql-password="+badPassword, "--time=1", "run")
	if code != ExitFailure || !strings.Contains(out, "FATAL: ") || strings.Contains(out, badPassword) {
		t.Errorf("wrong password: exit %d", code)
	}

	if code, _ := main("cleanup"); code != ExitOK {
		t.Fatalf("cleanup: exit %d", code)
	}
	// Running on dropped tables is a FATAL error (exit 1), as in sysbench.
	if code, out := main("--time=1", "run"); code != ExitFailure || !strings.Contains(out, "FATAL: ") {
		t.Errorf("run without tables: exit %d", code)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='sbtest'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("after cleanup: %d tables, %v", n, err)
	}
}
