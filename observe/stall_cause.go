package observe

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
)

// The likely cause of each stall: which mechanisms' counters moved in the
// stall's seconds against the seconds around it (up to causeAround
// seconds before and after, outside every stall). MovedAtOnsets lists any
// column that moved at the onsets; LikelyCauses judges each stall by the
// mechanisms a stall to zero has on a MySQL-family server, each with its
// evidence, and says so when none moved:
//
//   - checkpoint age near the log's capacity (InnoDB then flushes
//     synchronously and commits wait), and the flushing it forces: pages
//     flushed per second, dirty pages, waits for a free page;
//   - the device's latency (await, what an fsync waits for);
//   - IO at a cap: the cgroup's reads or writes at a disk limit, or the
//     device busy all the time (util);
//   - lock waits: InnoDB row lock waits, or the server idle (no CPU, no
//     redo) while its sessions are inside statements: a table, metadata or
//     global lock, which no row lock counter sees;
//   - Galera flow control (nodeK.wsrep_flow_control_paused columns);
//   - the server's CPU: a quota throttling it, or more CPU than around.
//
// It is a pure function of the rows: the runner adds what it knows of the
// server (the redo log's capacity, the disk limits) in CauseContext.

// causeAround is how many seconds on each side of a stall are its
// surroundings.
const causeAround = 10

// CauseContext is what the judge needs beyond the sampled rows.
type CauseContext struct {
	// LogCapacityKB is the redo log's capacity (LogCapacityKB); 0 unknown.
	LogCapacityKB float64
	// Disk limits on the server (0: none): IOs and KiB per second.
	WriteIOPS, ReadIOPS, WriteKBps, ReadKBps float64
}

// StallCause is the likely cause of one stall.
type StallCause struct {
	// Start and End are the stall's seconds in the measured window
	// [Start, End), from 0.
	Start, End int
	// Causes name the mechanisms that moved, strongest evidence first,
	// each with it ("checkpoint age at 92% of the log capacity"); empty
	// when nothing did.
	Causes []string
}

// Text is the cause as the summary says it.
func (c StallCause) Text() string {
	when := fmt.Sprintf("stall at %d-%d s", c.Start, c.End)
	if c.End-c.Start == 1 {
		when = fmt.Sprintf("stall at %d s", c.Start)
	}
	if len(c.Causes) == 0 {
		return when + ": cause not visible in the sampled counters"
	}
	return when + ": likely cause: " + strings.Join(c.Causes, "; ")
}

// LikelyCauses judges every episode; names[j] names rows' column j (the
// server's columns, Columns(), then any node columns).
func LikelyCauses(names []string, rows []Row, episodes []Episode, cx CauseContext) []StallCause {
	if len(rows) == 0 || len(episodes) == 0 {
		return nil
	}
	inEpisode := inEpisodes(len(rows), episodes)
	idx := map[string]int{}
	for j, n := range names {
		if n != "" {
			idx[n] = j
		}
	}
	var out []StallCause
	for _, ep := range episodes {
		if ep.Start < 0 || ep.Start >= len(rows) {
			continue
		}
		end := min(ep.End, len(rows))
		var around []int
		for i := max(ep.Start-causeAround, 0); i < min(end+causeAround, len(rows)); i++ {
			if !inEpisode[i] {
				around = append(around, i)
			}
		}
		var in []int
		for i := ep.Start; i < end; i++ {
			in = append(in, i)
		}
		j := judge{rows: rows, idx: idx, in: in, around: around, cx: cx}
		out = append(out, StallCause{Start: ep.Start, End: end, Causes: j.causes(names)})
	}
	return out
}

// judge weighs one stall's seconds (in) against those around it.
type judge struct {
	rows       []Row
	idx        map[string]int
	in, around []int
	cx         CauseContext
}

// values of column name over the rows at is; nil when it has none.
func (j judge) values(name string, at []int) []float64 {
	c, ok := j.idx[name]
	if !ok {
		return nil
	}
	var out []float64
	for _, i := range at {
		if c < len(j.rows[i].Values) {
			out = append(out, j.rows[i].Values[c])
		}
	}
	return finite(out)
}

// medians of a column in the stall and around it; ok when both exist.
func (j judge) medians(name string) (in, around float64, ok bool) {
	a, b := j.values(name, j.in), j.values(name, j.around)
	if len(a) == 0 || len(b) == 0 {
		return 0, 0, false
	}
	return median(a), median(b), true
}

