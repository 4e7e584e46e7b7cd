package history

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"benchmatrix/analysis"
	"benchmatrix/exitcode"
	"benchmatrix/record"
	"benchmatrix/results"
)

// Meta is what a run does not say about itself: where it came from.
type Meta struct {
	Commit, Branch string // of the repository it ran from
	Label          string // instead of (or beside) a commit: "nightly", "pr-123"
	Source         string // the results directory
}

// Added is what Add did.
type Added struct {
	RunID string
	// Duplicate: the run was recorded already, with the same content;
	// nothing changed.
	Duplicate bool
	Cells     int
	// Notes says what the user should know: a cell that starts a new
	// series (and why), a cell left out.
	Notes []string
}

// RunID is a run's key in the history: 12 hex digits of a hash of what
// identifies a run (experiment, start time, host, shard), stable across
// re-reads of the same run.json.
func RunID(r *record.Run) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s", r.Experiment, r.Started.UTC().Format(time.RFC3339Nano), r.Host.Hostname)
	if r.Shard != nil {
		b, _ := json.Marshal(r.Shard)
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// contentHash covers what the history keeps of a run's results, so that a
// run.json rewritten by `report` (same results) is the same content.
func contentHash(r *record.Run) string {
	type rep struct {
		Cell, Status       string
		Repeat             int
		TPS, QPS, P95, P99 float64
	}
	reps := make([]rep, 0, len(r.Cells))
	for _, c := range r.Cells {
		x := rep{Cell: c.Name, Status: c.Status, Repeat: c.Repeat}
		if c.Result != nil {
			x.TPS, x.QPS, x.P95, x.P99 = finite(c.Result.TPS()), finite(c.Result.QPS()), finite(c.Result.Latency.P95), finite(c.Result.Latency.P99)
		}
		reps = append(reps, x)
	}
	b, _ := json.Marshal(struct {
		Manifest string
		Reps     []rep
	}{r.ManifestHash, reps})
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

func nowText() string             { return timeText(time.Now()) }
func timeText(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
func jsonText(v any) string       { b, _ := json.Marshal(v); return string(b) }
func shortHash(parts ...string) string {
	s := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(s[:])[:12]
}

// workloadDef is what defines a cell's workload: the run's fingerprint
// when it has one, else the cell's engine options as recorded.
func workloadDef(r *record.Run, c record.Cell) (record.WorkloadDef, string) {
	var def record.WorkloadDef
	if r.Fingerprint != nil {
		if d, ok := r.Fingerprint.Workload[c.Name]; ok {
			def = d
		}
	}
	if def.Workload == "" {
		// No fingerprint: the options as run.json holds them.
		def.Workload = c.Workload.Workload()
		var m map[string]any
		b, _ := json.Marshal(c.Workload)
		_ = json.Unmarshal(b, &m)
		def.Options = map[string]string{}
		for k, v := range m {
			def.Options[k] = fmt.Sprint(v)
		}
	}
	b, _ := json.Marshal(def) // map keys sorted: canonical
	s := sha256.Sum256(b)
	return def, hex.EncodeToString(s[:])
}

// Add records the run read from a results directory. Recording the same
// run twice is a no-op; the same run id with other results is refused.
func (s *Store) Add(ctx context.Context, r *record.Run, meta Meta) (*Added, error) {
	out, err := s.add(ctx, r, meta)
	for try := 0; try < 3 && isRetryable(err); try++ {
		// InnoDB chose this transaction as a deadlock victim (two
		// processes adding to one new series), or a lock wait ran out:
		// nothing was written; do it again.
		out, err = s.add(ctx, r, meta)
	}
	if errors.Is(err, errRaced) {
		// Another process recorded it between our look and our insert:
		// look again (now a no-op, or a refusal).
		out, err = s.add(ctx, r, meta)
	}
	if errors.Is(err, errRaced) {
		err = s.openErr(errors.New("the run's rows were written concurrently twice"))
	}
	return out, err
}

var errRaced = errors.New("raced")

func (s *Store) add(ctx context.Context, r *record.Run, meta Meta) (*Added, error) {
	if r.Status == record.StatusRunning || r.Started.IsZero() {
		return nil, exitcode.UsageError(fmt.Errorf("history add %s: the run has not finished (status %q)", meta.Source, r.Status))
	}
	sums := r.Summaries()
	if len(sums) == 0 {
		return nil, exitcode.UsageError(fmt.Errorf("history add %s: the run has no cells", meta.Source))
	}
	out := &Added{RunID: RunID(r)}
	hash := contentHash(r)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, s.openErr(err)
	}
	defer tx.Rollback() //nolint:errcheck
	var have string
	switch err := tx.QueryRowContext(ctx, "SELECT content_hash FROM bmh_runs WHERE id = ?", out.RunID).Scan(&have); {
	case err == nil && have == hash:
		out.Duplicate = true
		// Recorded before the history kept full runs: keep it now.
		var one int
		switch err := tx.QueryRowContext(ctx, "SELECT 1 FROM bmh_run_json WHERE run_id = ?", out.RunID).Scan(&one); {
		case errors.Is(err, sql.ErrNoRows):
			note, err := s.putFullRun(ctx, tx, out.RunID, r)
			if err != nil {
				return nil, err
			}
			if note == "" {
				note = "its full run (run.json) was not kept yet (recorded before history schema " + fmt.Sprint(FullRunSchema) + "): kept now, `compare --history` can use it"
			}
			out.Notes = append(out.Notes, note)
			if err := tx.Commit(); err != nil {
				return nil, s.openErr(err)
			}
		case err != nil:
			return nil, s.openErr(err)
		}
		return out, nil
	case err == nil:
		return nil, exitcode.UsageError(fmt.Errorf("history add %s: run %s is recorded already with other results; `history rm %s` first to replace it", meta.Source, out.RunID, out.RunID))
	case !errors.Is(err, sql.ErrNoRows):
		return nil, s.openErr(err)
	}
	flavor, sversion := r.Server.Flavor, r.Server.Version
	if r.Fingerprint != nil {
		if sversion == "" {
			sversion = r.Fingerprint.ServerVersion
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO bmh_runs (id, content_hash, experiment, started, finished, recorded, status,
		manifest_sha256, tool_version, tool_commit, server_flavor, server_version, host, variables,
		git_commit, git_branch, label, source) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		out.RunID, hash, r.Experiment, timeText(r.Started), timeText(r.Finished), nowText(), r.Status,
		r.ManifestHash, r.Tool.Version, r.Tool.Commit, string(flavor), sversion, jsonText(r.Host), jsonText(r.Variables),
		meta.Commit, meta.Branch, meta.Label, meta.Source)
	if err != nil {
		if isDuplicateKey(err) {
			return nil, errRaced
		}
		return nil, s.openErr(err)
	}
	note, err := s.putFullRun(ctx, tx, out.RunID, r)
	if err != nil {
		return nil, err
	}
	if note != "" {
		out.Notes = append(out.Notes, note)
	}
	ratios := map[string]analysis.PairedRatio{}
	baseOf := map[string]string{}
	if r.Baseline != "" {
		for _, l := range results.Conclude(r).Ratios {
			ratios[l.Cell] = l.Ratio
			baseOf[l.Cell] = l.Baseline
		}
	}
	cellsOf := map[string][]record.Cell{}
	for _, c := range r.Cells {
		cellsOf[c.Name] = append(cellsOf[c.Name], c)
	}
	for _, sum := range sums {
		cells := cellsOf[sum.Name]
		if sum.Runs == 0 {
			out.Notes = append(out.Notes, fmt.Sprintf("cell %s: no successful repeat; recorded as failed, left out of its series' values", sum.Name))
		}
		def, wsha := workloadDef(r, cells[0])
		seriesID := shortHash(r.Experiment, sum.Name, wsha)
		note, err := s.ensureSeries(ctx, tx, seriesID, r.Experiment, sum.Name, wsha, def, out.RunID)
		if err != nil {
			return nil, err
		}
		if note != "" {
			out.Notes = append(out.Notes, note)
		}
		var tps, p99 []float64
		for _, c := range cells {
			if c.Status == record.CellOK && c.Result != nil {
				tps = append(tps, finite(c.Result.TPS()))
				p99 = append(p99, finite(c.Result.Latency.P99))
			}
		}
		tlo, thi := spread(tps)
		plo, phi := spread(p99)
		pr := ratios[sum.Name]
		ratio, rlo, rhi := 0.0, 0.0, 0.0
		if pr.Rounds > 0 && !math.IsNaN(pr.Ratio) {
			ratio = finite(pr.Ratio)
			if pr.CIOK {
				rlo, rhi = finite(pr.Lo), finite(pr.Hi)
			}
		}
		eff := map[string]string{}
		if len(cells[0].Effective) > 0 {
			eff = cells[0].Effective
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO bmh_cells (run_id, cell, series_id, scenario, params, baseline_cell,
			ok_repeats, failed_repeats, tps, tps_lo, tps_hi, qps, lat_avg, lat_p95, lat_p99, p99_lo, p99_hi, errors,
			ratio, ratio_lo, ratio_hi, effective) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			out.RunID, sum.Name, seriesID, sum.Scenario, jsonText(sum.Params), baseOf[sum.Name],
			sum.Runs, sum.Failed, finite(sum.TPS), tlo, thi, finite(sum.QPS), finite(sum.LatAvg), finite(sum.LatP95),
			finite(sum.LatP99), plo, phi, sum.Errors, ratio, rlo, rhi, jsonText(eff))
		if err != nil {
			return nil, s.openErr(err)
		}
		for _, c := range cells {
			var t, q, p95, p99v float64
			if c.Result != nil {
				t, q, p95, p99v = finite(c.Result.TPS()), finite(c.Result.QPS()), finite(c.Result.Latency.P95), finite(c.Result.Latency.P99)
			}
			if _, err := tx.ExecContext(ctx, s.d.insertIgnore+` INTO bmh_samples (run_id, cell, rep, status, tps, qps, lat_p95, lat_p99)
				VALUES (?,?,?,?,?,?,?,?)`, out.RunID, c.Name, c.Repeat, c.Status, t, q, p95, p99v); err != nil {
				return nil, s.openErr(err)
			}
		}
		out.Cells++
	}
	if err := tx.Commit(); err != nil {
		if isDuplicateKey(err) {
			return nil, errRaced
		}
		return nil, s.openErr(err)
	}
	return out, nil
}

// spread is the range of a cell's repeats (0, 0 with fewer than 2).
func spread(xs []float64) (lo, hi float64) {
	if len(xs) < 2 {
		return 0, 0
	}
	return slices.Min(xs), slices.Max(xs)
}

// ensureSeries makes sure the series exists; when it is new and the same
// experiment's cell had another series, the note says what differs.
func (s *Store) ensureSeries(ctx context.Context, tx *sql.Tx, id, experiment, cell, wsha string, def record.WorkloadDef, runID string) (string, error) {
	var one int
	err := tx.QueryRowContext(ctx, "SELECT 1 FROM bmh_series WHERE id = ?", id).Scan(&one)
	if err == nil {
		return "", nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", s.openErr(err)
	}
	// The latest series of this cell, if any: what did it run?
	var prevID, prevDef string
	err = tx.QueryRowContext(ctx, `SELECT s.id, s.workload FROM bmh_series s
		JOIN bmh_cells c ON c.series_id = s.id JOIN bmh_runs r ON r.id = c.run_id
		WHERE s.experiment = ? AND s.cell = ? ORDER BY r.started DESC LIMIT 1`, experiment, cell).Scan(&prevID, &prevDef)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", s.openErr(err)
	}
	if _, err := tx.ExecContext(ctx, s.d.insertIgnore+` INTO bmh_series (id, experiment, cell, workload_sha, workload, first_run)
		VALUES (?,?,?,?,?,?)`, id, experiment, cell, wsha, jsonText(def), runID); err != nil {
		return "", s.openErr(err)
	}
	if prevID == "" {
		return "", nil
	}
	var prev record.WorkloadDef
	_ = json.Unmarshal([]byte(prevDef), &prev)
	return fmt.Sprintf("cell %s: the workload differs from its series %s (%s): a new series %s starts here", cell, prevID, workloadDiff(prev, def), id), nil
}

// workloadDiff names what differs between two workload definitions.
func workloadDiff(a, b record.WorkloadDef) string {
	var d []string
	if a.Workload != b.Workload {
		d = append(d, fmt.Sprintf("workload %s -> %s", a.Workload, b.Workload))
	}
	if a.EngineVersion != b.EngineVersion {
		d = append(d, fmt.Sprintf("engine_version %s -> %s", a.EngineVersion, b.EngineVersion))
	}
	for _, k := range record.UnionKeys(a.Options, b.Options) {
		if x, y := record.ValueOr(a.Options, k), record.ValueOr(b.Options, k); x != y {
			d = append(d, fmt.Sprintf("%s %s -> %s", k, x, y))
		}
	}
	if len(d) == 0 {
		return "its definition changed"
	}
	return strings.Join(d, ", ")
}

func isRetryable(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	return strings.Contains(s, "Error 1213") || strings.Contains(s, "Error 1205")
}

func isDuplicateKey(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Error 1062") || strings.Contains(s, "UNIQUE constraint failed")
}
