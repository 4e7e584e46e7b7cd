package runner

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"benchmatrix/experiment"
)

// Progress hears where the run is. The runner calls it from one goroutine.
type Progress interface {
	// Cell says cell run i (from 0) of n starts.
	Cell(i, n int, c experiment.Cell)
	// Phase names what the current cell does now (restart, prepare,
	// warm-up, measure, ...).
	Phase(text string)
	// CellDone says the current cell run ended.
	CellDone()
	// Close ends the display; the runner calls it once.
	Close()
}

// noProgress is used when none is given: the log lines say it all.
type noProgress struct{}

func (noProgress) Cell(int, int, experiment.Cell) {}
func (noProgress) Phase(string)                   {}
func (noProgress) CellDone()                      {}
func (noProgress) Close()                         {}

// Bar is a terminal progress display: one bar over the whole plan, weighted
// by each cell's estimated time, with the ETA and the current cell's phase.
// Log lines written through it appear above the bar.
type Bar struct {
	p      *mpb.Progress
	bar    *mpb.Bar
	plan   *experiment.Plan
	status atomic.Value // string
	cur    int
	weight []int64
	total  int64
}

// NewBar draws a bar for plan on w (a terminal).
func NewBar(w io.Writer, plan *experiment.Plan) *Bar {
	b := &Bar{plan: plan, p: mpb.New(mpb.WithOutput(w), mpb.WithRefreshRate(200*time.Millisecond))}
	b.status.Store("starting")
	var total int64
	for _, c := range plan.Cells {
		single := &experiment.Plan{Cells: []experiment.Cell{c}}
		wgt := int64(single.Estimate() / time.Second)
		b.weight = append(b.weight, max(1, wgt))
		total += max(1, wgt)
	}
	b.total = total
	b.bar = b.p.AddBar(total,
		mpb.PrependDecorators(
			decor.Any(func(decor.Statistics) string { return b.status.Load().(string) }, decor.WCSyncSpaceR),
		),
		mpb.AppendDecorators(
			decor.Percentage(decor.WCSyncSpace),
			decor.Name(" ETA "),
			decor.AverageETA(decor.ET_STYLE_GO),
		),
	)
	return b
}

// Write prints log lines above the bar.
func (b *Bar) Write(p []byte) (int, error) { return b.p.Write(p) }

// Cell implements Progress.
func (b *Bar) Cell(i, n int, c experiment.Cell) {
	b.cur = i
	for len(b.weight) <= i { // a round until = "conclusive" added (rounds.go)
		single := &experiment.Plan{Cells: []experiment.Cell{c}}
		b.weight = append(b.weight, max(1, int64(single.Estimate()/time.Second)))
		b.total += b.weight[len(b.weight)-1]
		b.bar.SetTotal(b.total, false)
	}
	b.status.Store(fmt.Sprintf("[%d/%d] %s #%d", i+1, n, c.Name, c.Repeat))
}

// Phase implements Progress.
func (b *Bar) Phase(text string) {
	s := b.status.Load().(string)
	if j := indexByte(s, ':'); j >= 0 {
		s = s[:j]
	}
	b.status.Store(s + ": " + text)
}

// CellDone implements Progress.
func (b *Bar) CellDone() {
	if b.cur < len(b.weight) {
		b.bar.IncrInt64(b.weight[b.cur])
	}
}

// Close implements Progress.
func (b *Bar) Close() {
	b.bar.SetTotal(-1, true)
	b.p.Wait()
}

func indexByte(s string, c byte) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == c {
			return i
		}
	}
	return -1
}
