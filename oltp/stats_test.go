package oltp

import (
	"math"
	"sync"
	"testing"
	"time"
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
	if iv.events != 1 || col.cum[phRun].events != 0 || col.cum[phWarmup].events != 1 {
		t.Fatalf("warm-up interval: iv %d run %d warm %d", iv.events, col.cum[phRun].events, col.cum[phWarmup].events)
	}
	// Interval 2: 100 events of 1..100 ms spread over both workers.
	for i := 1; i <= 100; i++ {
		rec(i%2, phRun, float64(i), counts{Reads: 14, Writes: 4, Others: 2})
	}
	ws[1].record(&eventRecord{phase: phRun, errors: 3, reconnects: 1})
	col.collect(&iv)
	if iv.events != 100 || iv.reads != 1400 || iv.writes != 400 || iv.others != 200 || iv.errors != 3 || iv.reconnects != 1 {
		t.Fatalf("interval = %+v", iv)
	}
	if iv.latMin != 1e6 || iv.latMax != 100e6 {
		t.Fatalf("min %d max %d", iv.latMin, iv.latMax)
	}
	if p := pctMS(iv.hist, 95); math.Abs(p-95) > 0.1 {
		t.Fatalf("p95 = %v", p)
	}
	// Interval 3: one more; the cumulative run tally has all 101.
	rec(0, phRun, 1000, counts{})
	col.collect(&iv)
	if iv.events != 1 || iv.hist.TotalCount() != 1 {
		t.Fatalf("third interval has %d events, %d in histogram", iv.events, iv.hist.TotalCount())
	}
	cum := col.cum[phRun]
	lat := cum.latency(99)
	if cum.events != 101 || lat.Max != 1000 || lat.Min != 1 || math.Abs(lat.Sum-6050) > 1e-9 {
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
		total += iv.events
		if iv.hist.TotalCount() != iv.events {
			t.Fatalf("histogram %d vs events %d", iv.hist.TotalCount(), iv.events)
		}
	}
	col.collect(&iv)
	total += iv.events
	if total != 60000 || col.cum[phRun].events != 60000 || col.cum[phRun].hist.TotalCount() != 60000 {
		t.Fatalf("total %d cum %d hist %d", total, col.cum[phRun].events, col.cum[phRun].hist.TotalCount())
	}
}
