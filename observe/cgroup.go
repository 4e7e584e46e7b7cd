package observe

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"benchmatrix/server"
)

// Inside the limits: a server under resource limits runs in its own cgroup
// (a sandbox's benchmatrix-PID-N group, a container's engine group). Its
// counters say what the server itself did inside those limits, beside the
// whole device and the whole host: other tenants' IO on a shared disk is
// no longer put down to the server, and a CPU quota or memory cap shows
// when it bites. The device's queue depth and request size come from
// /proc/diskstats, as sar -d prints them.
//
// Which files, per cgroup version:
//
//	| what | v1 | v2 |
//	|---|---|---|
//	| IOs, bytes | blkio.throttle.io_serviced, io_service_bytes ("MAJ:MIN Read N") | io.stat (rios= wios= rbytes= wbytes=) |
//	| time stalled on IO | (none) | io.pressure "some ... total=" (µs) |
//	| memory | memory.usage_in_bytes | memory.current |
//	| memory limit hit | memory.failcnt | memory.events "max" |
//	| CPU throttling | cpu.stat nr_throttled, throttled_time (ns) | cpu.stat nr_throttled, throttled_usec |
//
// No kernel file reports the time blk-throttle held a group's IOs back
// (v1 or v2); v2's pressure stall time (a task of the group waiting on IO,
// throttled or not) is the nearest, and v1 has no per-group equivalent, so
// cg_io_stall_pct is empty there.

// Sample keys of the cgroup reader ("cg.*") and the device queue.
const (
	keyCgReadIOs      = "cg.read_ios"
	keyCgWriteIOs     = "cg.write_ios"
	keyCgReadBytes    = "cg.read_bytes"
	keyCgWriteBytes   = "cg.write_bytes"
	keyCgIOStallUs    = "cg.io_stall_us"
	keyCgMemory       = "cg.memory_bytes"
	keyCgMemLimitHits = "cg.memory_limit_hits"
	keyCgNrThrottled  = "cg.cpu_nr_throttled"
	keyCgThrottledUs  = "cg.cpu_throttled_us"
	keyDiskWeightedMs = "os.disk.weighted_ms"
)

// cgroupColumns are appended to the sampled columns: the device's queue,
// then the server's cgroup.
var cgroupColumns = []column{
	{ColumnDoc{"disk_avgqu_sz", "interval", "/proc/diskstats weighted time doing I/O (field 11 of the stats) / interval: the average number of requests in flight or queued on the device under the datadir (sar -d avgqu-sz, iostat aqu-sz)"}, false,
		diskQueue},
	{ColumnDoc{"disk_avg_req_kb", "interval", "/proc/diskstats: KiB per read or write completed in the interval (sectors × 512 / IOs; sar -d areq-sz); 0 when no I/O"}, false,
		diskRequestSize},
	{ColumnDoc{"cg_reads_s", "rate", "reads per second by the server's own cgroup on the datadir's device (all devices when it is unknown), as the block throttle counts them: v1 blkio.throttle.io_serviced, v2 io.stat rios. v1 sees the IO the group's threads submit (direct and synchronous), not page-cache writeback done by kernel threads; empty when the server has no cgroup (a sandbox without limits)"}, false,
		rate(keyCgReadIOs)},
	{ColumnDoc{"cg_writes_s", "rate", "writes per second by the server's cgroup on that device: v1 blkio.throttle.io_serviced, v2 io.stat wios (what disk_write_iops caps)"}, false,
		rate(keyCgWriteIOs)},
	{ColumnDoc{"cg_read_kb_s", "rate", "KiB read per second by the server's cgroup on that device: v1 blkio.throttle.io_service_bytes, v2 io.stat rbytes"}, false,
		scaledRate(1.0/1024, keyCgReadBytes)},
	{ColumnDoc{"cg_write_kb_s", "rate", "KiB written per second by the server's cgroup on that device: v1 blkio.throttle.io_service_bytes, v2 io.stat wbytes"}, false,
		scaledRate(1.0/1024, keyCgWriteBytes)},
	{ColumnDoc{"cg_io_stall_pct", "interval", "share of the interval in which some task of the server's cgroup waited on IO (throttled or not), %: v2 io.pressure \"some\" total; empty on cgroup v1, which reports no per-group IO wait"}, false,
		func(p, c map[string]float64, dt float64) float64 {
			d, ok := delta(p, c, keyCgIOStallUs)
			if !ok {
				return nan
			}
			return math.Min(100, d/1e6/dt*100)
		}},
	{ColumnDoc{"cg_memory_mb", "gauge", "memory charged to the server's cgroup, page cache included, MiB: v1 memory.usage_in_bytes, v2 memory.current"}, false,
		func(_, c map[string]float64, _ float64) float64 {
			if v, ok := c[keyCgMemory]; ok {
				return v / (1 << 20)
			}
			return nan
		}},
	{ColumnDoc{"cg_memory_limit_hits_s", "rate", "times per second the server's cgroup reached its memory limit (the kernel reclaimed its memory, page cache first, to stay under it): v1 memory.failcnt, v2 memory.events max"}, false,
		rate(keyCgMemLimitHits)},
	{ColumnDoc{"cg_cpu_throttled_periods_s", "rate", "CFS periods (100 ms) per second in which the server's cgroup used up its CPU quota and was held back: cpu.stat nr_throttled (v1 and v2)"}, false,
		rate(keyCgNrThrottled)},
	{ColumnDoc{"cg_cpu_throttled_ms_s", "rate", "milliseconds per second the CPU quota held the server's cgroup back (summed over its CPUs' run queues, so it can exceed 1000): cpu.stat v1 throttled_time, v2 throttled_usec"}, false,
		scaledRate(1.0/1000, keyCgThrottledUs)},
}

