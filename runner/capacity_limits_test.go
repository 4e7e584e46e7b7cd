package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"benchmatrix/catalog"
	"benchmatrix/record"
	"benchmatrix/results"
	"benchmatrix/server"
)

// slowDiskManifest: one 1-thread b1e1 cell on the slow-disk preset (100
// write IOPS), binary log on, at a generous target; a small table (the
// disk's writes are the commits', not a large load's pages still being
// flushed).
const slowDiskManifest = `
[experiment]
name = "capacity-slow-disk"
duration = "15s"
warmup = "2s"
slo = "p90 < 2s"
slo_start = 8
slo_step = "5s"
slo_max_steps = 24
drain = false

[server]
machine = "slow-disk"

[server.config]
log_bin = "binlog"

[workload]
name = "oltp_insert"
threads = 1
tables = 1
table_size = 1000
auto_inc = false

[scenarios]
b1e1 = { sync_binlog = 1, innodb_flush_log_at_trx_commit = 1 }
`

// The slow-disk agreement. The model: a 1-thread b1e1 cell commits
// at most 1 / (fsyncs per transaction x fsync latency) per second, the
// fsync latency the disk self-check's. But the self-check's loop is a 4
// KiB O_DIRECT write and then its fsync, and under the cap the write waits
// too (here about 12 ms of each 27 ms loop); the server's fsyncs follow
// appends (the binary log grows, so its fsync also writes the file
// system's journal), and the pages InnoDB flushes share the cap. So the
// fsync model is only an upper bound, and the prediction the capacity is
// held to is the same model counted in device writes: at the cap the disk
// does the self-check's device writes per second (DeviceWriteIOPS), and a
// transaction costs cg_writes_trx of them (counted by the server's own
// cgroup in the run at the capacity), so the server commits at most
// DeviceWriteIOPS / cg_writes_trx per second.
//
// The tolerance, from the cell's own settings: the capacity lies between
// slowDiskLow and (1 + slo_precision) x (1 + L / T) times that prediction
// (L the target's latency bound, T the run's duration), and below the same
// bound times the fsync model's. A rate r above the rate the server
// serves, μ, builds within the window a wait of (r − μ) T / μ by its end,
// which stays under L while r < μ (1 + L/T): a full-length run cannot tell
// such a rate from one below μ, and the search's bracket adds its
// precision. Below slowDiskLow (0.6) something else than the disk would
// rule the latency: the capacity at a target sits below the saturation
// rate only by the queue the target allows (at p90 < 2s, a few percent),
// and the self-check is 3 s of one moment's shared disk.
const slowDiskLow = 0.6

