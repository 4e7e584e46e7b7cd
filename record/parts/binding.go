package parts

import (
	"fmt"
	"math"
	"strings"

	"benchmatrix/catalog"
)

// Conditions that bind: a limit the server never reached did not create the
// machine it stands for (a 1-CPU quota never throttled is not a 1-CPU
// machine; a read cap on data that fits the buffer pool never touches a
// read). For each limit in force, AssessBinding measures over the cell's
// measured seconds how much the server's own cgroup counters pressed on it.

// Shares and fractions that decide when a limit binds.
const (
	// AtCapFraction: a second is at a disk cap when the group's rate
	// reached this fraction of the cap (a second's count straddles ticks,
	// and blk-throttle lets a group run a little under its cap on average).
	AtCapFraction = 0.9
	// MemoryBoundFraction: memory binds when the group's charge reached
	// this fraction of the limit (page cache included: near the limit the
	// kernel reclaims the group's cache to stay under it).
	MemoryBoundFraction = 0.9
	// CPUSetBusyFraction: a cpuset binds in a second the server used this
	// fraction of all its CPUs.
	CPUSetBusyFraction = 0.9
	// BoundShare: a limit binds when at least this share of the measured
	// seconds were at it; below, it bound rarely or never.
	BoundShare = 0.1
)

// BindingSeries are a cell's measured seconds of the server's own cgroup
// (and process) columns, NaN where a second has no value.
type BindingSeries struct {
	ThrottledPeriods []float64 // cg_cpu_throttled_periods_s
	ThrottledMs      []float64 // cg_cpu_throttled_ms_s
	Reads, Writes    []float64 // cg_reads_s, cg_writes_s
	ReadKB, WriteKB  []float64 // cg_read_kb_s, cg_write_kb_s
	MemoryMB         []float64 // cg_memory_mb
	MemoryLimitHits  []float64 // cg_memory_limit_hits_s (v1 failcnt, v2 memory.events max)
	ServerCPUPct     []float64 // cpu_server_pct
}

// LimitBinding is how much one limit bound during a cell's measured window.
type LimitBinding struct {
	Key   string `json:"key"`   // the manifest key
	Limit string `json:"limit"` // its value as the manifest writes it
	// Measured: the counters the limit is judged on had values; when not,
	// the other fields are zero and Text says why.
	Measured bool `json:"measured"`
	// Seconds measured, and of them the seconds at the limit (throttled,
	// at the disk cap, memory near the limit, the cpuset busy); Share is
	// their ratio.
	Seconds      int     `json:"seconds"`
	BoundSeconds int     `json:"bound_seconds"`
	Share        float64 `json:"share"`
	// Mean and Peak are the server's use in the limit's unit: CPUs (cpus,
	// server_cpus), IOs/s, bytes/s, bytes (memory).
	Mean float64 `json:"mean"`
	Peak float64 `json:"peak"`
	// ThrottledMsS is the mean CPU time per second the quota held the
	// group back (cpus only).
	ThrottledMsS float64 `json:"throttled_ms_s,omitempty"`
	Bound        bool    `json:"bound"`
	Text         string  `json:"text"`
}

// Binding is what each limit in force did to a cell's server.
type Binding struct {
	Limits []LimitBinding `json:"limits"`
	// Data is the workload's data against the memory that could hold it,
	// and what reached the disk in the measured window (AssessData).
	Data *DataMemory `json:"data,omitempty"`
}

// Unbound are the keys of the limits measured and found not to bind.
func (b *Binding) Unbound() []string {
	if b == nil {
		return nil
	}
	var out []string
	for _, l := range b.Limits {
		if l.Measured && !l.Bound {
			out = append(out, l.Key)
		}
	}
	return out
}

