package runner

import (
	"context"
	"io"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/experiment"
	"benchmatrix/oltp"
	"benchmatrix/slap"
)

// Slap runs a slap cell (mysqlslap's statements, slap/) behind the
// Workload interface. It has nothing to load: each iteration creates its
// own schema and tables, and drops them, as mysqlslap does.
type Slap struct {
	Config slap.Config
	Log    io.Writer
}

var _ Workload = Slap{}

// Prepare implements Workload: nothing to load.
func (Slap) Prepare(context.Context, *mysql.Config, oltp.Options) error { return nil }

// Cleanup implements Workload: every run drops its own schema.
func (Slap) Cleanup(context.Context, *mysql.Config, oltp.Options) error { return nil }

// Prewarm implements Workload: mysqlslap's tables are new each iteration.
func (Slap) Prewarm(context.Context, *mysql.Config, oltp.Options) error { return nil }

// Run implements Workload.
func (s Slap) Run(ctx context.Context, cfg *mysql.Config, o oltp.Options, report func(oltp.Interval)) (*oltp.Result, error) {
	return slap.Workload{Config: s.Config}.Run(ctx, cfg, o, report)
}

// useWorkloadFor makes the cell's workload implementation the runner's
// for the cell: Slap for a slap cell, the configured one otherwise. The
// returned func puts the configured one back.
func (r *Runner) useWorkloadFor(c *experiment.Cell) func() {
	prev := r.cfg.Workload
	if c.Slap != nil {
		r.cfg.Workload = Slap{Config: *c.Slap, Log: r.log}
	}
	return func() { r.cfg.Workload = prev }
}