// TestCapacitySlowDiskOnSandbox is issue 30's slow-disk done-when on a real
// sandbox: the capacity of a 1-thread b1e1 cell on the slow-disk preset
// agrees with what the disk self-check predicts (see slowDiskLow), every
// figure from the run itself: the fsyncs and device writes per transaction
// are the run at the capacity's (cells.csv, run.json's mechanism), the
// fsync latency and device writes per second the cell's disk_check. The
// curve plot is written (BENCHMATRIX_KEEP_PLOT=FILE keeps a copy).
func TestCapacitySlowDiskOnSandbox(t *testing.T) {
	needServer(t)
	needLimits(t, catalog.LimitSet{DiskWriteIOPS: 100})
	plan := planFrom(t, slowDiskManifest)
	dir := t.TempDir()
	run, err := Run(context.Background(), plan, Config{OutDir: dir, Start: sandboxStart, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if left := ourServers(t); len(left) > 0 {
		t.Fatalf("server processes left: %v", left)
	}
	if len(run.Cells) != 1 {
		t.Fatalf("%d cells", len(run.Cells))
	}
	c := run.Cells[0]
	if c.Status != record.CellOK || c.Capacity == nil || c.Capacity.Search == nil {
		t.Fatalf("cell: %s %s, capacity %+v", c.Status, c.Error, c.Capacity)
	}
	dc := c.DiskCheck
	if dc == nil || !(dc.FsyncAvgMs > 0) || !(dc.DeviceWriteIOPS > 0) {
		t.Fatalf("no disk self-check in the cell: %+v", dc)
	}
	rows := readCSV(t, filepath.Join(dir, results.CellsFile))
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	num := func(name string) float64 {
		i, ok := col[name]
		if !ok {
			t.Fatalf("cells.csv has no %s column", name)
		}
		v, err := strconv.ParseFloat(rows[1][i], 64)
		if err != nil {
			t.Fatalf("cells.csv %s = %q: %v", name, rows[1][i], err)
		}
		return v
	}
	writes, ok := c.Mechanism["cg_writes_trx"]
	if !ok || !(writes > 0) {
		t.Fatalf("no server writes per transaction (cg_writes_trx) in the cell: %v", c.Mechanism)
	}
	fsyncs := num("data_fsyncs_trx") + num("binlog_fsyncs_trx")
	capRate := num("capacity")
	fsyncModel := 1 / (fsyncs * dc.FsyncAvgMs / 1000)
	predicted := dc.DeviceWriteIOPS / writes
	ratio := capRate / predicted
	out := c.Capacity.Search
	t.Logf("slow disk: self-check %.0f write+fsync/s, %.0f device writes/s (%.2f per write+fsync), fsync avg %.1f ms (max %.1f); "+
		"the run at the capacity: %.2f data + %.2f binlog fsyncs/trx, %.2f device writes/trx (%.2f per fsync); "+
		"fsync model %.1f/s, writes model %.1f/s; capacity %s/s (%s, bracket %.3g-%.3g/s, %d steps, %.0f s): %.2fx the writes model, %.2fx the fsync model; %s",
		dc.LoopsPerSec, dc.DeviceWriteIOPS, dc.DeviceWriteIOPS/dc.LoopsPerSec, dc.FsyncAvgMs, dc.FsyncMaxMs,
		num("data_fsyncs_trx"), num("binlog_fsyncs_trx"), writes, writes/fsyncs,
		fsyncModel, predicted, strconv.FormatFloat(capRate, 'g', 4, 64), out.Status, out.Low, out.High, len(out.Steps), c.Capacity.SearchSeconds,
		ratio, capRate/fsyncModel, c.Capacity.Text())
	cell := plan.Cells[0]
	T := cell.Workload.Common().Time
	high := (1 + cell.Policy.SLO.Config(T).Precision) * (1 + c.Capacity.SLO.Limit.Seconds()/T.Seconds())
	t.Logf("tolerance %.2fx-%.2fx (precision %.2f, %s over %s)", slowDiskLow, high, cell.Policy.SLO.Config(T).Precision, c.Capacity.SLO.Limit, T)
	if !(ratio >= slowDiskLow && ratio <= high) {
		t.Errorf("capacity %.3g/s is %.2fx what the disk's writes allow (%.3g/s), want %.2fx-%.2fx", capRate, ratio, predicted, slowDiskLow, high)
	}
	if capRate > high*fsyncModel {
		t.Errorf("capacity %.3g/s is above what the fsyncs allow (%.3g/s)", capRate, fsyncModel)
	}
	if _, err := os.Stat(filepath.Join(dir, "plots", "capacity-b1e1.png")); err != nil {
		t.Errorf("curve plot: %v", err)
	}
	if keep := os.Getenv("BENCHMATRIX_KEEP_PLOT"); keep != "" {
		b, err := os.ReadFile(filepath.Join(dir, "plots", "capacity-b1e1.png"))
		if err == nil {
			err = os.WriteFile(keep, b, 0o644)
		}
		if err != nil {
			t.Log(err)
		}
	}
}

// reloadManifest: one cell under a write and a read IOPS cap, a CPU quota
// and a memory limit, searched at a generous target in a few short steps;
// 100,000 rows, so that the data is saved as a snapshot and the search's
// reload restores it, restarting the server, before the run at the
// capacity.
const reloadManifest = `
[experiment]
name = "capacity-reload"
duration = "3s"
warmup = "1s"
slo = "p95 < 1s"
slo_start = 20
slo_step = "1s"
slo_max_steps = 3
slo_retests = 0
drain = false

[server.config]
disk_write_iops = 1000
disk_read_iops = 2000
cpus = 1
memory = "1G"

[workload]
name = "oltp_insert"
threads = 1
tables = 1
table_size = 100000
auto_inc = true

[scenarios]
b0e0 = { sync_binlog = 0, innodb_flush_log_at_trx_commit = 0 }
`

// TestCapacityLimitsAfterReload: the cell's limits (write and read IOPS
// caps, CPU quota, memory) are in force on the run at the capacity, after
// the search's reload restored the data's snapshot and so restarted the
// server (a sandbox lifts its limits before every stop). They are read
// from the server process's own /proc/PID/cgroup and the group's files,
// when the runner says it measures the capacity and again when it judges
// that run, with the same server process.
func TestCapacityLimitsAfterReload(t *testing.T) {
	needServer(t)
	want := catalog.LimitSet{DiskWriteIOPS: 1000, DiskReadIOPS: 2000, CPUs: 1, Memory: 1 << 30}
	needLimits(t, want)
	plan := planFrom(t, reloadManifest)
	var current atomic.Pointer[server.Sandbox]
	lw := &limitsWatch{t: t, cur: &current, want: want}
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: trackedSandboxes(&current), Log: lw})
	if err != nil {
		t.Fatal(err)
	}
	if left := ourServers(t); len(left) > 0 {
		t.Fatalf("server processes left: %v", left)
	}
	if len(run.Cells) != 1 || run.Cells[0].Status != record.CellOK {
		t.Fatalf("cells: %+v", run.Cells)
	}
	lw.mu.Lock()
	checks, problems := lw.checks, lw.problems
	lw.mu.Unlock()
	log := strings.Join(lw.lines(), "\n")
	if run.Cells[0].Data != "restored" || !strings.Contains(log, "loading it again for the run at the capacity") {
		t.Fatalf("the search did not reload the data by restoring its snapshot (data %q): the check would not follow a restart", run.Cells[0].Data)
	}
	if len(checks) != 2 {
		t.Errorf("the limits were read %d times, want 2 (before and after the run at the capacity)", len(checks))
	} else if checks[0] != checks[1] {
		t.Errorf("the run at the capacity began on server process %d and ended on %d", checks[0], checks[1])
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// limitsWatch is the run's log: it passes every line to the test's log,
// and when the runner says it measures the capacity (after the search's
// reload) and when it judges that run, reads the limits the server process
// runs under.
type limitsWatch struct {
	t    *testing.T
	cur  *atomic.Pointer[server.Sandbox]
	want catalog.LimitSet

	mu       sync.Mutex
	log      []string
	checks   []int // the server's PID at each check
	problems []string
}

func (w *limitsWatch) Write(p []byte) (int, error) {
	line := strings.TrimRight(string(p), "\n")
	w.t.Log(line)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.log = append(w.log, line)
	if strings.Contains(line, "measuring it at full length") || (len(w.checks) == 1 && strings.HasPrefix(strings.TrimSpace(line), "at ") && strings.Contains(line, "/s for ")) {
		pid, probs := limitsOf(w.cur.Load(), w.want)
		w.checks = append(w.checks, pid)
		for _, pr := range probs {
			w.problems = append(w.problems, fmt.Sprintf("check %d (%q): %s", len(w.checks), strings.TrimSpace(line), pr))
		}
	}
	return len(p), nil
}

func (w *limitsWatch) lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.log...)
}

