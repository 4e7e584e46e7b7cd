package oltp

import (
	"math"
	"time"
)

// pacer schedules open-loop (--rate) arrivals: a Poisson process, i.e.
// exponentially distributed gaps of mean 1/rate, as offsets from the start
// of the run. It is a pure function of its rate and random stream.
type pacer struct {
	rate float64 // events per second
	r    *Rand
	next time.Duration
}

func newPacer(rate float64, r *Rand) *pacer {
	p := &pacer{rate: rate, r: r}
	p.next = p.gap()
	return p
}

// gap draws one exponential inter-arrival time.
func (p *pacer) gap() time.Duration {
	u := p.r.Float64() // [0, 1): 1−u is in (0, 1], so the log is finite
	return time.Duration(-math.Log(1-u) / p.rate * float64(time.Second))
}

// peek is the offset of the next arrival.
func (p *pacer) peek() time.Duration { return p.next }

// due pops every arrival at or before now, appending their offsets to dst.
func (p *pacer) due(now time.Duration, dst []time.Duration) []time.Duration {
	for p.next <= now {
		dst = append(dst, p.next)
		p.next += p.gap()
	}
	return dst
}

// arrival is one scheduled event: when it was meant to start and the phase
// it belongs to.
type arrival struct {
	at    time.Time
	phase int
}

// backlogSize bounds the open-loop queue (sysbench's is 131072 slots and
// aborts when full; the engine drops and counts instead).
const backlogSize = 1 << 17

// feed runs the pacer until stop, offering each due arrival to the
// backlog; when the backlog is full the arrival is dropped and counted.
func feed(sh *shared, p *pacer, start time.Time, out chan<- arrival) {
	var buf []time.Duration
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for !sh.stop.Load() {
		buf = p.due(time.Since(start), buf[:0])
		ph := int(sh.phase.Load())
		for _, off := range buf {
			select {
			case out <- arrival{at: start.Add(off), phase: ph}:
			default:
				sh.dropped.Add(1)
			}
		}
		t.Reset(time.Until(start.Add(p.peek())))
		select {
		case <-t.C:
		case <-sh.stopCh:
			return
		}
	}
}
