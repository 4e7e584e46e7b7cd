package oltp

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/server"
)

// The prewarm on a small machine. sysbench's prewarm reads each table in
// one statement whose derived table (SELECT * ... LIMIT table_size) is
// materialised in an in-memory temporary table, after raising the session's
// tmp_table_size and max_heap_table_size to 2 GiB: each thread holds a whole
// table's rows in the server's memory at once. Under a memory limit smaller
// than that, the kernel kills the server and sysbench loses its connection.
// Ours reads in bounded chunks and materialises nothing, so the same limit
// does not touch it. The test measures both under one limit on one sandbox:
// what the server's group peaked at (page cache included), what it read
// from the disk, how long it took, and whether the connection survived.
//
// BENCHMATRIX_PREWARM_SHAPE="TABLES,ROWS,POOL,MEMORY" (e.g.
// "4,500000,128M,2G") measures another shape and reports without judging
// (a measurement, for docs/machines.md); by default the test uses a shape
// whose temporary tables cannot fit the limit and judges.
func TestPrewarmOnSmallMachine(t *testing.T) {
	bin := needSysbench(t)
	if os.Geteuid() != 0 {
		t.Skip("a memory limit needs root (cgroups)")
	}
	tables, rows, pool, memory := 4, 200000, "16M", "160M"
	measureOnly := false
	if s := os.Getenv("BENCHMATRIX_PREWARM_SHAPE"); s != "" {
		f := strings.Split(s, ",")
		if len(f) != 4 {
			t.Fatalf("BENCHMATRIX_PREWARM_SHAPE=%q: want TABLES,ROWS,POOL,MEMORY", s)
		}
		tables, _ = strconv.Atoi(f[0])
		rows, _ = strconv.Atoi(f[1])
		pool, memory, measureOnly = f[2], f[3], true
	}
	memLimit, err := catalog.ParseBytes(memory)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.FindBinary(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install a server: %v", err)
		}
		t.Skip(err)
	}
	ctx := context.Background()
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	sb, err := server.StartSandbox(sctx, server.SandboxConfig{Startup: []server.Setting{{Name: "innodb_buffer_pool_size", Value: pool}}})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Stop(context.Background()) })
	cfg, _ := testDB(t, sb, "sbtest")
	o := engineOptions(t, "oltp_read_write", map[string]string{"tables": strconv.Itoa(tables), "table_size": strconv.Itoa(rows), "threads": strconv.Itoa(tables)})
	start := time.Now()
	if err := Prepare(ctx, cfg, o, io.Discard); err != nil {
		t.Fatal(err)
	}
	t.Logf("prepared %d x %d rows in %.0f s", tables, rows, time.Since(start).Seconds())

	// small-cloud's limits, with the memory limit of the shape.
	lim := catalog.LimitSet{CPUs: 1, Memory: memLimit, DiskWriteIOPS: 3000, DiskReadIOPS: 3000, DiskWriteBPS: 125 << 20, DiskReadBPS: 125 << 20}
	t.Cleanup(func() { _, _ = sb.SetLimits(context.Background(), catalog.LimitSet{}) })
	var cg server.CgroupPaths
	// Each prewarm starts cold: the server restarted (an empty buffer
	// pool), the datadir dropped from the page cache; then the limits (a
	// restart lifts them, as the runner's does).
	cold := func() {
		t.Helper()
		if err := sb.Restart(ctx, sb.Startup()); err != nil {
			t.Fatal(err)
		}
		if _, err := sb.DropPageCache(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := sb.SetLimits(ctx, lim); err != nil {
			t.Fatal(err)
		}
		var ok bool
		if cg, ok = sb.Cgroup(); !ok {
			t.Fatal("the limited sandbox has no cgroup")
		}
		resetPeak(cg)
		_ = sb.MemoryKilled() // count from here
	}

	cold()
	reads0 := cgReads(cg)
	start = time.Now()
	ourErr := Prewarm(ctx, cfg, o, io.Discard)
	ours := time.Since(start)
	ourPeak, ourReads, ourKill := peakBytes(cg), cgReads(cg)-reads0, sb.MemoryKilled()
	t.Logf("benchmatrix oltp prewarm: %.1f s, err %v; the server's group peaked at %.0f MiB of %s; %d reads from the disk (%.0f/s); alive %v; %s",
		ours.Seconds(), ourErr, mib(ourPeak), memory, ourReads, float64(ourReads)/ours.Seconds(), sb.Alive(), ourKill)

	cold()
	reads0 = cgReads(cg)
	args := sysbenchArgs(cfg, "oltp_read_write", map[string]string{"tables": strconv.Itoa(tables), "table_size": strconv.Itoa(rows), "threads": strconv.Itoa(tables)}, "prewarm")
	start = time.Now()
	out, sbErr := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	theirs := time.Since(start)
	theirPeak, theirReads, theirKill := peakBytes(cg), cgReads(cg)-reads0, sb.MemoryKilled()
	// sysbench sees its connections close while the kernel is still
	// tearing the killed server down: the sandbox learns of the exit only
	// when the process is reaped (seen in CI: "alive true" right after a
	// counted OOM kill). Wait for that, boundedly, before judging.
	alive := sb.Alive()
	for deadline := time.Now().Add(30 * time.Second); alive && theirKill != "" && time.Now().Before(deadline); alive = sb.Alive() {
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("sysbench oltp_read_write prewarm: %.1f s, exit %v; the server's group peaked at %.0f MiB of %s; %d reads from the disk; alive %v; %s\n%s",
		theirs.Seconds(), sbErr, mib(theirPeak), memory, theirReads, alive, theirKill, lastLines(string(out), 6))
	if measureOnly {
		return
	}
	// The default shape: 4 threads each materialise a 200,000-row table
	// (about 34 MiB each in a MEMORY table, measured) beside a 16M pool, under 160M.
	if ourErr != nil || ourKill != "" {
		t.Errorf("our prewarm under memory = %s: %v %s", memory, ourErr, ourKill)
	}
	if ourPeak >= memLimit {
		t.Errorf("our prewarm peaked at the limit: %.0f MiB", mib(ourPeak))
	}
	// sysbench 1.0.20 exits 0 all the same (measured): the loss shows only
	// in its output and in the server's death.
	if !strings.Contains(string(out), "Lost connection") || theirKill == "" || alive {
		t.Errorf("sysbench's prewarm under memory = %s was expected to lose its connection to a server killed by the limit: exit %v, kill %q\n%s",
			memory, sbErr, theirKill, out)
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// resetPeak starts the group's memory peak again (v1
// memory.max_usage_in_bytes; v2's memory.peak cannot be reset before
// Linux 6.12: then the peak covers both prewarms and says so by being equal).
func resetPeak(cg server.CgroupPaths) {
	if !cg.V2 {
		_ = os.WriteFile(filepath.Join(cg.Dirs["memory"], "memory.max_usage_in_bytes"), []byte("0"), 0o644)
	}
}

func peakBytes(cg server.CgroupPaths) int64 {
	p := filepath.Join(cg.Dirs["memory"], "memory.max_usage_in_bytes")
	if cg.V2 {
		p = filepath.Join(cg.Dirs[""], "memory.peak")
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return -1
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// cgReads is the group's reads on every device (v1
// blkio.throttle.io_serviced "Read", v2 io.stat rios).
func cgReads(cg server.CgroupPaths) int64 {
	p, key := filepath.Join(cg.Dirs["blkio"], "blkio.throttle.io_serviced"), "Read"
	if cg.V2 {
		p, key = filepath.Join(cg.Dirs[""], "io.stat"), "rios="
	}
	f, err := os.Open(p)
	if err != nil {
		return -1
	}
	defer f.Close()
	var n int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		for i, x := range fs {
			if cg.V2 && strings.HasPrefix(x, key) {
				v, _ := strconv.ParseInt(strings.TrimPrefix(x, key), 10, 64)
				n += v
			}
			if !cg.V2 && x == key && i+1 < len(fs) {
				v, _ := strconv.ParseInt(fs[i+1], 10, 64)
				n += v
			}
		}
	}
	return n
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
