// Command bench-vs-sysbench compares benchmatrix's OLTP engine with the
// real sysbench binary on one sandboxed server: throughput, client CPU per
// transaction and prepare speed, alternating the two tools on the same data
// so that drift in the machine hits both alike.
//
//	go run ./cmd/bench-vs-sysbench [-time 10s] [-rounds 3] [-table-size 100000]
//	go run ./cmd/bench-vs-sysbench -workloads oltp_insert -rounds 1 -syscalls /tmp/sc
//
// -syscalls runs both clients under `perf stat` and prints their syscalls,
// context switches, CPU migrations and page faults per transaction; the
// machine is usually shared, so compare ours and sysbench from one run.
//
// The engine runs in a child process (this binary re-executed with -child)
// so that its CPU time can be read from the child's rusage exactly as
// sysbench's is.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	cmdprocs "benchmatrix/cmd/internal/procs"
	"benchmatrix/observe"
	"benchmatrix/oltp"
	"benchmatrix/server"
)

type config struct {
	runTime     time.Duration
	rounds      int
	tables      int
	tableSize   int
	rwThreads   int
	psThreads   int
	prepShapes  string
	prepThreads int
	workloads   string
	cpuprofile  string
	syscalls    string
}

// procs lets the engine's blocking-socket workers each have a P, as in
// benchmatrix itself, so that the figures compare the same engine.
var procs = cmdprocs.New()

func main() {
	var cfg config
	child := flag.Bool("child", false, "internal: run the engine from JSON options on stdin")
	flag.DurationVar(&cfg.runTime, "time", 10*time.Second, "length of each run")
	flag.IntVar(&cfg.rounds, "rounds", 3, "alternations of the two tools per workload")
	flag.IntVar(&cfg.tables, "tables", 4, "tables for the run workloads")
	flag.IntVar(&cfg.tableSize, "table-size", 100000, "rows per table for the run workloads")
	flag.IntVar(&cfg.rwThreads, "rw-threads", 8, "threads of oltp_read_write")
	flag.IntVar(&cfg.psThreads, "ps-threads", 8, "threads of oltp_point_select")
	flag.StringVar(&cfg.prepShapes, "prepare-shapes", "4x100000,1x400000", "TABLESxROWS shapes for the prepare comparison (the second has fewer tables than threads: sysbench loads it on one connection)")
	flag.IntVar(&cfg.prepThreads, "prepare-threads", 2, "threads for the prepare comparison")
	flag.StringVar(&cfg.workloads, "workloads", "oltp_read_write,oltp_point_select,oltp_insert,prepare", "what to compare")
	flag.StringVar(&cfg.cpuprofile, "cpuprofile", "", "child: write a CPU profile of the engine's runs to this file prefix")
	flag.StringVar(&cfg.syscalls, "syscalls", "", "count both clients' syscalls and context switches with `perf stat` (kernel tracepoints, little overhead), writing to this file prefix, and print them per transaction")
	flag.Parse()
	if *child {
		if err := runChild(); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := compare(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench-vs-sysbench:", err)
		os.Exit(1)
	}
}

// childRequest is what the parent sends the child on stdin.
type childRequest struct {
	Addr       string       `json:"addr"`
	DB         string       `json:"db"`
	Options    oltp.Options `json:"options"`
	Prepare    bool         `json:"prepare"`
	CPUProfile string       `json:"cpuprofile,omitempty"`
}

func runChild() error {
	var req childRequest
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		return err
	}
	c := mysql.NewConfig()
	c.User, c.Net, c.Addr, c.DBName = "root", "tcp", req.Addr, req.DB
	stopProfile, err := startProfile(req.CPUProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	ctx := context.Background()
	if req.Prepare {
		return oltp.Prepare(ctx, c, req.Options, io.Discard)
	}
	res, err := oltp.RunWith(ctx, c, req.Options, nil, procs)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// sample is one run of one tool.
type sample struct {
	tps     float64
	events  int64
	cpu     time.Duration // user + sys of the client process
	sys     time.Duration // of which in the kernel
	elapsed time.Duration
}

// sysShare is the kernel's share of the client's CPU.
func (s sample) sysShare() float64 {
	if s.cpu == 0 {
		return 0
	}
	return s.sys.Seconds() / s.cpu.Seconds()
}

func (s sample) cpuPerTxn() float64 {
	if s.events == 0 {
		return 0
	}
	return s.cpu.Seconds() / float64(s.events)
}

// rusageCPU is a finished client's CPU time, user + sys, and sys alone.
func rusageCPU(ps *os.ProcessState) (total, sys time.Duration) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return ps.UserTime() + ps.SystemTime(), ps.SystemTime()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), time.Duration(ru.Stime.Nano())
}

