package runner

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
	"benchmatrix/record"
	"benchmatrix/server"
)

// runnerLimits is what the runner knows of the limits in force.
type runnerLimits struct {
	applied catalog.LimitSet // on the running server
	srv     server.Server    // the server they were applied to
	checks  map[string]*server.DiskCheck
}

// DiskCheckDuration is how long the disk self-check writes.
const DiskCheckDuration = 3 * time.Second

// checkLimitSupport refuses, before any server starts, limits this machine
// cannot apply (not root, a controller missing): exit 2 naming it.
func (r *Runner) checkLimitSupport() error {
	var all catalog.LimitSet
	for _, c := range r.plan.Cells {
		all = all.Merge(c.Limits)
	}
	if all.Server().IsZero() {
		return nil
	}
	if _, ok := r.srvCaps(); !ok {
		return nil // the plan refused limits for a provider without them
	}
	err := server.CheckLimitSupport(all)
	var ue *server.LimitsUnsupportedError
	if errors.As(err, &ue) {
		return &UsageError{Msg: ue.Error()}
	}
	return err
}

func (r *Runner) srvCaps() (catalog.Descriptor, bool) {
	d := catalog.Provider(r.m.Server.Provider)
	return d, d.Caps.Has(catalog.Limits)
}

// applyLimits puts the server under the cell's limits, restarting it
// first when the change (change.go) says its memory limit shrinks, or when
// the limit in force (which a failed cell may have left other than the
// plan expected) is larger than the cell's; it reads them back into the
// cell, runs the disk self-check once per disk limit, and pins
// benchmatrix's own threads to client_cpus; the returned function unpins
// them.
func (r *Runner) applyLimits(ctx context.Context, c *experiment.Cell, res *record.Cell) (func(), error) {
	want := c.Limits
	ch := r.planned(c, res) // change.go
	res.Change.Limits = ch.Limits
	lim, ok := r.srv.(server.Limiter)
	if !ok {
		if !want.IsZero() {
			return nil, fmt.Errorf("the %s server cannot take resource limits", r.m.Server.Provider)
		}
		return nil, nil
	}
	if r.lim.srv != r.srv {
		r.lim.srv, r.lim.applied = r.srv, catalog.LimitSet{}
	}
	sl := want.Server()
	if sl != r.lim.applied.Server() || !sl.IsZero() {
		restart := ch.MemoryRestart()
		if _, shrink := experiment.LimitChanges(r.lim.applied, sl); shrink && !restart && !res.Change.Start {
			restart = true
			res.Change.Overrides = append(res.Change.Overrides, fmt.Sprintf(
				"restart: the memory limit in force (%s) is not the plan's; the cell's %s is smaller",
				memText(r.lim.applied.Memory), catalog.FormatBytes(sl.Memory)))
		}
		if restart && r.lim.applied.Memory != sl.Memory {
			// A cgroup cannot take back memory the server holds without
			// reclaiming or killing: start the server again inside the
			// smaller limit.
			fmt.Fprintf(r.log, "    restart: memory limit shrinks to %s\n", catalog.FormatBytes(sl.Memory))
			if err := r.restart(ctx, r.srv.Startup()); err != nil {
				return nil, fmt.Errorf("restart for a smaller memory limit: %w", err)
			}
			res.Restarted = true
			res.Change.Restart = append(res.Change.Restart, experiment.Param{Name: record.MemoryKey, Value: want.Get(record.MemoryKey)})
			// The restart lost what SET GLOBAL set in the load phase:
			// set it again and read it back.
			if err := r.configure(ctx, c, res); err != nil {
				return nil, fmt.Errorf("after the restart for a smaller memory limit: %w", err)
			}
		}
		in, err := lim.SetLimits(ctx, sl)
		if err != nil {
			var ue *server.LimitsUnsupportedError
			if errors.As(err, &ue) {
				return nil, &UsageError{Msg: ue.Error()}
			}
			return nil, err
		}
		r.lim.applied = sl
		if !sl.IsZero() {
			fmt.Fprintf(r.log, "    limits %s (%s, read back: %v)\n", sl, in.Mechanism, in.ReadBack)
		}
		in.Requested = want
		res.Limits = &in
		if sl.Disk() {
			res.DiskCheck = r.diskCheck(ctx, lim, sl)
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
func (r *Runner) diskCheck(ctx context.Context, lim server.Limiter, l catalog.LimitSet) *server.DiskCheck {
	key := fmt.Sprintf("%d/%d/%d/%d", l.DiskWriteIOPS, l.DiskReadIOPS, l.DiskWriteBPS, l.DiskReadBPS)
	if dc, ok := r.lim.checks[key]; ok {
		return dc
	}
	if r.lim.checks == nil {
		r.lim.checks = map[string]*server.DiskCheck{}
	}
	dc, err := lim.CheckDisk(ctx, DiskCheckDuration)
	if err != nil {
		fmt.Fprintf(r.log, "    disk self-check: %v\n", err)
		return nil
	}
	fmt.Fprintf(r.log, "    disk self-check: %.0f device writes/s (cap %d), %.0f write+fsync/s, fsync avg %.1f ms\n",
		dc.DeviceWriteIOPS, dc.CapWriteIOPS, dc.LoopsPerSec, dc.FsyncAvgMs)
	r.lim.checks[key] = &dc
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
