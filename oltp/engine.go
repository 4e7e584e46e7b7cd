package oltp

import (
	"context"
	"io"

	"github.com/go-sql-driver/mysql"
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
func Run(ctx context.Context, cfg *mysql.Config, o Options, report func(Interval)) (*Result, error) {
	return run(ctx, cfg, o, report)
}
