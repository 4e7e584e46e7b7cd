package oltp

import (
	"context"
	"io"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/sqlconn"
)

// Prepare creates the workload's tables in cfg.DBName and loads them.
// Progress lines (sysbench's wording) go to log.
func Prepare(ctx context.Context, cfg *mysql.Config, o Options, log io.Writer) error {
	return prepare(ctx, cfg, o, log)
}

// Prewarm reads every table (and its secondary index) into the buffer pool.
func Prewarm(ctx context.Context, cfg *mysql.Config, o Options, log io.Writer) error {
	return prewarm(ctx, cfg, o, log)
}

// Cleanup drops the tables the workload defines, and nothing else.
func Cleanup(ctx context.Context, cfg *mysql.Config, o Options, log io.Writer) error {
	return cleanup(ctx, cfg, o, log)
}

// Run drives the workload for o.Warmup (reported with PhaseWarmup, excluded
// from the result) and then o.Time or o.Events. report, if not nil, is called
// from one goroutine at the end of every interval (o.ReportInterval; when
// that is 0 no intervals are reported). Cancelling ctx stops new events,
// lets in-flight ones finish, and returns what was measured with ctx.Err().
// With o.ForcedShutdown set, in-flight events get that long after the time
// limit (or the cancellation) and are then cut: the run returns its result,
// with Result.ForcedShutdown set, and no error for the cut.
//
// Run is RunWith without a ProcReserver: it uses blocking sockets only
// when GOMAXPROCS already has room for them, and never changes it.
func Run(ctx context.Context, cfg *mysql.Config, o Options, report func(Interval)) (*Result, error) {
	return run(ctx, cfg, o, report, nil)
}

// RunWith is Run with procs, which the run asks for one P per worker when
// it uses blocking sockets (blocking.go) and gives back when it ends. A nil
// procs is Run.
func RunWith(ctx context.Context, cfg *mysql.Config, o Options, report func(Interval), procs sqlconn.ProcReserver) (*Result, error) {
	return run(ctx, cfg, o, report, procs)
}
