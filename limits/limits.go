// Package limits is the cell's resource limits in its lifecycle: the
// server is put under them (restarted first when its memory limit
// shrinks), what is in force is read back onto the cell, the disk
// self-check runs once per disk limit, and benchmatrix's own threads are
// pinned to client_cpus for the cell.
package limits

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"benchmatrix/catalog"
	"benchmatrix/experiment"
	"benchmatrix/lifecycle"
	"benchmatrix/record"
	"benchmatrix/server"
)

// DiskCheckDuration is how long the disk self-check writes.
const DiskCheckDuration = 3 * time.Second

// Hook is the limits of one run: what is in force on the running server
// is kept across cells (New).
type Hook struct {
	applied catalog.LimitSet // on the running server
	srv     server.Server    // the server they were applied to
	checks  map[string]*server.DiskCheck
}

// New is the limits of a run.
func New() *Hook { return &Hook{} }

// Feature implements lifecycle.Hook.
func (*Hook) Feature() string { return "limits" }

// CheckSupport refuses, before any server starts, limits this machine
// cannot apply (not root, a controller missing): a
// server.LimitsUnsupportedError, exit 2, naming it.
func CheckSupport(plan *experiment.Plan) error {
	var all catalog.LimitSet
	for _, c := range plan.Cells {
		all = all.Merge(c.Limits)
	}
	if all.Server().IsZero() {
		return nil
	}
	if !catalog.Provider(plan.Manifest.Server.Provider).Caps.Has(catalog.Limits) {
		return nil // the plan refused limits for a provider without them
	}
	return server.CheckLimitSupport(all)
}

// Limits puts the server under the cell's limits, restarting it first
// when the change says its memory limit shrinks, or when the limit in
// force (which a failed cell may have left other than the plan expected)
// is larger than the cell's; it reads them back into the cell, runs the
// disk self-check once per disk limit, and pins benchmatrix's own threads
// to client_cpus; the returned function unpins them.
func (h *Hook) Limits(ctx context.Context, cell lifecycle.Cell) (func(), error) {
	c, res, srv, log := cell.Planned(), cell.Record(), cell.Server(), cell.Log()
	want := c.Limits
	ch := cell.Change()
	res.Change.Limits = ch.Limits
	lim, ok := srv.(server.Limiter)
	if !ok {
		if !want.IsZero() {
			return nil, fmt.Errorf("the %s server cannot take resource limits", cell.Plan().Manifest.Server.Provider)
		}
		return nil, nil
	}
	if h.srv != srv {
		h.srv, h.applied = srv, catalog.LimitSet{}
	}
	sl := want.Server()
	if sl != h.applied.Server() || !sl.IsZero() {
		restart := ch.MemoryRestart()
		if _, shrink := experiment.LimitChanges(h.applied, sl); shrink && !restart && !res.Change.Start {
			restart = true
			res.Change.Overrides = append(res.Change.Overrides, fmt.Sprintf(
				"restart: the memory limit in force (%s) is not the plan's; the cell's %s is smaller",
				memText(h.applied.Memory), catalog.FormatBytes(sl.Memory)))
		}
		if restart && h.applied.Memory != sl.Memory {
			// A cgroup cannot take back memory the server holds without
			// reclaiming or killing: start the server again inside the
			// smaller limit (the restart sets the cell's settings again).
			fmt.Fprintf(log, "    restart: memory limit shrinks to %s\n", catalog.FormatBytes(sl.Memory))
			if err := cell.Restart(ctx); err != nil {
				return nil, fmt.Errorf("restart for a smaller memory limit: %w", err)
			}
			res.Change.Restart = append(res.Change.Restart, experiment.Param{Name: record.MemoryKey, Value: want.Get(record.MemoryKey)})
		}
		in, err := lim.SetLimits(ctx, sl)
		if err != nil {
			var ue *server.LimitsUnsupportedError
			if errors.As(err, &ue) {
				return nil, ue // exit 2
			}
			return nil, err
		}
		h.applied = sl
		if !sl.IsZero() {
			fmt.Fprintf(log, "    limits %s (%s, read back: %v)\n", sl, in.Mechanism, in.ReadBack)
		}
		in.Requested = want
		res.Limits = &in
		if sl.Disk() {
			res.DiskCheck = h.diskCheck(ctx, cell, lim, sl)
		}
	}
	if want.ClientCPUs == "" {
		return nil, nil
	}
	unpin, err := PinProcess(want.ClientCPUs)
	if err != nil {
		return nil, fmt.Errorf("pin the load generator to CPUs %s: %w", want.ClientCPUs, err)
	}
	if res.Limits == nil {
		res.Limits = &server.LimitsInForce{Requested: want, Mechanism: "sched_setaffinity"}
	}
	return unpin, nil
}

