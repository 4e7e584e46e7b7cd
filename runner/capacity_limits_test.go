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
duration = "20s"
warmup = "2s"
slo = "p90 < 2s"
slo_start = 8
slo_step = "5s"
slo_max_steps = 14
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

// The tolerance of the slow-disk agreement: the capacity found lies between
// slowDiskLow and slowDiskHigh times what the disk self-check predicts, 1 /
// (fsyncs per transaction x fsync latency). Above 1.1x the server would
// complete transactions faster than its fsyncs allow (the 10 % is the
// search's precision); below 0.6x something else than the commits' fsyncs
// rules the latency (the server's other writes share the cap: page
// flushes, the doublewrite buffer; and the self-check is 3 s of one
// moment's disk).
const (
	slowDiskLow  = 0.6
	slowDiskHigh = 1.1
)

// TestCapacitySlowDiskOnSandbox is issue 30's slow-disk done-when on a real
// sandbox: the capacity of a 1-thread b1e1 cell on the slow-disk preset
// agrees with the disk self-check's prediction, 1 / ((data + binlog fsyncs
// per transaction) x the self-check's fsync latency), within
// [slowDiskLow, slowDiskHigh], every figure from the run itself (the
// fsyncs per transaction are the run at the capacity's, from cells.csv;
// the fsync latency the cell's disk_check). The curve plot is written.
func TestCapacitySlowDiskOnSandbox(t *testing.T) {
	needServer(t)
	if err := server.CheckLimitSupport(catalog.LimitSet{DiskWriteIOPS: 100}); err != nil {
		if os.Getenv("CI") != "" && os.Geteuid() == 0 {
			t.Fatal(err)
		}
		t.Skip(err)
	}
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
	if c.Status != results.CellOK || c.Capacity == nil || c.Capacity.Search == nil {
		t.Fatalf("cell: %s %s, capacity %+v", c.Status, c.Error, c.Capacity)
	}
	dc := c.DiskCheck
	if dc == nil || !(dc.FsyncAvgMs > 0) {
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
	fsyncs := num("data_fsyncs_trx") + num("binlog_fsyncs_trx")
	capRate := num("capacity")
	predicted := 1 / (fsyncs * dc.FsyncAvgMs / 1000)
	ratio := capRate / predicted
	out := c.Capacity.Search
	t.Logf("slow disk: self-check %.0f write+fsync/s, fsync avg %.1f ms (max %.1f); %.2f data + %.2f binlog fsyncs/trx; predicted %.1f/s; capacity %s/s (%s, bracket %.3g-%.3g/s, %d steps, %.0f s); ratio %.2f; run at it: %s",
		dc.LoopsPerSec, dc.FsyncAvgMs, dc.FsyncMaxMs, num("data_fsyncs_trx"), num("binlog_fsyncs_trx"), predicted,
		strconv.FormatFloat(capRate, 'g', 4, 64), out.Status, out.Low, out.High, len(out.Steps), c.Capacity.SearchSeconds, ratio, c.Capacity.Text())
	if !(ratio >= slowDiskLow && ratio <= slowDiskHigh) {
		t.Errorf("capacity %.3g/s is %.2fx the disk's prediction %.3g/s, want %.1fx-%.1fx", capRate, ratio, predicted, slowDiskLow, slowDiskHigh)
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
	if err := server.CheckLimitSupport(want); err != nil {
		if os.Getenv("CI") != "" && os.Geteuid() == 0 {
			t.Fatal(err)
		}
		t.Skip(err)
	}
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
	if len(run.Cells) != 1 || run.Cells[0].Status != results.CellOK {
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
