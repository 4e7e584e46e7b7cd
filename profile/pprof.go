package profile

import (
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// WritePprof writes the profile as a gzipped pprof protobuf, which `go
// tool pprof -http=: FILE` opens: one sample per folded stack, its
// locations innermost first, with the thread kind as a label (and as the
// outermost frame, as in the flame graphs). On-CPU profiles carry samples
// and time; off-CPU ones the time off CPU and the intervals.
func WritePprof(w io.Writer, p *Profile, seconds float64) error {
	countName := "samples"
	if p.Mode != OnCPU {
		countName = "intervals"
	}
	timeName := map[Mode]string{OnCPU: "cpu", OffCPU: "offcpu", Both: "wall"}[p.Mode]
	out := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: countName, Unit: "count"},
			{Type: timeName, Unit: "nanoseconds"},
		},
		DefaultSampleType: timeName,
		DurationNanos:     int64(seconds * 1e9),
		PeriodType:        &profile.ValueType{Type: timeName, Unit: "nanoseconds"},
	}
	funcs := map[string]*profile.Function{}
	locs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := locs[name]; ok {
			return l
		}
		f := &profile.Function{ID: uint64(len(funcs) + 1), Name: name, SystemName: name}
		funcs[name] = f
		out.Function = append(out.Function, f)
		l := &profile.Location{ID: uint64(len(locs) + 1), Line: []profile.Line{{Function: f}}}
		locs[name] = l
		out.Location = append(out.Location, l)
		return l
	}
	for _, s := range slices.Sorted(maps.Keys(p.Weight)) {
		frames := strings.Split(s, ";")
		sample := &profile.Sample{
			Value: []int64{p.Count[s], p.Weight[s]},
			Label: map[string][]string{"thread_kind": {frames[0]}},
		}
		for i := len(frames) - 1; i >= 0; i-- {
			sample.Location = append(sample.Location, loc(frames[i]))
		}
		out.Sample = append(out.Sample, sample)
	}
	if err := out.CheckValid(); err != nil {
		return err
	}
	return out.Write(w)
}