// diskQueue is sar's avgqu-sz: Δ weighted ms / interval ms.
func diskQueue(p, c map[string]float64, dt float64) float64 {
	d, ok := delta(p, c, keyDiskWeightedMs)
	if !ok {
		return nan
	}
	return d / (dt * 1000)
}

// diskRequestSize is sar's areq-sz in KiB: Δ sectors / Δ IOs.
func diskRequestSize(p, c map[string]float64, _ float64) float64 {
	ios, ok1 := sumDelta(p, c, "os.disk.reads", "os.disk.writes")
	sectors, ok2 := sumDelta(p, c, "os.disk.read_sectors", "os.disk.write_sectors")
	if !ok1 || !ok2 {
		return nan
	}
	if ios == 0 {
		return 0
	}
	return sectors * 512 / 1024 / ios
}

// readDiskQueue stores the device's weighted I/O time (field 11 of the
// stats, ms) beside what read stored from the same file.
func (r *osReader) readDiskQueue(vals map[string]float64) {
	if !r.hasDisk {
		return
	}
	b, err := os.ReadFile(filepath.Join(r.proc, "diskstats"))
	if err != nil {
		return
	}
	if w, ok := diskWeightedMs(string(b), r.major, r.minor); ok {
		vals[keyDiskWeightedMs] = w
	}
}

// diskWeightedMs is the weighted time doing I/O of the major:minor line of
// /proc/diskstats text (the 14th whitespace field).
func diskWeightedMs(text string, major, minor uint32) (float64, bool) {
	ma, mi := strconv.FormatUint(uint64(major), 10), strconv.FormatUint(uint64(minor), 10)
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 14 || f[0] != ma || f[1] != mi {
			continue
		}
		v, err := strconv.ParseUint(f[13], 10, 64)
		return float64(v), err == nil
	}
	return 0, false
}

// cgroupReader reads the server's cgroup counters at each tick. The zero
// value (no cgroup) reads nothing.
type cgroupReader struct {
	paths server.CgroupPaths
}

// note says where the cg_* columns come from, or why they are empty.
func (c *cgroupReader) note() string {
	if len(c.paths.Dirs) == 0 {
		return "cgroup: the server has no cgroup of its own (no limits on a sandbox, or not visible from here); " + "cg_* columns are empty"
	}
	dev := c.paths.Device
	if dev == "" {
		dev = "every device (the datadir's is unknown)"
	}
	if c.paths.V2 {
		return fmt.Sprintf("cgroup: v2 %s, IO on %s", c.paths.Dirs[""], dev)
	}
	var dirs []string
	for _, ctrl := range []string{"blkio", "cpu", "memory"} {
		if d, ok := c.paths.Dirs[ctrl]; ok {
			dirs = append(dirs, d)
		}
	}
	return fmt.Sprintf("cgroup: v1 %s, IO on %s; cg_io_stall_pct is empty (v1 reports no per-group IO wait)", strings.Join(dirs, " "), dev)
}

