package parts

import (
	"math"
	"strings"
	"testing"

	"benchmatrix/catalog"
)

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestAssessBinding(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name   string
		limits catalog.LimitSet
		series BindingSeries
		key    string
		bound  bool
		// seconds at the limit, of measured
		at, of int
		text   string
	}{
		{"quota never throttled", catalog.LimitSet{CPUs: 8},
			BindingSeries{ThrottledPeriods: repeat(0, 30), ThrottledMs: repeat(0, 30), ServerCPUPct: repeat(120, 30)},
			"cpus", false, 0, 30, "throttled in 0 of 30 s"},
		{"quota throttled every second", catalog.LimitSet{CPUs: 0.2},
			BindingSeries{ThrottledPeriods: repeat(10, 20), ThrottledMs: repeat(800, 20), ServerCPUPct: repeat(20, 20)},
			"cpus", true, 20, 20, "800 ms/s held back"},
		{"quota throttled in 2 of 30 s is rare, not binding", catalog.LimitSet{CPUs: 1},
			BindingSeries{ThrottledPeriods: append(repeat(0, 28), 1, 3)},
			"cpus", false, 2, 30, ""},
		{"write cap reached", catalog.LimitSet{DiskWriteIOPS: 50},
			BindingSeries{Writes: []float64{49, 50, 48, 51, 30, nan}},
			"disk_write_iops", true, 4, 5, "at the cap in 4 of 5 s"},
		{"read cap with reads from memory", catalog.LimitSet{DiskReadIOPS: 200},
			BindingSeries{Reads: append(repeat(0, 29), 3)},
			"disk_read_iops", false, 0, 30, "peaked at 3/s"},
		{"read bandwidth cap reached", catalog.LimitSet{DiskReadBPS: 8 << 20},
			BindingSeries{ReadKB: repeat(8000, 10)},
			"disk_read_bps", true, 10, 10, "disk_read_bps = 8M"},
		{"memory far below", catalog.LimitSet{Memory: 2 << 30},
			BindingSeries{MemoryMB: []float64{134, 150, 164}},
			"memory", false, 0, 3, "peaked at 164 MiB of 2048 MiB"},
		{"memory at the limit", catalog.LimitSet{Memory: 1 << 30},
			BindingSeries{MemoryMB: []float64{1000, 1020, 1023}},
			"memory", true, 3, 3, ""},
		{"memory limit reached while usage reads lower", catalog.LimitSet{Memory: 1 << 30},
			BindingSeries{MemoryMB: []float64{700, 700, 700, 700}, MemoryLimitHits: []float64{0, 12, 3, 0}},
			"memory", true, 2, 4, "reached the limit 15 times"},
		{"cpuset full", catalog.LimitSet{ServerCPUs: "0"},
			BindingSeries{ServerCPUPct: []float64{99, 98, 97}},
			"server_cpus", true, 3, 3, ""},
		{"no counters", catalog.LimitSet{DiskWriteIOPS: 100},
			BindingSeries{Writes: []float64{nan, nan}},
			"disk_write_iops", false, 0, 0, "not measured"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := AssessBinding(tc.limits, tc.series)
			if len(b.Limits) != 1 {
				t.Fatalf("%d limits judged, want 1: %+v", len(b.Limits), b.Limits)
			}
			lb := b.Limits[0]
			if lb.Key != tc.key || lb.Bound != tc.bound || lb.BoundSeconds != tc.at || lb.Seconds != tc.of {
				t.Errorf("got %s bound=%v %d of %d s, want %s bound=%v %d of %d s (%s)", lb.Key, lb.Bound, lb.BoundSeconds, lb.Seconds, tc.key, tc.bound, tc.at, tc.of, lb.Text)
			}
			if !strings.Contains(lb.Text, tc.text) {
				t.Errorf("text %q does not say %q", lb.Text, tc.text)
			}
			unbound := strings.Join(b.Unbound(), " ")
			if want := lb.Measured && !tc.bound; want != (unbound == tc.key) {
				t.Errorf("Unbound() = %q", unbound)
			}
		})
	}
	// The client's pinning is not the server's limit.
	if b := AssessBinding(catalog.LimitSet{ClientCPUs: "1"}, BindingSeries{}); len(b.Limits) != 0 {
		t.Errorf("client_cpus judged: %+v", b.Limits)
	}
}
