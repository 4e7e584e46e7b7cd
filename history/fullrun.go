package history

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"benchmatrix/exitcode"
	"benchmatrix/record"
	"benchmatrix/results"
)

// The full run: a history keeps each run's run.json (gzip) beside the
// per-cell figures, so that `compare --history` compares against a
// recorded run exactly as `compare BASE NEW` does against its directory,
// and `history export` writes it back out as a results directory.

const encodingGzipJSON = "gzip+json"

// putFullRun stores r's run.json in the transaction. A run that JSON
// cannot carry (a NaN: run.json on disk never holds one, it was written
// through record.Finite) is kept without it, and says so.
func (s *Store) putFullRun(ctx context.Context, tx *sql.Tx, id string, r *record.Run) (string, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return fmt.Sprintf("the full run is not kept (%v): `compare --history` cannot use this run as a base", err), nil
	}
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write(raw) //nolint:errcheck // a bytes.Buffer does not fail
	zw.Close()    //nolint:errcheck
	if _, err := tx.ExecContext(ctx, `INSERT INTO bmh_run_json (run_id, encoding, json_bytes, body) VALUES (?,?,?,?)`,
		id, encodingGzipJSON, len(raw), b.Bytes()); err != nil {
		if isDuplicateKey(err) {
			return "", errRaced
		}
		return "", s.openErr(err)
	}
	return "", nil
}

// NotKeptError is a run recorded before the history kept full runs (its
// schema was older than FullRunSchema when it was added).
type NotKeptError struct {
	Where, RunID string
	// Since is when this history was migrated to FullRunSchema ("" when
	// unknown).
	Since string
}

func (e *NotKeptError) Error() string {
	since := ""
	if e.Since != "" {
		since = ", which this history got on " + shortStarted(e.Since)
	}
	return fmt.Sprintf("history %s: run %s was recorded before the history kept full runs (history schema %d%s): it can be listed and checked, not compared against; `history add DIR` with its results directory keeps it now, or choose another base",
		e.Where, e.RunID, FullRunSchema, since)
}

// ExitCode: comparing against such a run is a usage error.
func (e *NotKeptError) ExitCode() int { return exitcode.Usage }

// FullRun reads a recorded run back (the run id, whole), as ReadRun reads
// a results directory.
func (s *Store) FullRun(ctx context.Context, id string) (*record.Run, error) {
	var enc string
	var body []byte
	err := s.db.QueryRowContext(ctx, "SELECT encoding, body FROM bmh_run_json WHERE run_id = ?", id).Scan(&enc, &body)
	if errors.Is(err, sql.ErrNoRows) {
		var one int
		if err := s.db.QueryRowContext(ctx, "SELECT 1 FROM bmh_runs WHERE id = ?", id).Scan(&one); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return nil, exitcode.UsageError(fmt.Errorf("history %s: no run %s (history list --runs shows them)", s.Where, id))
			}
			return nil, s.openErr(err)
		}
		e := &NotKeptError{Where: s.Where, RunID: id}
		_ = s.db.QueryRowContext(ctx, "SELECT applied FROM bmh_schema WHERE version = ?", FullRunSchema).Scan(&e.Since)
		return nil, e
	}
	if err != nil {
		return nil, s.openErr(err)
	}
	if enc != encodingGzipJSON {
		return nil, exitcode.UsageError(fmt.Errorf("history %s: run %s: its full run is kept as %q, which this benchmatrix does not read", s.Where, id, enc))
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("history %s: run %s: its full run is damaged: %w", s.Where, id, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("history %s: run %s: its full run is damaged: %w", s.Where, id, err)
	}
	var r record.Run
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("history %s: run %s: its full run is damaged: %w", s.Where, id, err)
	}
	if err := results.BindWorkloads(&r); err != nil {
		return nil, fmt.Errorf("history %s: run %s: %w", s.Where, id, err)
	}
	return &r, nil
}

// FullRunBytes is the size of the kept full runs: their JSON and what the
// history stores (gzip), summed over the runs given (all when ids is
// empty).
func (s *Store) FullRunBytes(ctx context.Context, ids ...string) (jsonBytes, stored int64, err error) {
	rows, err := s.db.QueryContext(ctx, "SELECT run_id, json_bytes, LENGTH(body) FROM bmh_run_json")
	if err != nil {
		return 0, 0, s.openErr(err)
	}
	defer rows.Close()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for rows.Next() {
		var id string
		var j, b int64
		if err := rows.Scan(&id, &j, &b); err != nil {
			return 0, 0, s.openErr(err)
		}
		if len(ids) == 0 || want[id] {
			jsonBytes += j
			stored += b
		}
	}
	return jsonBytes, stored, s.wrap(rows.Err())
}

