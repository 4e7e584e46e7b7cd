package oltp

import (
	"math"
	"sync"
	"testing"
	"time"

	"benchmatrix/engine"
)

func TestCollectorMergesWorkers(t *testing.T) {
	ws := []*workerStats{newWorkerStats(true), newWorkerStats(true)}
	col := newCollector(ws)
	iv := newTally()
	rec := func(w, phase int, ms float64, q counts) {
		ws[w].record(&eventRecord{phase: phase, done: true, ns: int64(ms * 1e6), q: q})
	}
	// Interval 1: warm-up events.
	rec(0, phWarmup, 50, counts{Reads: 1})
	col.collect(&iv)
	if iv.Events != 1 || col.cum[phRun].Events != 0 || col.cum[phWarmup].Events != 1 {
		t.Fatalf("warm-up interval: iv %d run %d warm %d", iv.Events, col.cum[phRun].Events, col.cum[phWarmup].Events)
	}
	// Interval 2: 100 events of 1..100 ms spread over both workers.
	for i := 1; i <= 100; i++ {
		rec(i%2, phRun, float64(i), counts{Reads: 14, Writes: 4, Others: 2})
	}
	ws[1].record(&eventRecord{phase: phRun, errors: 3, reconnects: 1})
	col.collect(&iv)
	if iv.Events != 100 || iv.Reads != 1400 || iv.Writes != 400 || iv.Others != 200 || iv.Errors != 3 || iv.Reconnects != 1 {
		t.Fatalf("interval = %+v", iv)
	}
	if iv.LatMin != 1e6 || iv.LatMax != 100e6 {
		t.Fatalf("min %d max %d", iv.LatMin, iv.LatMax)
	}
	if p := engine.PercentileMS(iv.Hist, 95); math.Abs(p-95) > 0.1 {
		t.Fatalf("p95 = %v", p)
	}
	// Interval 3: one more; the cumulative run tally has all 101.
	rec(0, phRun, 1000, counts{})
	col.collect(&iv)
	if iv.Events != 1 || iv.Hist.TotalCount() != 1 {
		t.Fatalf("third interval has %d events, %d in histogram", iv.Events, iv.Hist.TotalCount())
	}
	cum := col.cum[phRun]
	lat := cum.Latency(99)
	if cum.Events != 101 || lat.Max != 1000 || lat.Min != 1 || math.Abs(lat.Sum-6050) > 1e-9 {
		t.Fatalf("cumulative %+v latency %+v", cum, lat)
	}
	f := col.fairness()
	if f.EventsAvg != 50.5 || f.EventsStddev != 0.5 {
		t.Fatalf("fairness %+v", f)
	}
}

func TestCollectorConcurrent(t *testing.T) {
	ws := []*workerStats{newWorkerStats(false), newWorkerStats(false), newWorkerStats(false)}
	col := newCollector(ws)
	iv := newTally()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20000; j++ {
				ws[i].record(&eventRecord{phase: phRun, done: true, ns: int64(time.Microsecond) * int64(j%500+1)})
			}
		}()
	}
	go func() { wg.Wait(); close(stop) }()
	var total int64
	for done := false; !done; {
		select {
		case <-stop:
			done = true
		default:
		}
		col.collect(&iv)
		total += iv.Events
		if iv.Hist.TotalCount() != iv.Events {
			t.Fatalf("histogram %d vs events %d", iv.Hist.TotalCount(), iv.Events)
		}
	}
	col.collect(&iv)
	total += iv.Events
	if total != 60000 || col.cum[phRun].Events != 60000 || col.cum[phRun].Hist.TotalCount() != 60000 {
		t.Fatalf("total %d cum %d hist %d", total, col.cum[phRun].Events, col.cum[phRun].Hist.TotalCount())
	}
}
