package observe

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"benchmatrix/record/parts"
)

// Contention: what else used the host while a cell ran. The server and
// benchmatrix are measured per process (/proc/PID/stat, /proc/PID/io), the
// host and the device as a whole (/proc/stat, /proc/diskstats); the
// difference is somebody else's load: another benchmark, a build, a backup,
// a noisy neighbour. A cell measured under such load says less about the
// settings it compares, and summary.md says so.

// contentionColumns are appended to the sampled columns (after the CPU
// shares): device writes apart, the server's own IO, and what is left.
var contentionColumns = []column{
	{ColumnDoc{"disk_writes_s", "rate", "/proc/diskstats: writes completed per second on the device under the datadir"}, false,
		rate("os.disk.writes")},
	{ColumnDoc{"server_io_kb_s", "rate", "/proc/PID/io read_bytes + write_bytes − cancelled_write_bytes of the server process: KiB per second it caused to be read from or written to storage (page-cache writes counted when dirtied); empty when the PID is unknown or changed"}, false,
		serverIO},
	{ColumnDoc{"cpu_other_pct", "interval", "host CPU (user + system, /proc/stat) used by neither the server nor benchmatrix, % of one CPU: contention from other processes; empty when the server PID is unknown"}, false,
		otherCPU},
	{ColumnDoc{"disk_other_kb_s", "rate", "device KiB/s (read + written, /proc/diskstats) not caused by the server process (/proc/PID/io): IO of other processes on the datadir's device, plus the filesystem's journal; empty when the PID is unknown"}, false,
		otherIO},
}

// readServerIO stores the server's /proc/PID/io byte counters.
func (r *osReader) readServerIO(vals map[string]float64) {
	if r.serverPID <= 0 {
		return
	}
	b, err := os.ReadFile(filepath.Join(r.proc, strconv.Itoa(r.serverPID), "io"))
	if err != nil {
		return
	}
	if rd, wr, ok := parseProcIO(string(b)); ok {
		vals["os.server.io_bytes"] = rd + wr
		vals["os.server.io_pid"] = float64(r.serverPID)
	}
}

// readPeers stores the summed CPU ticks and IO bytes of the server's other
// processes (a topology's other nodes), with the set of PIDs they came
// from; a second in which one of them cannot be read has neither, so that
// the other-load columns of that interval stay empty rather than count a
// node's work as contention.
func (r *osReader) readPeers(vals map[string]float64) {
	if len(r.peerPIDs) == 0 {
		return
	}
	var ticks, io, sig float64
	for _, pid := range r.peerPIDs {
		dir := filepath.Join(r.proc, strconv.Itoa(pid))
		b, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			return
		}
		t, err := parsePidStat(string(b))
		if err != nil {
			return
		}
		ticks += float64(t)
		sig += float64(pid)
		if b, err := os.ReadFile(filepath.Join(dir, "io")); err == nil {
			if rd, wr, ok := parseProcIO(string(b)); ok {
				io += rd + wr
			}
		}
	}
	vals["os.peers.ticks"], vals["os.peers.io_bytes"], vals["os.peers.pids"] = ticks, io, sig
}

// peers is Δ of a peers' counter per second (key: os.peers.ticks in % of
// one CPU, os.peers.io_bytes in KiB/s): 0 when the server has no other
// processes, NaN when they could not be read or changed in the interval.
func peers(prev, cur map[string]float64, dt float64, key string) float64 {
	p, okp := prev["os.peers.pids"]
	c, okc := cur["os.peers.pids"]
	if !okp && !okc {
		return 0
	}
	if !okp || !okc || p != c {
		return nan
	}
	d, ok := delta(prev, cur, key)
	if !ok {
		return nan
	}
	if key == "os.peers.ticks" {
		return 100 * d / userHZ / dt
	}
	return d / 1024 / dt
}

// parseProcIO returns read_bytes and write_bytes − cancelled_write_bytes
// from /proc/PID/io text.
func parseProcIO(text string) (read, write float64, ok bool) {
	var have int
	var cancelled float64
	for _, line := range strings.Split(text, "\n") {
		k, v, found := strings.Cut(line, ":")
		if !found {
			continue
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			continue
		}
		switch k {
		case "read_bytes":
			read, have = n, have|1
		case "write_bytes":
			write, have = n, have|2
		case "cancelled_write_bytes":
			cancelled = n
		}
	}
	return read, math.Max(write-cancelled, 0), have == 3
}

func serverIO(prev, cur map[string]float64, dt float64) float64 {
	if prev["os.server.io_pid"] != cur["os.server.io_pid"] {
		return nan
	}
	d, ok := delta(prev, cur, "os.server.io_bytes")
	if !ok {
		return nan
	}
	return d / 1024 / dt
}

// otherCPU is the host's busy CPU in % of one CPU minus the server's (its
// other nodes' included) and benchmatrix's own, never below 0 (the sources
// tick at 10 ms).
func otherCPU(prev, cur map[string]float64, dt float64) float64 {
	busy, ok := sumDelta(prev, cur, "os.cpu.user", "os.cpu.system")
	if !ok {
		return nan
	}
	server := processCPU("os.server.ticks")(prev, cur, dt)
	client := processCPU("os.client.ticks")(prev, cur, dt)
	nodes := peers(prev, cur, dt, "os.peers.ticks")
	if math.IsNaN(server) || math.IsNaN(client) || math.IsNaN(nodes) {
		return nan
	}
	return math.Max(100*busy/userHZ/dt-server-client-nodes, 0)
}

func otherIO(prev, cur map[string]float64, dt float64) float64 {
	dev, ok := sumDelta(prev, cur, "os.disk.read_sectors", "os.disk.write_sectors")
	if !ok {
		return nan
	}
	srv := serverIO(prev, cur, dt)
	nodes := peers(prev, cur, dt, "os.peers.io_bytes")
	if math.IsNaN(srv) || math.IsNaN(nodes) {
		return nan
	}
	return math.Max(dev*512/1024/dt-srv-nodes, 0)
}

// Contention summarises a cell's measured intervals (parts.Contention).
type Contention = parts.Contention

// QuietCPUPct is the host CPU, in % of one CPU, that other processes may
// use for the host to count as quiet (wait_quiet).
const QuietCPUPct = 25.0

// WaitQuiet waits, at most limit, until the host's CPU used by processes
// other than the server (pid; 0 if unknown) and this one stays below
// QuietCPUPct for three consecutive seconds. It returns how long it waited
// and whether the host became quiet; a cancelled ctx ends it early.
func WaitQuiet(ctx context.Context, limit time.Duration, pid int) (time.Duration, bool) {
	r := &osReader{proc: "/proc", serverPID: pid}
	start := time.Now()
	prev := map[string]float64{}
	r.read(prev)
	quiet := 0
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for time.Since(start) < limit {
		select {
		case <-ctx.Done():
			return time.Since(start), false
		case <-tick.C:
		}
		cur := map[string]float64{}
		r.read(cur)
		busy, ok := sumDelta(prev, cur, "os.cpu.user", "os.cpu.system")
		dt := time.Second.Seconds()
		other := 100 * busy / userHZ / dt
		if s := processCPU("os.server.ticks")(prev, cur, dt); !math.IsNaN(s) {
			other -= s
		}
		if c := processCPU("os.client.ticks")(prev, cur, dt); !math.IsNaN(c) {
			other -= c
		}
		prev = cur
		if ok && other < QuietCPUPct {
			quiet++
			if quiet >= 3 {
				return time.Since(start), true
			}
		} else {
			quiet = 0
		}
	}
	return time.Since(start), false
}
