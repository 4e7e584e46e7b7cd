package exitcode

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

type typed struct{}

func (typed) Error() string { return "typed" }
func (typed) ExitCode() int { return Usage }

func TestOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, OK},
		{errors.New("x"), Failure},
		{UsageError(errors.New("x")), Usage},
		{fmt.Errorf("cell a: %w", UsageError(errors.New("x"))), Usage},
		{fmt.Errorf("wrapped: %w", typed{}), Usage},
		{fmt.Errorf("stop: %w", context.Canceled), Interrupted},
		{WithCode(errors.New("worse"), Regression), Regression},
	} {
		if got := Of(c.err); got != c.want {
			t.Errorf("Of(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	if UsageError(nil) != nil {
		t.Error("UsageError(nil) is not nil")
	}
}
