package runner

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"benchmatrix/analysis"
)

// warmup = "auto": the warm-up ends when the cell has reached a steady
// state by the rule that records every cell's time to one
// (analysis.SettleRule): tps and the buffer pool's misses per second have
// both settled, on what the warm-up has seen so far, and held the rule's
// Hold seconds. A pure function of the series.

// SteadyWindow is the least number of one-second warm-up intervals an
// automatic warm-up runs: the rule's window and its hold.
var SteadyWindow = analysis.DefaultSettleRule.Window + analysis.DefaultSettleRule.Hold

// Steady reports whether each of the series (per second; an empty one is
// left out) has settled by rule, on the seconds seen so far.
func Steady(rule analysis.SettleRule, series ...[]float64) bool {
	any := false
	for _, xs := range series {
		if len(xs) == 0 {
			continue
		}
		any = true
		if !rule.Settle(xs).Settled {
			return false
		}
	}
	return any
}

// poolReads samples Innodb_buffer_pool_reads once a second on its own
// connection while an automatic warm-up runs: the misses per second, for
// the warm-up's rule (the engine's interval callback must not wait on a
// query).
type poolReads struct {
	mu    sync.Mutex
	rates []float64
	done  chan struct{}
	stop  context.CancelFunc
}

func startPoolReads(ctx context.Context, db *sql.DB) *poolReads {
	ctx, cancel := context.WithCancel(ctx)
	p := &poolReads{done: make(chan struct{}), stop: cancel}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		last, lastAt := int64(-1), time.Time{}
		for {
			var name string
			var v int64
			qctx, qcancel := context.WithTimeout(ctx, 900*time.Millisecond)
			err := db.QueryRowContext(qctx, "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_reads'").Scan(&name, &v)
			qcancel()
			now := time.Now()
			if err == nil {
				if last >= 0 {
					if dt := now.Sub(lastAt).Seconds(); dt > 0 {
						p.mu.Lock()
						p.rates = append(p.rates, float64(v-last)/dt)
						p.mu.Unlock()
					}
				}
				last, lastAt = v, now
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// series is the misses per second seen so far.
func (p *poolReads) series() []float64 {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]float64(nil), p.rates...)
}

func (p *poolReads) close() {
	if p == nil {
		return
	}
	p.stop()
	<-p.done
}