type bench struct {
	cfg  config
	sb   *server.Sandbox
	ep   *mysql.Config
	self string
	db   *sql.DB
}

func compare(ctx context.Context, cfg config) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if _, err := exec.LookPath("sysbench"); err != nil {
		return errors.New("sysbench is not installed (apt-get install sysbench)")
	}
	fmt.Println("starting a sandbox server...")
	sb, err := server.StartSandbox(ctx, server.SandboxConfig{Startup: []server.Setting{
		{Name: "innodb_buffer_pool_size", Value: "512M"},
		{Name: "max_connections", Value: "200"},
	}})
	if err != nil {
		return err
	}
	defer sb.Stop(context.Background())
	ep := sb.Endpoint()
	cn, err := mysql.NewConnector(ep)
	if err != nil {
		return err
	}
	root := sql.OpenDB(cn)
	defer root.Close()
	if _, err := root.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS sbtest"); err != nil {
		return err
	}
	ep = ep.Clone()
	ep.DBName = "sbtest"
	b := &bench{cfg: cfg, sb: sb, ep: ep, self: self, db: root}
	info := sb.Info()
	fmt.Printf("server: %s %s at %s; runs of %v, %d rounds, alternating ours and sysbench\n\n",
		info.Flavor, info.Version, info.Address, cfg.runTime, cfg.rounds)

	var lines []string
	for _, w := range strings.Split(cfg.workloads, ",") {
		w = strings.TrimSpace(w)
		var line string
		var err error
		switch w {
		case "":
			continue
		case "prepare":
			for _, shape := range strings.Split(cfg.prepShapes, ",") {
				var tables, size int
				if _, err := fmt.Sscanf(strings.TrimSpace(shape), "%dx%d", &tables, &size); err != nil || tables < 1 || size < 1 {
					return fmt.Errorf("-prepare-shapes: %q is not TABLESxROWS", shape)
				}
				line, err := b.comparePrepare(ctx, tables, size)
				if err != nil {
					return fmt.Errorf("prepare %s: %w", shape, err)
				}
				lines = append(lines, line)
			}
			continue
		case "oltp_read_write":
			line, err = b.compareRun(ctx, w, cfg.rwThreads)
		case "oltp_point_select":
			line, err = b.compareRun(ctx, w, cfg.psThreads)
		default:
			line, err = b.compareRun(ctx, w, 1)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", w, err)
		}
		lines = append(lines, line)
	}
	fmt.Println("\nsummary (medians; ratio = ours / sysbench):")
	for _, l := range lines {
		fmt.Println(l)
	}
	return nil
}

// options returns the engine options equivalent to the sysbench flags.
func (b *bench) options(workload string, threads int) oltp.Options {
	o := oltp.DefaultOptions()
	o.Workload = workload
	o.Tables = b.cfg.tables
	o.TableSize = b.cfg.tableSize
	o.Threads = threads
	o.Time = b.cfg.runTime
	o.RandType = "uniform"
	return o
}

