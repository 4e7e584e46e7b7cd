// Package results is the result model of a matrix run and everything that
// writes or reads it: run.json, cells.csv, intervals.csv, summary.md and
// the comparison tables. The record itself (run.json's schema) is package
// record; the names here are aliases of its types.
package results

import "benchmatrix/record"

// Run statuses.
const (
	StatusRunning     = record.StatusRunning
	StatusFinished    = record.StatusFinished
	StatusInterrupted = record.StatusInterrupted
	StatusFailed      = record.StatusFailed
)

// Cell statuses.
const (
	CellOK     = record.CellOK
	CellFailed = record.CellFailed
)

// Tool identifies the benchmatrix build that produced a run (record.Tool).
type Tool = record.Tool

// Host describes the machine the run was made on (record.Host).
type Host = record.Host

// Run is a whole matrix run: what was asked, where it ran, and every cell
// (record.Run).
type Run = record.Run

// Cell is the outcome of one cell run (record.Cell).
type Cell = record.Cell

// PlanCell is a planned cell as run.json stores it.
type PlanCell = record.PlanCell

// Growth is how the workload's tables changed over a cell (record.Growth).
type Growth = record.Growth

// Summary is one cell's figures over its repeats (record.Summary).
type Summary = record.Summary

// Median returns the median of xs, or 0 for none.
func Median(xs []float64) float64 { return record.Median(xs) }