// read stores the cgroup's counters; a file that cannot be read leaves its
// keys out (a gap).
func (c *cgroupReader) read(vals map[string]float64) {
	p := c.paths
	if len(p.Dirs) == 0 {
		return
	}
	if p.V2 {
		dir := p.Dirs[""]
		if b, err := os.ReadFile(filepath.Join(dir, "io.stat")); err == nil {
			io := parseIOStat(string(b), p.Device)
			vals[keyCgReadIOs], vals[keyCgWriteIOs] = io.readIOs, io.writeIOs
			vals[keyCgReadBytes], vals[keyCgWriteBytes] = io.readBytes, io.writeBytes
		}
		if b, err := os.ReadFile(filepath.Join(dir, "io.pressure")); err == nil {
			if us, ok := parsePressureSome(string(b)); ok {
				vals[keyCgIOStallUs] = us
			}
		}
		storeInt(vals, keyCgMemory, filepath.Join(dir, "memory.current"))
		if b, err := os.ReadFile(filepath.Join(dir, "memory.events")); err == nil {
			if n, ok := parseFlatKeyed(string(b))["max"]; ok {
				vals[keyCgMemLimitHits] = n
			}
		}
		c.readCPUStat(vals, filepath.Join(dir, "cpu.stat"), "throttled_usec", 1)
		return
	}
	if dir, ok := p.Dirs["blkio"]; ok {
		ios, ok1 := readBlkio(filepath.Join(dir, "blkio.throttle.io_serviced"), p.Device)
		bytes, ok2 := readBlkio(filepath.Join(dir, "blkio.throttle.io_service_bytes"), p.Device)
		if ok1 && ok2 {
			vals[keyCgReadIOs], vals[keyCgWriteIOs] = ios[0], ios[1]
			vals[keyCgReadBytes], vals[keyCgWriteBytes] = bytes[0], bytes[1]
		}
	}
	if dir, ok := p.Dirs["memory"]; ok {
		storeInt(vals, keyCgMemory, filepath.Join(dir, "memory.usage_in_bytes"))
		storeInt(vals, keyCgMemLimitHits, filepath.Join(dir, "memory.failcnt"))
	}
	if dir, ok := p.Dirs["cpu"]; ok {
		c.readCPUStat(vals, filepath.Join(dir, "cpu.stat"), "throttled_time", 1.0/1000)
	}
}

// readCPUStat stores nr_throttled and the throttled time (timeKey, scaled
// to µs).
func (c *cgroupReader) readCPUStat(vals map[string]float64, path, timeKey string, toUs float64) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	kv := parseFlatKeyed(string(b))
	n, ok1 := kv["nr_throttled"]
	t, ok2 := kv[timeKey]
	if ok1 && ok2 {
		vals[keyCgNrThrottled] = n
		vals[keyCgThrottledUs] = t * toUs
	}
}

func storeInt(vals map[string]float64, key, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
		vals[key] = float64(v)
	}
}

// parseFlatKeyed reads "key value" lines (cpu.stat).
func parseFlatKeyed(text string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			out[f[0]] = v
		}
	}
	return out
}

// readBlkio reads a v1 blkio.throttle file ("MAJ:MIN Read N" lines) into
// [reads, writes] for dev, or summed over every device when dev is "".
// A file without a line for dev (no IO there yet) reads as zeros.
func readBlkio(path, dev string) ([2]float64, bool) {
	var out [2]float64
	b, err := os.ReadFile(path)
	if err != nil {
		return out, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || dev != "" && f[0] != dev {
			continue
		}
		v, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			continue
		}
		switch f[1] {
		case "Read":
			out[0] += float64(v)
		case "Write":
			out[1] += float64(v)
		}
	}
	return out, true
}

type ioStat struct{ readIOs, writeIOs, readBytes, writeBytes float64 }

// parseIOStat reads v2 io.stat ("MAJ:MIN rbytes=N wbytes=N rios=N wios=N
// ...") for dev, or summed over every device when dev is "". A group with
// no IO yet has no line: zeros.
func parseIOStat(text, dev string) ioStat {
	var s ioStat
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || dev != "" && f[0] != dev {
			continue
		}
		for _, kv := range f[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				continue
			}
			switch k {
			case "rios":
				s.readIOs += float64(n)
			case "wios":
				s.writeIOs += float64(n)
			case "rbytes":
				s.readBytes += float64(n)
			case "wbytes":
				s.writeBytes += float64(n)
			}
		}
	}
	return s
}

// parsePressureSome is the "some" line's total (µs) of a PSI file.
func parsePressureSome(text string) (float64, bool) {
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "some" {
			continue
		}
		for _, kv := range f[1:] {
			if v, ok := strings.CutPrefix(kv, "total="); ok {
				n, err := strconv.ParseUint(v, 10, 64)
				return float64(n), err == nil
			}
		}
	}
	return 0, false
}
