package topology

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The data check reads again while a node says it is still catching up
// (TestGaleraFlowControlWhileNodePaused failed once on a loaded machine
// with "count t: Error 1205 (HY000): Lock wait timeout exceeded" from the
// node that had been paused), and gives up on any other error at once.
func TestUntilSettled(t *testing.T) {
	t.Parallel()
	calls := 0
	err := untilSettled(context.Background(), time.Now().Add(time.Minute), func() error {
		calls++
		if calls < 3 {
			return &mysql.MySQLError{Number: 1205, Message: "Lock wait timeout exceeded; try restarting transaction"}
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("after two 1205s: %v, %d calls; want success on the third", err, calls)
	}
	calls = 0
	other := &mysql.MySQLError{Number: 1146, Message: "Table 'sbtest.t' doesn't exist"}
	err = untilSettled(context.Background(), time.Now().Add(time.Minute), func() error { calls++; return other })
	if !errors.Is(err, other) || calls != 1 {
		t.Fatalf("another error: %v after %d calls; want it at once", err, calls)
	}
	calls = 0
	err = untilSettled(context.Background(), time.Now().Add(-time.Second), func() error {
		calls++
		return &mysql.MySQLError{Number: 1047, Message: "WSREP has not yet prepared node for application use"}
	})
	if err == nil || calls != 1 {
		t.Fatalf("past the deadline: %v after %d calls; want the error at once", err, calls)
	}
}