// BaseQuery says which recorded run a new run is compared against: the
// newest run of the same experiment on Branch (or with Label), started
// before the new run and not the new run itself; or the run RunID.
type BaseQuery struct {
	Experiment    string
	Branch, Label string
	RunID         string // an id or 4+ leading digits; wins over Branch and Label
	// New is the new run: its id (recorded or not) is never its own base,
	// and the base started before it.
	NewID      string
	NewStarted time.Time
}

// Sought says what the query looks for, for messages.
func (q BaseQuery) Sought() string {
	switch {
	case q.RunID != "":
		return "run " + q.RunID
	case q.Label != "":
		return fmt.Sprintf("the newest run of experiment %q labelled %q", q.Experiment, q.Label)
	default:
		return fmt.Sprintf("the newest run of experiment %q on branch %s", q.Experiment, q.Branch)
	}
}

// FindBase picks the base run (see BaseQuery). None: a usage error saying
// what was sought and what the history holds.
func (s *Store) FindBase(ctx context.Context, q BaseQuery) (RunInfo, error) {
	runs, err := s.Runs(ctx)
	if err != nil {
		return RunInfo{}, err
	}
	if q.RunID != "" {
		if len(q.RunID) < 4 {
			return RunInfo{}, exitcode.UsageError(fmt.Errorf("--base-run %q: give a run id (4 or more of its leading digits)", q.RunID))
		}
		var hits []RunInfo
		for _, r := range runs {
			if strings.HasPrefix(r.ID, q.RunID) {
				hits = append(hits, r)
			}
		}
		switch len(hits) {
		case 1:
			return hits[0], nil
		case 0:
			return RunInfo{}, exitcode.UsageError(fmt.Errorf("--base-run %s: history %s holds no such run (history list --runs shows them)", q.RunID, s.Where))
		default:
			ids := make([]string, len(hits))
			for i, h := range hits {
				ids[i] = h.ID
			}
			return RunInfo{}, exitcode.UsageError(fmt.Errorf("--base-run %s: ambiguous, it starts %s", q.RunID, strings.Join(ids, ", ")))
		}
	}
	var best RunInfo
	var bestT time.Time
	for _, r := range runs {
		if r.Experiment != q.Experiment || r.ID == q.NewID {
			continue
		}
		if (q.Label != "" && r.Label != q.Label) || (q.Label == "" && r.Branch != q.Branch) {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, r.Started)
		if err != nil || (!q.NewStarted.IsZero() && !t.Before(q.NewStarted)) {
			continue
		}
		if best.ID == "" || t.After(bestT) || (t.Equal(bestT) && r.ID > best.ID) {
			best, bestT = r, t
		}
	}
	if best.ID != "" {
		return best, nil
	}
	return RunInfo{}, exitcode.UsageError(fmt.Errorf("history %s: no base: %s, started before the new run (%s), is not recorded; %s",
		s.Where, q.Sought(), q.NewStarted.UTC().Format("2006-01-02 15:04:05 UTC"), holds(runs, q)))
}

// holds says what a history holds of an experiment, for the message of a
// base not found.
func holds(runs []RunInfo, q BaseQuery) string {
	if len(runs) == 0 {
		return "the history holds no runs"
	}
	var n int
	branches, labels, others := map[string]int{}, map[string]int{}, map[string]bool{}
	for _, r := range runs {
		if r.Experiment != q.Experiment {
			others[r.Experiment] = true
			continue
		}
		if r.ID == q.NewID {
			continue
		}
		n++
		branches[or(r.Branch, "(none)")]++
		if r.Label != "" {
			labels[r.Label]++
		}
	}
	if n == 0 {
		return fmt.Sprintf("it holds no other run of experiment %q (its experiments: %s)", q.Experiment, strings.Join(slices.Sorted(maps.Keys(others)), ", "))
	}
	out := fmt.Sprintf("it holds %d other run(s) of experiment %q, on branches %s", n, q.Experiment, counted(branches))
	if len(labels) > 0 {
		out += ", labelled " + counted(labels)
	}
	return out + " (--base BRANCH, --base-label L or --base-run ID choose another)"
}

func counted(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s (%d)", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func shortStarted(s string) string {
	if len(s) >= 16 {
		return strings.Replace(s[:16], "T", " ", 1) + " UTC"
	}
	return s
}