// peak is a column's largest value in the stall.
func (j judge) peak(name string) (float64, bool) {
	v := j.values(name, j.in)
	if len(v) == 0 {
		return 0, false
	}
	m := v[0]
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m, true
}

// rose reports whether a column's stall median is at least factor times
// its median around (from zero: at least floor), with the evidence.
func (j judge) rose(name, label string, factor, floor float64) (string, float64, bool) {
	in, around, ok := j.medians(name)
	if !ok || in < floor {
		return "", 0, false
	}
	if around <= 0 {
		return fmt.Sprintf("%s %s in the stall seconds (0 around)", label, num(in)), math.Inf(1), true
	}
	if r := in / around; r >= factor {
		return fmt.Sprintf("%s %s the median around (%s → %s)", label, times(r), num(around), num(in)), r, true
	}
	return "", 0, false
}

// fellTo reports whether a column's lowest value in the stall is at most
// 1/factor of its median around.
func (j judge) fellTo(name string, factor float64) (low, around float64, ok bool) {
	v, a := j.values(name, j.in), j.values(name, j.around)
	if len(v) == 0 || len(a) == 0 {
		return 0, 0, false
	}
	low, around = v[0], median(a)
	for _, x := range v {
		low = math.Min(low, x)
	}
	return low, around, around > 0 && low <= around/factor
}

// times prints a ratio: "8x", "2.5x".
func times(r float64) string {
	if r >= 10 {
		return fmt.Sprintf("%.0fx", r)
	}
	return fmt.Sprintf("%.1fx", r)
}

// evidence is one mechanism's finding; strength orders them.
type evidence struct {
	text     string
	strength float64
}

