// Package results is the result model of a matrix run and everything that
// writes or reads it: run.json, cells.csv, intervals.csv, summary.md and
// the comparison tables. The record itself (run.json's schema) is package
// record, whose names are used as they are.
package results
