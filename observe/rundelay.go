package observe

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Run delay: the time the server's and benchmatrix's threads spent
// runnable but waiting for a CPU (the second field of each thread's
// /proc/PID/task/TID/schedstat, in ns). It tells a stall of the server (its
// threads wait on a lock or the disk: they sleep, no run delay) from the
// host taking the CPUs away (they are ready to run and wait: a large run
// delay), which the CPU shares alone cannot: in both, other processes fill
// the CPUs the load leaves.

// readRunDelay sums the run delay of every thread of the process at dir
// (a /proc/PID directory), and reports whether any was read.
func readRunDelay(dir string) (float64, bool) {
	tasks, err := os.ReadDir(filepath.Join(dir, "task"))
	if err != nil {
		return 0, false
	}
	var sum float64
	read := false
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, "task", t.Name(), "schedstat"))
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		if ns, err := strconv.ParseFloat(f[1], 64); err == nil {
			sum += ns
			read = true
		}
	}
	return sum, read
}

// readRunDelays stores the server's and this process's run delay.
func (r *osReader) readRunDelays(vals map[string]float64) {
	if r.serverPID > 0 {
		if ns, ok := readRunDelay(filepath.Join(r.proc, strconv.Itoa(r.serverPID))); ok {
			vals["os.server.run_delay_ns"] = ns
		}
	}
	if ns, ok := readRunDelay(filepath.Join(r.proc, "self")); ok {
		vals["os.client.run_delay_ns"] = ns
	}
}

// runDelayPct is the run delay added in the interval, % of one CPU (200 %
// means two threads waited the whole interval). A thread that ended takes
// its run delay with it: a decrease leaves the interval empty.
func runDelayPct(key string) func(prev, cur map[string]float64, dt float64) float64 {
	return func(prev, cur map[string]float64, dt float64) float64 {
		if key == "os.server.run_delay_ns" && prev["os.server.pid"] != cur["os.server.pid"] {
			return nan
		}
		d, ok := delta(prev, cur, key)
		if !ok || dt <= 0 {
			return nan
		}
		return 100 * d / 1e9 / dt
	}
}

// Starved marks the intervals in which the host took the CPUs from the
// load: the server's and benchmatrix's threads together waited to run for
// at least one CPU's worth of the interval and at least twice their median
// over the rows. Measured on this 2-core machine beside four other jobs:
// ordinary seconds 70-130 % together, the seconds where tps fell to near
// zero 220-380 %; a server stalled on a lock sleeps (little run delay).
// Rows without the columns are never starved.
func Starved(rows []Row) []bool {
	out := make([]bool, len(rows))
	sums := make([]float64, len(rows))
	for i, r := range rows {
		sums[i] = r.Get("run_delay_server_pct") + r.Get("run_delay_client_pct")
	}
	med := median(finite(sums))
	if !(med > 0) {
		return out
	}
	for i, v := range sums {
		out[i] = v >= 100 && v >= 2*med // false for NaN
	}
	return out
}