// AssessBinding is a pure function of the limits in force and the measured
// seconds' counters. Client limits (client_cpus) are not the server's and
// are left out.
func AssessBinding(l catalog.LimitSet, s BindingSeries) Binding {
	var b Binding
	add := func(lb LimitBinding) { b.Limits = append(b.Limits, lb) }
	if l.CPUs > 0 {
		lb := atLimit("cpus", l, s.ThrottledPeriods, func(v float64) bool { return v > 0 })
		if lb.Measured {
			lb.ThrottledMsS = mean(s.ThrottledMs)
			lb.Mean, lb.Peak = meanPeak(s.ServerCPUPct, 1.0/100)
			lb.Text = fmt.Sprintf("cpus = %s: throttled in %d of %d s (%.0f ms/s held back)", lb.Limit, lb.BoundSeconds, lb.Seconds, lb.ThrottledMsS)
		}
		add(lb)
	}
	if n := cpuCount(l.ServerCPUs); n > 0 {
		limit := float64(n) * 100
		lb := atLimit("server_cpus", l, s.ServerCPUPct, func(v float64) bool { return v >= CPUSetBusyFraction*limit })
		if lb.Measured {
			lb.Mean, lb.Peak = meanPeak(s.ServerCPUPct, 1.0/100)
			lb.Text = fmt.Sprintf("server_cpus = %s: the server used all %d CPU%s in %d of %d s (peak %.2f CPUs)", lb.Limit, n, plural(n), lb.BoundSeconds, lb.Seconds, lb.Peak)
		}
		add(lb)
	}
	disk := func(key string, limit int64, xs []float64, scale float64, unit string) {
		if limit <= 0 {
			return
		}
		cap := float64(limit)
		lb := atLimit(key, l, xs, func(v float64) bool { return v*scale >= AtCapFraction*cap })
		if lb.Measured {
			lb.Mean, lb.Peak = meanPeak(xs, scale)
			lb.Text = fmt.Sprintf("%s = %s: at the cap in %d of %d s (the server's %s peaked at %s, mean %s)",
				key, lb.Limit, lb.BoundSeconds, lb.Seconds, unit, rateText(lb.Peak, scale != 1), rateText(lb.Mean, scale != 1))
		}
		add(lb)
	}
	disk("disk_write_iops", l.DiskWriteIOPS, s.Writes, 1, "writes")
	disk("disk_read_iops", l.DiskReadIOPS, s.Reads, 1, "reads")
	disk("disk_write_bps", l.DiskWriteBPS, s.WriteKB, 1024, "writes")
	disk("disk_read_bps", l.DiskReadBPS, s.ReadKB, 1024, "reads")
	if l.Memory > 0 {
		limit := float64(l.Memory)
		// A second binds when the group was near the limit or reached it
		// (the kernel reclaimed to keep it under).
		near := make([]float64, len(s.MemoryMB))
		for i, mb := range s.MemoryMB {
			near[i] = mb
			if i < len(s.MemoryLimitHits) && s.MemoryLimitHits[i] > 0 && !math.IsNaN(mb) {
				near[i] = math.Inf(1)
			}
		}
		lb := atLimit("memory", l, near, func(v float64) bool { return v*(1<<20) >= MemoryBoundFraction*limit })
		if lb.Measured {
			lb.Mean, lb.Peak = meanPeak(s.MemoryMB, 1<<20)
			hits := 0.0
			for _, h := range s.MemoryLimitHits {
				if !math.IsNaN(h) {
					hits += h
				}
			}
			lb.Text = fmt.Sprintf("memory = %s: the server's group peaked at %.0f MiB of %.0f MiB (page cache included), reached the limit %.0f times; near it in %d of %d s",
				lb.Limit, lb.Peak/(1<<20), limit/(1<<20), hits, lb.BoundSeconds, lb.Seconds)
		}
		add(lb)
	}
	return b
}

// atLimit counts the seconds with a value and those at the limit.
func atLimit(key string, l catalog.LimitSet, xs []float64, at func(float64) bool) LimitBinding {
	lb := LimitBinding{Key: key, Limit: l.Get(key)}
	switch key { // sizes as a manifest writes them (2G, 8M), not in bytes
	case "memory":
		lb.Limit = catalog.FormatBytes(l.Memory)
	case "disk_write_bps":
		lb.Limit = catalog.FormatBytes(l.DiskWriteBPS)
	case "disk_read_bps":
		lb.Limit = catalog.FormatBytes(l.DiskReadBPS)
	}
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, -1) {
			continue
		}
		lb.Seconds++
		if at(x) {
			lb.BoundSeconds++
		}
	}
	if lb.Seconds == 0 {
		lb.Text = key + " = " + lb.Limit + ": not measured (the server's cgroup counters had no values)"
		return lb
	}
	lb.Measured = true
	lb.Share = float64(lb.BoundSeconds) / float64(lb.Seconds)
	lb.Bound = lb.Share >= BoundShare
	return lb
}

func cpuCount(list string) int {
	if list == "" {
		return 0
	}
	cpus, err := catalog.ParseCPUList(list)
	if err != nil {
		return 0
	}
	return len(cpus)
}

func mean(xs []float64) float64 {
	s, n := 0.0, 0
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			s += x
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// meanPeak is the mean and the highest value of xs times scale.
func meanPeak(xs []float64, scale float64) (float64, float64) {
	peak := 0.0
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) && x > peak {
			peak = x
		}
	}
	return mean(xs) * scale, peak * scale
}

