package runner

import (
	"context"
	"io"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/oltp"
)

// OLTP is the built-in engine behind the Workload interface.
type OLTP struct {
	// Log receives the engine's progress lines (prepare); nil discards them.
	Log io.Writer
	// Procs, if set, makes room in the scheduler for workers on blocking
	// sockets (the command owns GOMAXPROCS; see oltp.ProcReserver).
	Procs oltp.ProcReserver
}

var _ Workload = OLTP{}

func (e OLTP) log() io.Writer {
	if e.Log == nil {
		return io.Discard
	}
	return e.Log
}

// Prepare implements Workload.
func (e OLTP) Prepare(ctx context.Context, cfg *mysql.Config, o oltp.Options) error {
	return oltp.Prepare(ctx, cfg, o, e.log())
}

// Cleanup implements Workload.
func (e OLTP) Cleanup(ctx context.Context, cfg *mysql.Config, o oltp.Options) error {
	return oltp.Cleanup(ctx, cfg, o, e.log())
}

// Prewarm implements Workload.
func (e OLTP) Prewarm(ctx context.Context, cfg *mysql.Config, o oltp.Options) error {
	return oltp.Prewarm(ctx, cfg, o, e.log())
}

// Run implements Workload.
func (e OLTP) Run(ctx context.Context, cfg *mysql.Config, o oltp.Options, report func(oltp.Interval)) (*oltp.Result, error) {
	return oltp.RunWith(ctx, cfg, o, report, e.Procs)
}
