package parts

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// ContentionThresholds say when an interval counts as contended.
type ContentionThresholds struct {
	// CPUPct: other processes used more than this much CPU, in % of one
	// CPU (default 25).
	CPUPct float64
	// StealPct: the hypervisor stole more than this share of all CPUs, %
	// (default 10).
	StealPct float64
	// IOKBs and IOShare: other IO above IOKBs KiB/s and above IOShare of
	// the device's traffic (defaults 1024 and 0.5).
	IOKBs, IOShare float64
	// Share: a cell is contended when more than this fraction of its
	// measured intervals are (default 0.2).
	Share float64
}

func (t ContentionThresholds) withDefaults() ContentionThresholds {
	if t.CPUPct <= 0 {
		t.CPUPct = 25
	}
	if t.StealPct <= 0 {
		t.StealPct = 10
	}
	if t.IOKBs <= 0 {
		t.IOKBs = 1024
	}
	if t.IOShare <= 0 {
		t.IOShare = 0.5
	}
	if t.Share <= 0 {
		t.Share = 0.2
	}
	return t
}

// Contention summarises a cell's measured intervals.
type Contention struct {
	Intervals int `json:"intervals"` // with a value
	CPU       int `json:"cpu"`       // intervals with other CPU above the threshold
	Steal     int `json:"steal"`
	IO        int `json:"io"`
	// Medians over the intervals: other CPU (% of one CPU), steal (% of
	// all), other IO (KiB/s).
	CPUOtherPct float64 `json:"cpu_other_pct"`
	StealPct    float64 `json:"steal_pct"`
	IOOtherKBs  float64 `json:"disk_other_kb_s"`
	Contended   bool    `json:"contended"`
	Why         string  `json:"why,omitempty"`
}

// AssessContention is a pure function of the per-interval values (NaN for
// none): other CPU (% of one CPU), steal (% of all CPUs), other IO and all
// device IO (KiB/s).
func AssessContention(cpuOther, steal, ioOther, ioAll []float64, th ContentionThresholds) Contention {
	th = th.withDefaults()
	var c Contention
	var cs, ss, is []float64
	n := max(len(cpuOther), len(steal), len(ioOther))
	at := func(xs []float64, i int) float64 {
		if i < len(xs) {
			return xs[i]
		}
		return math.NaN()
	}
	for i := 0; i < n; i++ {
		co, st, io, all := at(cpuOther, i), at(steal, i), at(ioOther, i), at(ioAll, i)
		if math.IsNaN(co) && math.IsNaN(st) && math.IsNaN(io) {
			continue
		}
		c.Intervals++
		if !math.IsNaN(co) {
			cs = append(cs, co)
			if co > th.CPUPct {
				c.CPU++
			}
		}
		if !math.IsNaN(st) {
			ss = append(ss, st)
			if st > th.StealPct {
				c.Steal++
			}
		}
		if !math.IsNaN(io) {
			is = append(is, io)
			if io > th.IOKBs && !(all > 0 && io < th.IOShare*all) {
				c.IO++
			}
		}
	}
	c.CPUOtherPct, c.StealPct, c.IOOtherKBs = median(cs), median(ss), median(is)
	if c.Intervals == 0 {
		return c
	}
	lim := th.Share * float64(c.Intervals)
	var why []string
	if float64(c.CPU) > lim {
		why = append(why, "other processes used "+strconv.FormatFloat(c.CPUOtherPct, 'f', 0, 64)+"% of a CPU (median) in "+
			strconv.Itoa(c.CPU)+" of "+strconv.Itoa(c.Intervals)+" s")
	}
	if float64(c.Steal) > lim {
		why = append(why, "the hypervisor stole "+strconv.FormatFloat(c.StealPct, 'f', 0, 64)+"% of the CPUs in "+
			strconv.Itoa(c.Steal)+" of "+strconv.Itoa(c.Intervals)+" s")
	}
	if float64(c.IO) > lim {
		why = append(why, "other IO on the device: "+strconv.FormatFloat(c.IOOtherKBs, 'f', 0, 64)+" KiB/s (median) in "+
			strconv.Itoa(c.IO)+" of "+strconv.Itoa(c.Intervals)+" s")
	}
	c.Contended = len(why) > 0
	c.Why = strings.Join(why, "; ")
	return c
}

// median of xs (which it does not modify); NaN when empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
