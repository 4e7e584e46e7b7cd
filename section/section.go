// Package section is how a feature adds to a run's reports without the
// report code knowing it by name. A feature describes what it adds (its
// rows of summary.md's Environment table, its own sections, its lines in
// the Conclusion, its note on each cell) as a Feature in its own package,
// beside its part of the record; package features lists them, and results
// calls each hook in its place. section imports the record and the table
// writer, not results, so that a feature's package can use it.
package section

import (
	"io"

	"benchmatrix/record"
)

// A Section is one part of summary.md.
type Section struct {
	Title string // what it holds, for tests and docs (the heading is Write's)
	// After is the Title of the section a feature's section follows
	// (results' own sections are listed in order).
	After string
	// Applies says whether the run has anything for the section; nil:
	// always written (Write may still write nothing).
	Applies func(r *record.Run) bool
	Write   func(w io.Writer, r *record.Run) error
}

// Pair is one of the Conclusion's ratios: a cell against its baseline.
type Pair struct{ Cell, Baseline string }

// Conclusion is what a feature's Conclusion hooks read: the run, the
// pairs of its ratios, and its successful cell runs by name and repeat.
type Conclusion struct {
	Run      *record.Run
	Pairs    []Pair
	ByRepeat map[string]map[int]*record.Cell
}

// Warnings are a feature's lines under the Conclusion's "What undermines
// it", after the group of results' own lines named After.
type Warnings struct {
	After string
	Lines func(in Conclusion) []string
}

// Note is a feature's lines on a cell run in summary.md's "What happened
// in each cell", after results' note named After.
type Note struct {
	After string
	// Shows: the feature has something to say of the cell, which puts the
	// cell (and the section) in summary.md. nil: its lines join a cell
	// that others show, never put one there.
	Shows func(c record.Cell) bool
	Write func(w io.Writer, c record.Cell)
}

// Figure is one of a feature's figures: its title, its file name in the
// plots directory, and how to draw it (a PNG).
type Figure struct {
	Title, Name string
	Draw        func() ([]byte, error)
}

// Mark is an instant of a cell run drawn on its time figures and charts
// (a node event): when, since the cell's clocks started, what, and whether
// it failed.
type Mark struct {
	At     float64
	Label  string
	Failed bool
}

// A Feature is what one feature adds to a run's reports. Every hook is
// optional.
type Feature struct {
	Name string
	// Env writes the feature's rows of summary.md's Environment table,
	// after the server's.
	Env func(w io.Writer, r *record.Run)
	// Sections are its sections of summary.md.
	Sections []Section
	// Derive computes, before the reports are written, what the feature's
	// hooks read from the files under the results directory dir (the
	// profiles' predictions); it returns r itself when it has nothing.
	Derive func(dir string, r *record.Run) *record.Run
	// Paragraph writes its paragraph of the Conclusion, after the ratios.
	Paragraph func(w io.Writer, r *record.Run)
	// Linked are its lines under the Conclusion's "Mechanism and outcome",
	// after the mechanism's.
	Linked   func(r *record.Run) []string
	Warnings []Warnings
	Notes    []Note
	// Figures are its figures, after results' own.
	Figures func(r *record.Run) []Figure
	// Marks are its marks of a cell run.
	Marks func(c record.Cell) []Mark
	// CompareWarnings are what it undermines in comparing two runs.
	CompareWarnings func(base, new *record.Run) []string
}
