package observe

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Injector makes known stalls, to test that they are seen: every Every it
// takes a global lock on its own connection and holds it for Hold.
type Injector struct {
	Every, Hold time.Duration
	// SQL takes the lock; default "FLUSH TABLES WITH READ LOCK" (blocks
	// every write until released).
	SQL string
	// Release ends it; default "UNLOCK TABLES".
	Release string

	mu     sync.Mutex
	onsets []time.Duration
}

// Run holds the lock at Every, 2×Every, ... from its start until ctx ends,
// recording when each hold began. It releases the lock before returning,
// and returns nil when ctx ends, or the first SQL error.
func (in *Injector) Run(ctx context.Context, db *sql.DB) (err error) {
	if in.Every <= 0 || in.Hold <= 0 || in.Hold >= in.Every {
		return fmt.Errorf("injector: need 0 < Hold (%s) < Every (%s)", in.Hold, in.Every)
	}
	lock, release := in.SQL, in.Release
	if lock == "" {
		lock = "FLUSH TABLES WITH READ LOCK"
	}
	if release == "" {
		release = "UNLOCK TABLES"
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return ignoreEnd(ctx, fmt.Errorf("injector: %w", err))
	}
	held := false
	defer func() {
		if held {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			if _, rerr := conn.ExecContext(rctx, release); rerr != nil {
				// The server drops the lock with the session: discard it.
				_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			}
			cancel()
		}
		conn.Close()
	}()
	start := time.Now()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for k := time.Duration(1); ; k++ {
		timer.Reset(time.Until(start.Add(k * in.Every)))
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		// The stall begins when the lock is asked for, not when it is
		// granted: FLUSH TABLES WITH READ LOCK blocks new writes while it
		// waits for the running ones (on a Galera node also while the node
		// desyncs), which under load takes a second or more.
		issued := time.Since(start)
		if _, err := conn.ExecContext(ctx, lock); err != nil {
			return ignoreEnd(ctx, fmt.Errorf("injector: %s: %w", lock, err))
		}
		held = true
		in.mu.Lock()
		in.onsets = append(in.onsets, issued)
		in.mu.Unlock()
		timer.Reset(in.Hold)
		select {
		case <-ctx.Done():
			return nil // the deferred release runs
		case <-timer.C:
		}
		if _, err := conn.ExecContext(ctx, release); err != nil {
			return ignoreEnd(ctx, fmt.Errorf("injector: %s: %w", release, err))
		}
		held = false
		// Skip holds that are already late rather than firing them back to back.
		for start.Add((k + 1) * in.Every).Before(time.Now()) {
			k++
		}
	}
}

// Check runs the lock and its release once, on one connection, so that a
// statement the server refuses is found before the first cell rather than
// silently in every one.
func (in *Injector) Check(ctx context.Context, db *sql.DB) error {
	lock, release := in.SQL, in.Release
	if lock == "" {
		lock, release = "FLUSH TABLES WITH READ LOCK", "UNLOCK TABLES"
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, lock); err != nil {
		return fmt.Errorf("sql %q: %w", lock, err)
	}
	if _, err := conn.ExecContext(ctx, release); err != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // the session drops the lock
		return fmt.Errorf("release %q: %w", release, err)
	}
	return nil
}

// Onsets returns when each hold began, measured from Run's start.
func (in *Injector) Onsets() []time.Duration {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]time.Duration(nil), in.onsets...)
}

func ignoreEnd(ctx context.Context, err error) error {
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, driver.ErrBadConn)) {
		return nil
	}
	return err
}
