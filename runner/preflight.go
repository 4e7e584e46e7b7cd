package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"benchmatrix/catalog"
	"benchmatrix/experiment"
	"benchmatrix/lifecycle"
	"benchmatrix/server"
)

// ownConnections is how many connections benchmatrix itself may hold
// besides the workload's (settings, sampling, a stall injector).
const ownConnections = 4

// checkConnections refuses, before the first cell, a cell whose threads do
// not fit the server's max_connections (as the cell itself sets it, or as
// the server has it).
func (r *Runner) checkConnections(vars map[string]string) error {
	serverMax, err := strconv.Atoi(vars["max_connections"])
	if err != nil {
		return nil // unknown: the cell will say so if it happens
	}
	for _, c := range r.plan.Cells {
		limit := serverMax
		for _, p := range c.Server {
			if catalog.VariableName(p.Name) == "max_connections" {
				if n, err := strconv.Atoi(p.Value); err == nil {
					limit = n
				}
			}
		}
		if need := c.Workload.Common().Threads + ownConnections; need > limit {
			where := "in [server.config] or the scenario"
			if _, borrowed := r.srv.(server.Borrowed); borrowed {
				// Startup values of a server benchmatrix does not own are
				// only verified; a scenario or axis value is SET GLOBAL.
				where = "as a scenario or axis value, which benchmatrix sets and puts back"
			}
			return &UsageError{Msg: fmt.Sprintf("cell %s: threads = %d needs %d connections (%d for benchmatrix itself), "+
				"but max_connections is %d; raise max_connections (%s, e.g. max_connections = %d) or use fewer threads",
				c.Name, c.Workload.Common().Threads, need, ownConnections, limit, where, need+10)}
		}
	}
	return nil
}

// BytesPerRow is the on-disk size of one sbtest row with its indexes, as
// measured for InnoDB (about 240 MB for 1M rows), plus slack.
const BytesPerRow = 260

// EstimateBytes is how much disk a data shape needs.
func EstimateBytes(c experiment.Cell) int64 {
	d := c.Workload.Data()
	rows := d.Rows()
	per := d.RowBytes
	if per <= 0 {
		per = BytesPerRow
	}
	b := rows * per
	if rows >= lifecycle.SnapshotMinRows {
		b *= 2 // the snapshot copy
	}
	return b
}

// checkDisk refuses, before the first cell, data that cannot fit the
// filesystem under a local datadir, giving the estimate and the free space.
func (r *Runner) checkDisk() error {
	dir := r.srv.Info().Datadir
	if dir == "" {
		return nil
	}
	if _, err := os.Stat(dir); err != nil {
		return nil // not on this machine (a remote engine)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Clean(dir), &st); err != nil {
		return nil
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	var worst experiment.Cell
	var need int64
	for _, c := range r.plan.Cells {
		if b := EstimateBytes(c); b > need {
			need, worst = b, c
		}
	}
	if need > free {
		d := worst.Workload.Data()
		per := d.RowBytes
		if per <= 0 {
			per = BytesPerRow
		}
		shape := fmt.Sprintf("%d table(s) x %d rows", len(d.Tables), d.RowsPerTable)
		if d.TotalRows > 0 {
			shape = fmt.Sprintf("%d rows in %d table(s)", d.TotalRows, len(d.Tables))
		}
		return &UsageError{Msg: fmt.Sprintf("cell %s: %s need about %s on disk (%d B per row with indexes, "+
			"twice when a snapshot is kept), but the filesystem under %s has %s free; use a smaller table_size or another [server] tmpdir",
			worst.Name, shape, humanBytes(need), per, dir, humanBytes(free))}
	}
	return nil
}

func humanBytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}
