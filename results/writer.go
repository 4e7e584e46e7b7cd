package results

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"benchmatrix/experiment"
	"benchmatrix/record"
	"benchmatrix/section"
)

// File names inside a results directory (docs/design.md's contract).
const (
	RunFile       = "run.json"
	CellsFile     = "cells.csv"
	IntervalsFile = "intervals.csv"
	SummaryFile   = "summary.md"
	// BenchFile holds the results in the Go benchmark format, for benchstat.
	BenchFile = "results.txt"
)

// Writer writes a run's results directory. Each finished cell is appended
// to the CSV files in one write and synced before the next cell starts, and
// run.json is replaced atomically, so an interrupted run keeps every cell
// it finished.
type Writer struct {
	Dir     string
	columns []string
	metrics []string
	lock    *os.File // LockFile, held until Close
}

// CellColumns returns the header of cells.csv for the given varying
// parameters: cell, scenario, the parameters, repeat, status, then
// record.Columns.
func CellColumns(params []string) []string {
	h := []string{"cell", "scenario"}
	h = append(h, params...)
	h = append(h, "repeat", "status")
	return append(h, record.ColumnNames(nil)...)
}

// IntervalColumns is the header of intervals.csv before the sampled
// metrics: the columns every engine has, then each engine's own
// (engineIntervalColumns).
var IntervalColumns = append(append([]string(nil), baseIntervalColumns...), engineIntervalColumns()...)

// baseIntervalColumns are intervals.csv's columns every engine fills.
var baseIntervalColumns = []string{"cell", "repeat", "t", "phase", "tps", "qps", "lat_p95_ms", "errors",
	"reads_s", "writes_s", "others_s", "lat_p50_ms", "lat_p99_ms", "lat_max_ms", "reconnects_s"}

// engineIntervalColumns are the engines' per-interval figures
// (engine.Descriptor.IntervalColumns: TPC-C's nopm, tpm, each type's rate
// and p95), in the registry's order, each once. A cell's row fills its
// engine's from Interval.Metrics and leaves the others empty.
func engineIntervalColumns() []string {
	var out []string
	for _, d := range experiment.Engines {
		for _, c := range d.IntervalColumns {
			if !slices.Contains(out, c) && !slices.Contains(baseIntervalColumns, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// IntervalHeader is intervals.csv's header with the sampled metrics.
func IntervalHeader(metrics []string) []string {
	return append(append([]string(nil), IntervalColumns...), metrics...)
}

// Create makes the directory and writes the CSV headers; metrics are the
// sampled metric columns of intervals.csv.
func Create(dir string, params, metrics []string) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("results directory: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, RunFile)); err == nil {
		// Another run got here first, between the caller's check and now.
		lock.Close()
		return nil, &BusyError{Dir: dir}
	}
	w := &Writer{Dir: dir, columns: params, metrics: metrics, lock: lock}
	if err := section.WriteFileAtomic(filepath.Join(dir, CellsFile), csvBytes([][]string{CellColumns(params)})); err != nil {
		return nil, err
	}
	if err := section.WriteFileAtomic(filepath.Join(dir, IntervalsFile), csvBytes([][]string{IntervalHeader(metrics)})); err != nil {
		return nil, err
	}
	return w, nil
}

// AppendCell appends a finished cell run to cells.csv and its intervals to
// intervals.csv.
func (w *Writer) AppendCell(c *record.Cell) error {
	if err := appendSync(filepath.Join(w.Dir, IntervalsFile), csvBytes(IntervalRows(c, len(w.metrics)))); err != nil {
		return err
	}
	return appendSync(filepath.Join(w.Dir, CellsFile), csvBytes([][]string{CellRow(c, w.columns)}))
}

// CellRow renders a cell as a cells.csv row.
func CellRow(c *record.Cell, params []string) []string {
	row := []string{c.Name, c.Scenario}
	for _, p := range params {
		row = append(row, c.Param(p))
	}
	row = append(row, strconv.Itoa(c.Repeat), c.Status)
	for _, col := range record.Columns {
		row = append(row, col.Field(c))
	}
	return row
}

// IntervalRows renders a cell's intervals as intervals.csv rows, with
// nmetrics sampled metric columns (empty where nothing was sampled).
func IntervalRows(c *record.Cell, nmetrics int) [][]string {
	rows := make([][]string, 0, len(c.Intervals))
	for i, iv := range c.Intervals {
		s := iv.Seconds()
		rate := func(n int64) string {
			if s <= 0 {
				return "0"
			}
			return f2(float64(n) / s)
		}
		row := []string{c.Name, strconv.Itoa(c.Repeat), f3(iv.End.Seconds()), string(iv.Phase),
			rate(iv.Events), rate(iv.Reads + iv.Writes + iv.Others), f3(iv.LatP95), strconv.FormatInt(iv.Errors, 10),
			rate(iv.Reads), rate(iv.Writes), rate(iv.Others), f3(iv.LatP50), f3(iv.LatP99), f3(iv.LatMax), rate(iv.Reconnects)}
		for _, name := range IntervalColumns[len(baseIntervalColumns):] {
			v, ok := iv.Metrics[name]
			if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
				row = append(row, "")
				continue
			}
			row = append(row, strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64))
		}
		for j := 0; j < nmetrics; j++ {
			v := math.NaN()
			if i < len(c.Metrics) && j < len(c.Metrics[i]) {
				v = c.Metrics[i][j]
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				row = append(row, "")
			} else {
				row = append(row, strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64))
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// WriteRun replaces run.json atomically. A value JSON cannot carry (NaN,
// ±Inf: a frozen server's figures) is written as 0, or left out of a map,
// and the run's notes say which (record.Finite): never a failed write.
func (w *Writer) WriteRun(r *record.Run) error {
	for _, n := range record.Finite(r) {
		r.Notes = append(r.Notes, "run.json: "+n)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return section.WriteFileAtomic(filepath.Join(w.Dir, RunFile), append(b, '\n'))
}

// WriteSummary replaces summary.md and results.txt atomically, after
// drawing the plots that summary.md links (see writeReports).
func (w *Writer) WriteSummary(r *record.Run) error {
	return writeReports(w.Dir, r)
}

// ReadRun loads run.json from a results directory.
func ReadRun(dir string) (*record.Run, error) {
	b, err := os.ReadFile(filepath.Join(dir, RunFile))
	if err != nil {
		return nil, err
	}
	var r record.Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, RunFile), err)
	}
	if err := BindWorkloads(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, RunFile), err)
	}
	return &r, nil
}

// BindWorkloads makes the workloads of the cells and the plan, as decoded
// from run.json, their engines' options again.
func BindWorkloads(r *record.Run) error {
	for i := range r.Plan {
		if err := experiment.Engines.Bind(&r.Plan[i].Workload); err != nil {
			return fmt.Errorf("plan cell %s: %w", r.Plan[i].Name, err)
		}
	}
	for i := range r.Cells {
		if err := experiment.Engines.Bind(&r.Cells[i].Workload); err != nil {
			return fmt.Errorf("cell %s: %w", r.Cells[i].Name, err)
		}
	}
	return nil
}

func csvBytes(rows [][]string) []byte {
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	_ = cw.WriteAll(rows)
	return b.Bytes()
}

func appendSync(path string, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("append %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// f2 and f3 print a figure with 2 or 3 decimals; a value that is not a
// number (NaN, ±Inf) is an empty field.
func f2(v float64) string { return fixed(v, 2) }
func f3(v float64) string { return fixed(v, 3) }

func fixed(v float64, digits int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', digits, 64)
}
