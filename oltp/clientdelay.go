package oltp

import (
	"math"
	"time"
)

// Open loop: what the client alone does to an event's latency. When a
// worker is idle, waiting for the next arrival, the time from that
// arrival's intended start to the worker taking it is the pacer's and the
// scheduler's delay, with no server in it: a client that cannot keep up
// shows there, and is reported instead of being blamed on the server.

// DelayHist counts delays in buckets of a factor √2: bucket i holds
// [2^(i/2), 2^((i+1)/2)) µs (bucket 0 also everything below 1 µs).
type DelayHist [64]int64

func delayBucket(ns int64) int {
	us := float64(ns) / 1000
	if us < 1 {
		return 0
	}
	return min(int(2*math.Log2(us)), len(DelayHist{})-1)
}

// bucketLow is bucket i's lower bound.
func bucketLow(i int) time.Duration {
	if i == 0 {
		return 0
	}
	return time.Duration(math.Pow(2, float64(i)/2) * float64(time.Microsecond))
}

func (h *DelayHist) record(ns int64) { h[delayBucket(ns)]++ }

func (h *DelayHist) merge(o *DelayHist) {
	for i, n := range o {
		h[i] += n
	}
}

// Total is the number of delays recorded.
func (h *DelayHist) Total() int64 {
	var n int64
	for _, c := range h {
		n += c
	}
	return n
}

// AtLeast is the number of delays known to be at least d: those in
// buckets whose lower bound is at least d (the bucket d falls in is left
// out, so the count never blames the client for more than it did).
func (h *DelayHist) AtLeast(d time.Duration) int64 {
	var n int64
	for i, c := range h {
		if bucketLow(i) >= d {
			n += c
		}
	}
	return n
}

// Quantile is the upper bound of the bucket holding quantile q (0..1) of
// the delays, 0 when none were recorded.
func (h *DelayHist) Quantile(q float64) time.Duration {
	total := h.Total()
	if total == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(total)))
	var seen int64
	for i, c := range h {
		seen += c
		if seen >= rank && c > 0 {
			return bucketLow(i + 1)
		}
	}
	return bucketLow(len(h))
}