// limitsOf reads the limits sb's server process runs under: the cgroup
// of each controller from /proc/PID/cgroup, which must be the sandbox's
// group, and the limit files of that group (cgroup v1 or v2).
func limitsOf(sb *server.Sandbox, want catalog.LimitSet) (int, []string) {
	if sb == nil || !sb.Alive() {
		return 0, []string{"no running sandbox"}
	}
	pid := sb.PID()
	paths, ok := sb.Cgroup()
	if !ok {
		return pid, []string{"the sandbox has no cgroup"}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return pid, []string{err.Error()}
	}
	in := map[string]string{} // controller ("" for v2) -> the process's group
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 {
			continue
		}
		for _, ctrl := range strings.Split(f[1], ",") {
			in[ctrl] = f[2]
		}
	}
	var probs []string
	file := func(ctrl, name string) string {
		dir := paths.Dirs[ctrl]
		if dir == "" {
			probs = append(probs, fmt.Sprintf("the sandbox's group has no %q controller", ctrl))
			return ""
		}
		if !strings.HasSuffix(dir, in[ctrl]) || in[ctrl] == "/" {
			probs = append(probs, fmt.Sprintf("server process %d is in %q of %q, not in the sandbox's group %s", pid, in[ctrl], ctrl, dir))
		}
		v, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			probs = append(probs, err.Error())
		}
		return strings.TrimSpace(string(v))
	}
	expect := func(what, got, wantS string) {
		if got != wantS {
			probs = append(probs, fmt.Sprintf("%s: %q, want %q", what, got, wantS))
		}
	}
	deviceLimit := func(content string) map[string]string {
		out := map[string]string{}
		for _, l := range strings.Split(content, "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == paths.Device {
				for _, kv := range f[1:] {
					if k, v, ok := strings.Cut(kv, "="); ok {
						out[k] = v
					} else {
						out["v1"] = kv
					}
				}
			}
		}
		return out
	}
	quota := strconv.FormatInt(int64(want.CPUs*100000+0.5), 10)
	if !paths.V2 {
		expect("blkio.throttle.write_iops_device", deviceLimit(file("blkio", "blkio.throttle.write_iops_device"))["v1"], strconv.FormatInt(want.DiskWriteIOPS, 10))
		expect("blkio.throttle.read_iops_device", deviceLimit(file("blkio", "blkio.throttle.read_iops_device"))["v1"], strconv.FormatInt(want.DiskReadIOPS, 10))
		expect("cpu.cfs_quota_us", file("cpu", "cpu.cfs_quota_us"), quota)
		expect("memory.limit_in_bytes", file("memory", "memory.limit_in_bytes"), strconv.FormatInt(want.Memory, 10))
		return pid, probs
	}
	io := deviceLimit(file("", "io.max"))
	expect("io.max wiops", io["wiops"], strconv.FormatInt(want.DiskWriteIOPS, 10))
	expect("io.max riops", io["riops"], strconv.FormatInt(want.DiskReadIOPS, 10))
	expect("cpu.max", file("", "cpu.max"), quota+" 100000")
	expect("memory.max", file("", "memory.max"), strconv.FormatInt(want.Memory, 10))
	return pid, probs
}
