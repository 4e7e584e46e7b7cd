package history

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"benchmatrix/exitcode"
)

// Series is one cell of one experiment with one workload definition: the
// runs whose numbers may be put on one line.
type Series struct {
	ID         string
	Experiment string
	Cell       string
	Runs       int
	First      string // started, of the first and last run
	Last       string
	HasRatio   bool // the cell has a baseline in its runs
}

// Name is how tables and plots title a series.
func (s Series) Name() string { return s.Experiment + " / " + s.Cell }

// Point is one run's values in a series.
type Point struct {
	RunID, Started, Commit, Branch, Label string
	ServerVersion, ToolVersion            string
	Repeats, Failed                       int
	TPS, TPSLo, TPSHi                     float64
	P99, P99Lo, P99Hi                     float64
	Ratio, RatioLo, RatioHi               float64
	Baseline                              string
	Effective                             map[string]string
	// Variables are the server's globals at the run's start.
	Variables map[string]string
	// Repeats' own figures: tps and p99 per successful repeat, the ratio
	// per round (the cell's tps over its baseline cell's in the same
	// round).
	RepTPS, RepP99, RepRatio []float64
}

// Ref is how a run is named in reports: its commit (short) or label, and
// its id.
func (p Point) Ref() string {
	var parts []string
	if p.Commit != "" {
		c := p.Commit
		if len(c) > 10 {
			c = c[:10]
		}
		parts = append(parts, c)
	}
	if p.Label != "" {
		parts = append(parts, p.Label)
	}
	if len(parts) == 0 {
		return p.RunID
	}
	return strings.Join(parts, " ")
}

// ListSeries lists the series, by experiment and cell; filter keeps those
// whose id, experiment or cell matches (see Match).
func (s *Store) ListSeries(ctx context.Context, filter []string) ([]Series, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT s.id, s.experiment, s.cell, COUNT(c.run_id), MIN(r.started), MAX(r.started),
		MAX(CASE WHEN c.baseline_cell <> '' THEN 1 ELSE 0 END)
		FROM bmh_series s JOIN bmh_cells c ON c.series_id = s.id JOIN bmh_runs r ON r.id = c.run_id
		GROUP BY s.id, s.experiment, s.cell ORDER BY s.experiment, s.cell, MIN(r.started)`)
	if err != nil {
		return nil, s.openErr(err)
	}
	defer rows.Close()
	var out []Series
	for rows.Next() {
		var x Series
		var ratio int
		if err := rows.Scan(&x.ID, &x.Experiment, &x.Cell, &x.Runs, &x.First, &x.Last, &ratio); err != nil {
			return nil, s.openErr(err)
		}
		x.HasRatio = ratio == 1
		if Match(x, filter) {
			out = append(out, x)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.openErr(err)
	}
	if len(filter) > 0 && len(out) == 0 {
		return nil, exitcode.UsageError(fmt.Errorf("--series %s: no series matches (history list shows them)", strings.Join(filter, ",")))
	}
	return out, nil
}

// Match says whether a series is selected by filter: empty selects all;
// otherwise an entry selects a series by its id (or a prefix of 4 or more
// digits), its experiment, its cell, or "experiment/cell".
func Match(x Series, filter []string) bool {
	if len(filter) == 0 {
		return true
	}
	for _, f := range filter {
		switch {
		case f == x.Experiment, f == x.Cell, f == x.Experiment+"/"+x.Cell:
			return true
		case len(f) >= 4 && strings.HasPrefix(x.ID, f):
			return true
		}
	}
	return false
}

// Points are the runs of a series in the order they started, failed cells
// (no successful repeat) left out.
func (s *Store) Points(ctx context.Context, seriesID string) ([]Point, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT r.id, r.started, r.git_commit, r.git_branch, r.label, r.server_version, r.tool_version,
		c.ok_repeats, c.failed_repeats, c.tps, c.tps_lo, c.tps_hi, c.lat_p99, c.p99_lo, c.p99_hi,
		c.ratio, c.ratio_lo, c.ratio_hi, c.baseline_cell, c.effective, r.variables
		FROM bmh_cells c JOIN bmh_runs r ON r.id = c.run_id
		WHERE c.series_id = ? AND c.ok_repeats > 0 ORDER BY r.started, r.id`, seriesID)
	if err != nil {
		return nil, s.openErr(err)
	}
	defer rows.Close()
	var out []Point
	for rows.Next() {
		var p Point
		var eff, vars string
		if err := rows.Scan(&p.RunID, &p.Started, &p.Commit, &p.Branch, &p.Label, &p.ServerVersion, &p.ToolVersion,
			&p.Repeats, &p.Failed, &p.TPS, &p.TPSLo, &p.TPSHi, &p.P99, &p.P99Lo, &p.P99Hi,
			&p.Ratio, &p.RatioLo, &p.RatioHi, &p.Baseline, &eff, &vars); err != nil {
			return nil, s.openErr(err)
		}
		_ = json.Unmarshal([]byte(eff), &p.Effective)
		_ = json.Unmarshal([]byte(vars), &p.Variables)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, s.openErr(err)
	}
	rows.Close()
	return out, s.repeats(ctx, seriesID, out)
}