func (j judge) causes(names []string) []string {
	var found []evidence
	add := func(text string, strength float64) { found = append(found, evidence{text, strength}) }

	// Checkpoint age and the flushing it forces.
	if age, ok := j.peak("checkpoint_age_kb"); ok && j.cx.LogCapacityKB > 0 {
		if pct := 100 * age / j.cx.LogCapacityKB; pct >= 75 {
			add(fmt.Sprintf("checkpoint age at %.0f%% of the log capacity (%s of %s KiB)", pct, num(age), num(j.cx.LogCapacityKB)), 50+pct)
		}
	} else if t, r, ok := j.rose("checkpoint_age_kb", "checkpoint age", 2, 1); ok {
		add(t, r)
	}
	if t, r, ok := j.rose("pages_flushed_s", "pages flushed", 2, 10); ok {
		add(t, r)
	}
	if t, r, ok := j.rose("bp_wait_free_s", "waits for a free buffer-pool page", 2, 1); ok {
		add(t, 10+r)
	}
	// The device's latency. Under 20 ms an IO slows commits but does not
	// stop a load for seconds: a table lock's stall (no IO but the
	// background threads' few) once showed 16 ms in its first second,
	// 12x the median around, and ranked above the lock that held it.
	if t, r, ok := j.rose("disk_await_ms", "device await (ms)", 2, 20); ok {
		// The device is shared: say when other processes' IO rose with it.
		if o, _, ok := j.rose("disk_other_kb_s", "other processes' IO on the device (KiB/s)", 2, 1024); ok {
			t += ", with " + o
		}
		add(t, r)
	}
	// IO at a cap.
	for _, c := range []struct {
		col, what string
		limit     float64
	}{
		{"cg_writes_s", "write IOs/s", j.cx.WriteIOPS},
		{"cg_reads_s", "read IOs/s", j.cx.ReadIOPS},
		{"cg_write_kb_s", "write KiB/s", j.cx.WriteKBps},
		{"cg_read_kb_s", "read KiB/s", j.cx.ReadKBps},
	} {
		if c.limit <= 0 {
			continue
		}
		// At the cap: within 10 % under it to 20 % over (a second's
		// counts straddle the throttle's own periods); far above it, the
		// cap was not what held the server.
		atCap := func(v []float64) int {
			n := 0
			for _, x := range v {
				if x >= 0.9*c.limit && x <= 1.2*c.limit {
					n++
				}
			}
			return n
		}
		v, a := j.values(c.col, j.in), j.values(c.col, j.around)
		if at := atCap(v); len(v) > 0 && 2*at >= len(v) {
			text := fmt.Sprintf("IO at the cap: the server's %s at %s of %s in %d of %d stall seconds", c.what, num(median(v)), num(c.limit), at, len(v))
			strength := 100.0
			if len(a) > 0 && 2*atCap(a) >= len(a) {
				// At the cap around the stall too: it binds throughout,
				// and what moved in the stall explains it better.
				text += fmt.Sprintf(" (and in %d of %d seconds around: the cap binds throughout)", atCap(a), len(a))
				strength = 1.5
			}
			add(text, strength)
		}
	}
	if in, around, ok := j.medians("disk_util_pct"); ok && in >= 90 && around < 60 {
		add(fmt.Sprintf("the device busy %.0f%% of the stall seconds (%.0f%% around)", in, around), 5)
	}
	// Lock waits.
	if t, r, ok := j.rose("row_lock_current_waits", "row lock waits", 2, 1); ok {
		add(t, 20+r)
	} else if t, r, ok := j.rose("row_lock_waits_s", "row lock waits/s", 2, 1); ok {
		add(t, 20+r)
	}
	// Flow control, on any node.
	for _, n := range names {
		if n == "wsrep_flow_control_paused" || strings.HasSuffix(n, ".wsrep_flow_control_paused") {
			if in, around, ok := j.medians(n); ok && in >= 0.2 && in >= 2*around {
				add(fmt.Sprintf("flow control: %s %.0f%% of the stall seconds (%.0f%% around)", n, 100*in, 100*around), 40+in*10)
			}
		}
	}
	// The server's CPU.
	if t, r, ok := j.rose("cg_cpu_throttled_ms_s", "CPU quota throttling (ms/s)", 2, 50); ok {
		add(t, 30+r)
	}
	if in, around, ok := j.medians("cpu_server_pct"); ok && around > 0 && in >= 1.5*around && in >= 50 {
		add(fmt.Sprintf("the server's CPU %.0f%% (%.0f%% around)", in, around), in/around)
	}
	// The server idle while its sessions are inside statements: a lock no
	// row counter sees (table, metadata, global read lock). Only when no
	// IO mechanism moved: an idle CPU waiting on a capped disk is the cap's.
	// Judged at the stall's lowest second, as a stall's last second is
	// often half recovered.
	if len(found) == 0 {
		cpuIn, cpuAround, idle := j.fellTo("cpu_server_pct", 3)
		io := "redo KiB/s"
		ioIn, ioAround, quiet := j.fellTo("redo_kb_s", 2)
		if !quiet {
			io = "device IOs/s"
			ioIn, ioAround, quiet = j.fellTo("disk_iops", 2)
		}
		// threads_running counts the sampler's own query: 2 or more is a
		// workload session inside a statement, waiting (a stalled client
		// would leave the server with the sampler alone).
		runPeak, havePeak := j.peak("threads_running")
		_, runAround, haveRunning := j.medians("threads_running")
		if idle && quiet && havePeak && haveRunning && runPeak >= 2 {
			add(fmt.Sprintf("a lock the row lock counters do not see (table, metadata or global): the server idle (CPU %.0f%% → %.0f%%, %s %s → %s) with %s sessions inside statements (%s around)",
				cpuAround, cpuIn, io, num(ioAround), num(ioIn), num(runPeak), num(runAround)), 1)
		}
	}
	// Strongest first.
	for a := 1; a < len(found); a++ {
		for b := a; b > 0 && found[b].strength > found[b-1].strength; b-- {
			found[b], found[b-1] = found[b-1], found[b]
		}
	}
	out := make([]string, len(found))
	for i, e := range found {
		out[i] = e.text
	}
	return out
}

// LogCapacityKB reads the redo log's capacity in KiB: MySQL 8.0.30+'s
// innodb_redo_log_capacity, else innodb_log_file_size times
// innodb_log_files_in_group where the server has it (MariaDB 10.5+ has one
// file).
func LogCapacityKB(ctx context.Context, db *sql.DB) (float64, error) {
	var v sql.NullFloat64
	if err := db.QueryRowContext(ctx, "SELECT @@innodb_redo_log_capacity").Scan(&v); err == nil && v.Valid && v.Float64 > 0 {
		return v.Float64 / 1024, nil
	}
	var size sql.NullFloat64
	if err := db.QueryRowContext(ctx, "SELECT @@innodb_log_file_size").Scan(&size); err != nil {
		return 0, fmt.Errorf("innodb_log_file_size: %w", err)
	}
	files := 1.0
	var n sql.NullFloat64
	if err := db.QueryRowContext(ctx, "SELECT @@innodb_log_files_in_group").Scan(&n); err == nil && n.Valid && n.Float64 > 0 {
		files = n.Float64
	}
	return size.Float64 * files / 1024, nil
}
