package oltp

import (
	"math"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
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

// The pacer's sleeps. A Go timer wakes a sub-millisecond sleep about 1 ms
// late on Linux (the runtime's poller waits in whole milliseconds; here,
// 2026-12-04, a 100 µs sleep woke 0.98 ms late at the median), and that
// lateness lands in every arrival a waiting worker takes: the client's
// delay, inside the latency from the intended start. So the pacer sleeps
// on a thread of its own in nanosleep(2), with that thread's timer slack
// at 1 ns (the same sleep woke 18 µs late at the median).
const (
	// pacerMinSleep: arrivals closer together than this are offered in
	// one wake-up (at 50,000/s the pacer wakes at most every 50 µs, not
	// for every arrival).
	pacerMinSleep = 50 * time.Microsecond
	// pacerMaxSleep: the pacer looks at the stop flag at least this often.
	pacerMaxSleep = 5 * time.Millisecond
)

// sleeper is how the pacer waits: preciseSleep, or timerSleep in the test
// that measures one against the other.
type sleeper func(time.Duration)

// preciseSleep sleeps d in nanosleep(2). Its caller is locked to its thread
// (lockPacerThread).
func preciseSleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

// timerSleep sleeps d on the Go runtime's timers.
func timerSleep(d time.Duration) { time.Sleep(d) }

// lockPacerThread gives the calling goroutine a thread of its own with a
// timer slack of 1 ns. It is never unlocked: the thread ends with the
// goroutine, and its slack with it. Without the slack (a kernel that
// refuses it) the sleeps keep the default 50 µs slack.
func lockPacerThread() {
	runtime.LockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
}

// feed runs the pacer until stop, offering each due arrival to the
// backlog; when the backlog is full the arrival is dropped and counted.
// It takes a thread of its own (lockPacerThread) and sleeps with sleep.
func feed(sh *shared, p *pacer, start time.Time, out chan<- arrival, sleep sleeper) {
	lockPacerThread()
	var buf []time.Duration
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
		wait := time.Until(start.Add(p.peek()))
		sleep(min(max(wait, pacerMinSleep), pacerMaxSleep))
	}
}