// repeats fills in the points' per-repeat figures.
func (s *Store) repeats(ctx context.Context, seriesID string, pts []Point) error {
	rows, err := s.db.QueryContext(ctx, `SELECT c.run_id, CASE WHEN x.cell = c.cell THEN 1 ELSE 0 END, x.rep, x.tps, x.lat_p99
		FROM bmh_cells c JOIN bmh_samples x ON x.run_id = c.run_id AND (x.cell = c.cell OR x.cell = c.baseline_cell)
		WHERE c.series_id = ? AND x.status = 'ok' ORDER BY x.rep`, seriesID)
	if err != nil {
		return s.openErr(err)
	}
	defer rows.Close()
	type rep struct{ own, base float64 }
	by := map[string]map[int]*rep{}
	for rows.Next() {
		var run string
		var own, n int
		var tps, p99 float64
		if err := rows.Scan(&run, &own, &n, &tps, &p99); err != nil {
			return s.openErr(err)
		}
		if by[run] == nil {
			by[run] = map[int]*rep{}
		}
		r := by[run][n]
		if r == nil {
			r = &rep{}
			by[run][n] = r
		}
		if own == 1 {
			r.own = tps
		} else {
			r.base = tps
		}
		if own == 1 && tps > 0 {
			for i := range pts {
				if pts[i].RunID == run {
					pts[i].RepTPS = append(pts[i].RepTPS, tps)
					if p99 > 0 {
						pts[i].RepP99 = append(pts[i].RepP99, p99)
					}
				}
			}
		}
	}
	if err := rows.Err(); err != nil {
		return s.openErr(err)
	}
	for i := range pts {
		if pts[i].Baseline == "" {
			continue
		}
		for _, r := range by[pts[i].RunID] {
			if r.own > 0 && r.base > 0 {
				pts[i].RepRatio = append(pts[i].RepRatio, r.own/r.base)
			}
		}
	}
	return nil
}

func (s *Store) wrap(err error) error {
	if err == nil {
		return nil
	}
	return s.openErr(err)
}

// RunInfo is one recorded run, as `history list --runs` shows it.
type RunInfo struct {
	ID, Experiment, Started, Status, Commit, Branch, Label, Source string
	Cells                                                          int
	// FullRun: the history keeps its run.json (recorded from schema 2
	// on, or added again since): it can be a base of compare --history.
	FullRun bool
}

// Runs lists the recorded runs, oldest first.
func (s *Store) Runs(ctx context.Context) ([]RunInfo, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT r.id, r.experiment, r.started, r.status, r.git_commit, r.git_branch, r.label, r.source,
		(SELECT COUNT(*) FROM bmh_cells c WHERE c.run_id = r.id), (SELECT COUNT(*) FROM bmh_run_json j WHERE j.run_id = r.id)
		FROM bmh_runs r ORDER BY r.started, r.id`)
	if err != nil {
		return nil, s.openErr(err)
	}
	defer rows.Close()
	var out []RunInfo
	for rows.Next() {
		var x RunInfo
		var full int
		if err := rows.Scan(&x.ID, &x.Experiment, &x.Started, &x.Status, &x.Commit, &x.Branch, &x.Label, &x.Source, &x.Cells, &full); err != nil {
			return nil, s.openErr(err)
		}
		x.FullRun = full > 0
		out = append(out, x)
	}
	return out, s.wrap(rows.Err())
}

// Remove forgets a run (its id, or a unique prefix of 4 or more digits):
// its cells and samples go with it; a series left without runs goes too.
func (s *Store) Remove(ctx context.Context, id string) (string, error) {
	if len(id) < 4 || strings.ContainsAny(id, "%_") {
		return "", exitcode.UsageError(fmt.Errorf("history rm %q: give a run id (4 or more of its leading digits)", id))
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return "", s.openErr(err)
	}
	defer tx.Rollback() //nolint:errcheck
	rows, err := tx.QueryContext(ctx, "SELECT id FROM bmh_runs WHERE id LIKE ?", id+"%")
	if err != nil {
		return "", s.openErr(err)
	}
	var ids []string
	for rows.Next() {
		var x string
		if err := rows.Scan(&x); err != nil {
			rows.Close()
			return "", s.openErr(err)
		}
		ids = append(ids, x)
	}
	rows.Close()
	switch len(ids) {
	case 0:
		return "", exitcode.UsageError(fmt.Errorf("history rm %s: no such run (history list --runs shows them)", id))
	case 1:
	default:
		return "", exitcode.UsageError(fmt.Errorf("history rm %s: ambiguous, it starts %s", id, strings.Join(ids, ", ")))
	}
	for _, q := range []string{
		"DELETE FROM bmh_run_json WHERE run_id = ?",
		"DELETE FROM bmh_samples WHERE run_id = ?",
		"DELETE FROM bmh_cells WHERE run_id = ?",
		"DELETE FROM bmh_runs WHERE id = ?",
	} {
		if _, err := tx.ExecContext(ctx, q, ids[0]); err != nil {
			return "", s.openErr(err)
		}
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM bmh_series WHERE NOT EXISTS (SELECT 1 FROM bmh_cells c WHERE c.series_id = bmh_series.id)"); err != nil {
		return "", s.openErr(err)
	}
	return ids[0], s.wrap(tx.Commit())
}