func memText(n int64) string {
	if n == 0 {
		return "none"
	}
	return catalog.FormatBytes(n)
}

// diskCheck runs the self-check once per disk limit and keeps its result.
func (h *Hook) diskCheck(ctx context.Context, cell lifecycle.Cell, lim server.Limiter, l catalog.LimitSet) *server.DiskCheck {
	key := fmt.Sprintf("%d/%d/%d/%d", l.DiskWriteIOPS, l.DiskReadIOPS, l.DiskWriteBPS, l.DiskReadBPS)
	if dc, ok := h.checks[key]; ok {
		return dc
	}
	if h.checks == nil {
		h.checks = map[string]*server.DiskCheck{}
	}
	dc, err := lim.CheckDisk(ctx, DiskCheckDuration)
	if err != nil {
		fmt.Fprintf(cell.Log(), "    disk self-check: %v\n", err)
		return nil
	}
	fmt.Fprintf(cell.Log(), "    disk self-check: %.0f device writes/s (cap %d), %.0f write+fsync/s, fsync avg %.1f ms\n",
		dc.DeviceWriteIOPS, dc.CapWriteIOPS, dc.LoopsPerSec, dc.FsyncAvgMs)
	h.checks[key] = &dc
	return &dc
}

// PinProcess pins every thread of this process to the CPUs of list and
// returns the function that puts each thread's previous mask back.
//
// sched_setaffinity changes one thread: pinning the calling goroutine's
// thread would leave the Go runtime's other threads (where the workers'
// goroutines run) free. So every thread in /proc/self/task is pinned, and
// the listing is repeated until no new thread appears: a thread the runtime
// creates later is cloned from a pinned one and inherits its mask.
func PinProcess(list string) (func(), error) {
	cpus, err := catalog.ParseCPUList(list)
	if err != nil {
		return nil, err
	}
	var set unix.CPUSet
	set.Zero()
	for _, c := range cpus {
		set.Set(c)
	}
	old := map[int]unix.CPUSet{}
	for round := 0; round < 10; round++ {
		tids, err := threadIDs()
		if err != nil {
			return nil, err
		}
		fresh := 0
		for _, tid := range tids {
			if _, done := old[tid]; done {
				continue
			}
			var prev unix.CPUSet
			if err := unix.SchedGetaffinity(tid, &prev); err != nil {
				continue // the thread exited
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue
				}
				restoreAffinity(old)
				return nil, err
			}
			old[tid] = prev
			fresh++
		}
		if fresh == 0 {
			break
		}
	}
	return func() { restoreAffinity(old) }, nil
}

func restoreAffinity(old map[int]unix.CPUSet) {
	// Threads born while pinned inherited the pinned mask: give them the
	// mask the process had (that of any thread pinned first).
	var base *unix.CPUSet
	for _, m := range old {
		m := m
		base = &m
		break
	}
	tids, _ := threadIDs()
	for _, tid := range tids {
		if m, ok := old[tid]; ok {
			_ = unix.SchedSetaffinity(tid, &m)
		} else if base != nil {
			_ = unix.SchedSetaffinity(tid, base)
		}
	}
}

func threadIDs() ([]int, error) {
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(entries))
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, n)
		}
	}
	return out, nil
}