func (b *bench) sysbenchArgs(workload string, o oltp.Options, cmd string) []string {
	port := b.ep.Addr[strings.LastIndexByte(b.ep.Addr, ':')+1:]
	return []string{workload, "--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-port=" + port,
		"--mysql-user=root", "--mysql-db=sbtest",
		"--tables=" + strconv.Itoa(o.Tables), "--table-size=" + strconv.Itoa(o.TableSize),
		"--threads=" + strconv.Itoa(o.Threads), "--time=" + strconv.Itoa(int(o.Time.Seconds())),
		"--rand-type=" + o.RandType, "--auto-inc=" + onOff(o.AutoInc), cmd}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

var transactionsRE = regexp.MustCompile(`transactions:\s+(\d+)\s+\(([\d.]+) per sec`)

// command runs name with args, under perf stat when -syscalls asks for
// it (out names the output file).
func (b *bench) command(ctx context.Context, out, name string, args ...string) *exec.Cmd {
	if b.cfg.syscalls == "" || out == "" {
		return exec.CommandContext(ctx, name, args...)
	}
	return exec.CommandContext(ctx, "perf", append([]string{"stat", "-x", ",", "-e", perfEvents, "-o", b.cfg.syscalls + "." + out, name}, args...)...)
}

func (b *bench) runSysbench(ctx context.Context, args []string) (sample, string, error) {
	return b.runSysbenchTraced(ctx, "", args)
}

func (b *bench) runSysbenchTraced(ctx context.Context, trace string, args []string) (sample, string, error) {
	cmd := b.command(ctx, trace, "sysbench", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	s := sample{elapsed: time.Since(start)}
	if err != nil {
		return s, out.String(), fmt.Errorf("sysbench %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	s.cpu, s.sys = rusageCPU(cmd.ProcessState)
	if m := transactionsRE.FindStringSubmatch(out.String()); m != nil {
		s.events, _ = strconv.ParseInt(m[1], 10, 64)
		s.tps, _ = strconv.ParseFloat(m[2], 64)
	}
	return s, out.String(), nil
}

func (b *bench) runChild(ctx context.Context, req childRequest) (sample, *oltp.Result, error) {
	return b.runChildTraced(ctx, "", req)
}

func (b *bench) runChildTraced(ctx context.Context, trace string, req childRequest) (sample, *oltp.Result, error) {
	req.Addr, req.DB = b.ep.Addr, b.ep.DBName
	in, err := json.Marshal(req)
	if err != nil {
		return sample{}, nil, err
	}
	cmd := b.command(ctx, trace, b.self, "-child")
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err = cmd.Run()
	s := sample{elapsed: time.Since(start)}
	if err != nil {
		return s, nil, fmt.Errorf("engine child: %w\n%s", err, errOut.String())
	}
	s.cpu, s.sys = rusageCPU(cmd.ProcessState)
	if req.Prepare {
		return s, nil, nil
	}
	var res oltp.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return s, nil, fmt.Errorf("engine child output: %w", err)
	}
	s.events, s.tps = res.Events, res.TPS()
	return s, &res, nil
}

func (b *bench) cleanupAll(ctx context.Context, o oltp.Options) error {
	return oltp.Cleanup(ctx, b.ep, o, io.Discard)
}

func (b *bench) compareRun(ctx context.Context, workload string, threads int) (string, error) {
	o := b.options(workload, threads)
	fmt.Printf("%s, %d threads: preparing %d×%d rows\n", workload, threads, o.Tables, o.TableSize)
	if err := b.cleanupAll(ctx, o); err != nil {
		return "", err
	}
	if err := oltp.Prepare(ctx, b.ep, o, io.Discard); err != nil {
		return "", err
	}
	defer b.cleanupAll(context.Background(), o)
	var ours, theirs []sample
	for r := 0; r < b.cfg.rounds; r++ {
		req := childRequest{Options: o}
		if b.cfg.cpuprofile != "" {
			req.CPUProfile = fmt.Sprintf("%s.%s.%d", b.cfg.cpuprofile, workload, r)
		}
		ourTrace := fmt.Sprintf("ours.%s.%d", workload, r)
		s, _, err := b.runChildTraced(ctx, ourTrace, req)
		if err != nil {
			return "", err
		}
		ours = append(ours, s)
		fmt.Printf("  round %d  ours:     %9.1f tps  %7.1f µs CPU/txn (%.0f%% in the kernel)\n", r+1, s.tps, s.cpuPerTxn()*1e6, 100*s.sysShare())
		b.printSyscalls(ourTrace, s.events)
		theirTrace := fmt.Sprintf("sysbench.%s.%d", workload, r)
		t, _, err := b.runSysbenchTraced(ctx, theirTrace, b.sysbenchArgs(workload, o, "run"))
		if err != nil {
			return "", err
		}
		theirs = append(theirs, t)
		fmt.Printf("  round %d  sysbench: %9.1f tps  %7.1f µs CPU/txn (%.0f%% in the kernel)\n", r+1, t.tps, t.cpuPerTxn()*1e6, 100*t.sysShare())
		b.printSyscalls(theirTrace, t.events)
	}
	ot, tt := median(ours, func(s sample) float64 { return s.tps }), median(theirs, func(s sample) float64 { return s.tps })
	oc, tc := median(ours, sample.cpuPerTxn), median(theirs, sample.cpuPerTxn)
	return fmt.Sprintf("%-18s threads=%-2d tps %9.1f vs %9.1f  ratio %.3f   CPU/txn %6.1f vs %6.1f µs  ratio %.3f",
		workload, threads, ot, tt, ot/tt, oc*1e6, tc*1e6, oc/tc), nil
}

func (b *bench) comparePrepare(ctx context.Context, tables, size int) (string, error) {
	o := oltp.DefaultOptions()
	o.Workload = "oltp_read_write"
	o.Tables, o.TableSize, o.Threads = tables, size, b.cfg.prepThreads
	rows := float64(o.Tables * o.TableSize)
	fmt.Printf("prepare: %d tables × %d rows, %d threads (default rand-type special, as sysbench)\n", o.Tables, o.TableSize, o.Threads)
	// Where the work goes: the server's CPU seconds (from /proc) beside
	// the client's (rusage), per 1,000 rows.
	type prep struct{ rate, client, server float64 }
	var ours, theirs []prep
	measure := func(run func() (sample, error)) (prep, error) {
		before, err := observe.ProcessCPU(b.sb.PID())
		if err != nil {
			return prep{}, err
		}
		s, err := run()
		if err != nil {
			return prep{}, err
		}
		after, err := observe.ProcessCPU(b.sb.PID())
		if err != nil {
			return prep{}, err
		}
		k := rows / 1000
		return prep{rate: rows / s.elapsed.Seconds(), client: s.cpu.Seconds() * 1e3 / k, server: (after - before).Seconds() * 1e3 / k}, nil
	}
	show := func(r int, who string, p prep) {
		fmt.Printf("  round %d  %-9s %9.0f rows/s  CPU per 1k rows: client %5.2f ms, server %5.2f ms\n", r+1, who+":", p.rate, p.client, p.server)
	}
	for r := 0; r < b.cfg.rounds; r++ {
		if err := b.cleanupAll(ctx, o); err != nil {
			return "", err
		}
		p, err := measure(func() (sample, error) {
			s, _, err := b.runChild(ctx, childRequest{Options: o, Prepare: true})
			return s, err
		})
		if err != nil {
			return "", err
		}
		ours = append(ours, p)
		show(r, "ours", p)
		if err := b.cleanupAll(ctx, o); err != nil {
			return "", err
		}
		args := []string{"oltp_read_write", "--db-driver=mysql", "--mysql-host=127.0.0.1",
			"--mysql-port=" + b.ep.Addr[strings.LastIndexByte(b.ep.Addr, ':')+1:], "--mysql-user=root", "--mysql-db=sbtest",
			"--tables=" + strconv.Itoa(o.Tables), "--table-size=" + strconv.Itoa(o.TableSize),
			"--threads=" + strconv.Itoa(o.Threads), "prepare"}
		p, err = measure(func() (sample, error) {
			s, _, err := b.runSysbench(ctx, args)
			return s, err
		})
		if err != nil {
			return "", err
		}
		theirs = append(theirs, p)
		show(r, "sysbench", p)
	}
	if err := b.cleanupAll(ctx, o); err != nil {
		return "", err
	}
	rate := func(p prep) float64 { return p.rate }
	server := func(p prep) float64 { return p.server }
	client := func(p prep) float64 { return p.client }
	om, tm := median(ours, rate), median(theirs, rate)
	return fmt.Sprintf("%-18s %dx%d rows, %d threads   rows/s %9.0f vs %9.0f  ratio %.3f   CPU per 1k rows: server %.2f vs %.2f ms, client %.2f vs %.2f ms",
		"prepare", o.Tables, o.TableSize, o.Threads, om, tm, om/tm,
		median(ours, server), median(theirs, server), median(ours, client), median(theirs, client)), nil
}

// median is the median of f over xs (0 for none).
func median[T any](xs []T, f func(T) float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