// rateText prints IOs/s, or bytes/s as KiB/s or MiB/s.
func rateText(v float64, bytes bool) string {
	if !bytes {
		return fmt.Sprintf("%.0f/s", v)
	}
	if v >= 1<<20 {
		return fmt.Sprintf("%.1f MiB/s", v/(1<<20))
	}
	return fmt.Sprintf("%.0f KiB/s", v/1024)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// DataMemory is the data against memory: the workload tables' size against
// the buffer pool (InnoDB) or the page cache a memory limit leaves (other
// engines, whose data the OS caches), and what the server read from the
// disk in the measured window. A preset that stands for a small machine
// creates memory pressure only when the data does not fit.
type DataMemory struct {
	Engine      string  `json:"engine"`
	DataBytes   int64   `json:"data_bytes"`   // data + indexes of the workload tables
	PoolBytes   int64   `json:"pool_bytes"`   // innodb_buffer_pool_size; 0 when unknown
	MemoryLimit int64   `json:"memory_limit"` // the server's memory limit; 0 for none
	Ratio       float64 `json:"ratio"`        // DataBytes over what holds it (pool, or memory limit)
	// Fits: the data fits what holds it (InnoDB: the buffer pool; other
	// engines: the memory limit's page cache).
	Fits bool `json:"fits"`
	// ServerReadsS and ServerReadKBs are the server's own reads from its
	// cgroup (mean per second over the measured window); PoolReadsS the
	// buffer pool's misses (Innodb_buffer_pool_reads per second). The
	// Measured flags say whether the counters had values.
	ServerReadsS       float64 `json:"server_reads_s"`
	ServerReadKBs      float64 `json:"server_read_kb_s"`
	ServerReadMeasured bool    `json:"server_reads_measured"`
	PoolReadsS         float64 `json:"pool_reads_s"`
	PoolReadsMeasured  bool    `json:"pool_reads_measured"`
	// Sizes says the sizes alone; Text adds what reached the disk.
	Sizes string `json:"sizes"`
	Text  string `json:"text"`
}

// NoDiskReads is the mean reads per second under which reads are said
// never to have reached the disk (a few metadata reads a second).
const NoDiskReads = 1.0

// AssessData is a pure function of the sizes and the measured seconds'
// read counters (NaN where a second has none): reads and readKB are the
// server's cgroup reads and KiB read per second, poolReads the buffer
// pool's misses per second.
func AssessData(engine string, data, pool, memLimit int64, reads, readKB, poolReads []float64) DataMemory {
	d := DataMemory{Engine: engine, DataBytes: data, PoolBytes: pool, MemoryLimit: memLimit}
	if n := count(reads); n > 0 {
		d.ServerReadMeasured = true
		d.ServerReadsS, d.ServerReadKBs = mean(reads), mean(readKB)
	}
	if n := count(poolReads); n > 0 {
		d.PoolReadsMeasured = true
		d.PoolReadsS = mean(poolReads)
	}
	holder, what := pool, fmt.Sprintf("the %s buffer pool", sizeText(pool))
	if engine != "" && engine != "innodb" {
		holder, what = memLimit, fmt.Sprintf("the page cache of the %s memory limit", sizeText(memLimit))
	}
	mib := float64(data) / (1 << 20)
	switch {
	case data <= 0:
		d.Text = "data size unknown"
		return d
	case holder <= 0:
		d.Text = fmt.Sprintf("the data (%.0f MiB); no %s to compare it with", mib, map[bool]string{true: "buffer pool size", false: "memory limit"}[engine == "" || engine == "innodb"])
		return d
	}
	d.Ratio = float64(data) / float64(holder)
	d.Fits = data <= holder
	if d.Fits {
		d.Text = fmt.Sprintf("the data (%.0f MiB) fits %s", mib, what)
	} else {
		d.Text = fmt.Sprintf("the data (%.0f MiB) is %.1fx %s", mib, d.Ratio, what)
	}
	if memLimit > 0 && (engine == "" || engine == "innodb") {
		d.Text += fmt.Sprintf(" (%.0f%% of the %s memory limit)", 100*float64(data)/float64(memLimit), sizeText(memLimit))
	}
	d.Sizes = d.Text
	d.Text += "; " + d.ReadsText()
	return d
}

// ReadsText says what reached the disk in the measured window.
func (d DataMemory) ReadsText() string {
	var parts []string
	if d.ServerReadMeasured {
		if d.ServerReadsS < NoDiskReads {
			parts = append(parts, fmt.Sprintf("reads never reached the disk (the server's cgroup read %.1f/s)", d.ServerReadsS))
		} else {
			parts = append(parts, fmt.Sprintf("the server read %.0f/s from the disk (%s)", d.ServerReadsS, rateText(d.ServerReadKBs*1024, true)))
		}
	}
	if d.PoolReadsMeasured && (d.Engine == "" || d.Engine == "innodb") {
		parts = append(parts, fmt.Sprintf("buffer pool misses %.0f/s", d.PoolReadsS))
	}
	if len(parts) == 0 {
		return "reads from the disk not measured (the server has no cgroup of its own)"
	}
	return strings.Join(parts, ", ")
}

func count(xs []float64) int {
	n := 0
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			n++
		}
	}
	return n
}

// sizeText prints a size as a manifest would ("512M"), or in MiB.
func sizeText(n int64) string {
	if n > 0 && n%(1<<20) == 0 {
		return catalog.FormatBytes(n)
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}
