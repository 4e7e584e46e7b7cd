// Package exitcode is benchmatrix's exit codes (docs/design.md, "Fixed
// contracts") and the one rule that maps an error to its code. An error
// carries its code from where it starts: a type with an ExitCode method, or
// an error wrapped with Usage.
package exitcode

import (
	"context"
	"errors"
)

// The exit codes.
const (
	OK          = 0
	Failure     = 1 // a run-time failure (some cell failed; the others are kept)
	Usage       = 2 // invalid usage, manifest or environment
	Regression  = 3 // compare (or run --check) found a regression
	Interrupted = 130
)

// Coder is an error that knows its exit code.
type Coder interface {
	error
	ExitCode() int
}

type coded struct {
	err  error
	code int
}

func (e *coded) Error() string { return e.err.Error() }
func (e *coded) Unwrap() error { return e.err }
func (e *coded) ExitCode() int { return e.code }

// WithCode attaches an exit code to err (nil stays nil).
func WithCode(err error, code int) error {
	if err == nil {
		return nil
	}
	return &coded{err: err, code: code}
}

// UsageError is err with exit code 2: a problem with what the user asked
// for, found before or instead of running it.
func UsageError(err error) error { return WithCode(err, Usage) }

// Of is the exit code for err: 0 for nil, 130 for an interrupt, the code
// the error carries, else 1.
func Of(err error) int {
	if err == nil {
		return OK
	}
	if errors.Is(err, context.Canceled) {
		return Interrupted
	}
	var c Coder
	if errors.As(err, &c) {
		return c.ExitCode()
	}
	return Failure
}
