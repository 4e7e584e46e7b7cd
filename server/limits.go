package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"benchmatrix/catalog"
	"benchmatrix/record/parts"
)

// Limiter is catalog.Limits: resource limits on the server, changed live
// between cells, read back, lifted before a stop. The limits SetLimits
// set hold over the server's restarts (Restart, a snapshot, a restore)
// until SetLimits changes them: the stop lifts them (a throttled shutdown
// can take minutes) and the new process starts under them again.
type Limiter interface {
	// SetLimits puts the server under l (zero fields: no limit) and returns
	// what is in force, read back from the cgroup.
	SetLimits(ctx context.Context, l catalog.LimitSet) (LimitsInForce, error)
	// CheckDisk measures what the disk limit delivers: O_DIRECT writes with
	// an fsync each, inside the server's cgroup, on the datadir's device.
	CheckDisk(ctx context.Context, d time.Duration) (DiskCheck, error)
	// Cgroup locates the server's own cgroup, for sampling what it uses
	// inside its limits; false when it has none (a sandbox never limited).
	Cgroup() (CgroupPaths, bool)
}

// CgroupPaths locates a server's cgroup for the sampler (observe reads its
// counters: IO, memory, CPU throttling).
type CgroupPaths struct {
	V2 bool `json:"v2,omitempty"`
	// Dirs: v1 controller ("blkio", "cpu", "memory") to its directory;
	// v2: "" to the group's one directory.
	Dirs map[string]string `json:"dirs"`
	// Device is "MAJ:MIN" of the disk under the datadir ("" when unknown:
	// the IO columns then count every device).
	Device string `json:"device,omitempty"`
}

// paths is the group's CgroupPaths, with dev (the datadir's disk) or,
// when no disk limit found it yet, the disk under dir.
func (g *cgroupGroup) paths(dev, dir string) CgroupPaths {
	p := CgroupPaths{V2: g.v2, Dirs: map[string]string{}, Device: dev}
	for c, d := range g.dirs {
		p.Dirs[c] = d
	}
	if p.Device == "" {
		p.Device, _, _ = BlockDevice(dir)
	}
	return p
}

// LimitsInForce is what a server runs under, as read back
// (parts.LimitsInForce, in run.json).
type LimitsInForce = parts.LimitsInForce

// DiskCheck is the self-check of a disk limit (parts.DiskCheck).
type DiskCheck = parts.DiskCheck

// OOMReporter is a provider that can tell, after a failure, whether the
// server was killed for memory: by its memory limit (the cgroup's OOM
// kill counter, Docker's OOMKilled) or by the kernel's OOM killer.
type OOMReporter interface {
	// MemoryKilled is "" unless the server was killed for memory since the
	// last call (the runner asks when a cell fails: so, in the cell); then
	// it says so, with the limit: "the server was killed by its memory
	// limit (memory = 256M, 1 OOM kill in the cell)".
	MemoryKilled() string
}

// memoryKillNote says that n processes of the server's group were killed
// for memory, under the memory limit l (0: none), in the cell.
func memoryKillNote(n int64, l catalog.LimitSet) string {
	if n <= 0 {
		return ""
	}
	kills := fmt.Sprintf("%d OOM kill", n)
	if n > 1 {
		kills += "s"
	}
	if l.Memory <= 0 {
		return "the server was killed by the kernel's OOM killer (no memory limit on it; " + kills + " in the cell): the machine ran out of memory"
	}
	return fmt.Sprintf("the server was killed by its memory limit (memory = %s, %s in the cell)", catalog.FormatBytes(l.Memory), kills)
}

// MemoryKilled implements OOMReporter from the sandbox cgroup's OOM kill
// counter (a sandbox never limited has no group, and is not counted).
func (s *Sandbox) MemoryKilled() string {
	if s.lim.group == nil {
		return ""
	}
	n, ok := s.lim.group.oomKills()
	if !ok {
		return ""
	}
	d := n - s.lim.oomSeen
	s.lim.oomSeen = n
	return memoryKillNote(d, s.lim.applied)
}

// limitState is what a provider keeps about its limits.
type limitState struct {
	// oomSeen is the group's OOM kill count when MemoryKilled last read it.
	oomSeen int64
	group   *cgroupGroup
	dev     string // "MAJ:MIN" of the datadir's disk
	devName string
	// applied is what the group's files hold now; want is what SetLimits
	// last asked for. They differ only while a stop has lifted the limits
	// (liftLimits): the next process puts want back (joinLimits).
	applied catalog.LimitSet
	want    catalog.LimitSet
}

// ensureGroup creates the sandbox's cgroup and moves its server into it.
func (s *Sandbox) ensureGroup() error {
	if s.lim.group != nil {
		return nil
	}
	g, err := newCgroup(CgroupRoot, "/proc/self/cgroup")
	if err != nil {
		return &LimitsUnsupportedError{Msg: err.Error()}
	}
	s.lim.group = g
	if pid := s.PID(); pid > 0 {
		return g.addProcess(pid)
	}
	return nil
}

// joinLimits moves a freshly started server process into the sandbox's
// cgroup (a restart's new process), when it has one, and puts back the
// limits the stop before it lifted: the limits SetLimits set hold over
// every restart, snapshot and restore, as a Docker server's do (its new
// containers are created with them), until SetLimits changes them.
func (s *Sandbox) joinLimits(pid int) error {
	if s.lim.group == nil {
		return nil
	}
	if err := s.lim.group.addProcess(pid); err != nil {
		return err
	}
	if s.lim.applied == s.lim.want {
		return nil
	}
	if _, err := s.lim.group.apply(s.lim.want, s.lim.dev); err != nil {
		return fmt.Errorf("limits after the restart: %w", err)
	}
	s.lim.applied = s.lim.want
	return nil
}

// SetLimits implements Limiter.
func (s *Sandbox) SetLimits(_ context.Context, l catalog.LimitSet) (LimitsInForce, error) {
	l = l.Server()
	in := LimitsInForce{Requested: l, ReadBack: map[string]string{}}
	if l.IsZero() && s.lim.group == nil {
		in.Mechanism = "none"
		return in, nil
	}
	if err := CheckLimitSupport(l); err != nil {
		return in, err
	}
	if err := s.ensureGroup(); err != nil {
		return in, err
	}
	if err := s.findDevice(l); err != nil {
		return in, err
	}
	back, err := s.lim.group.apply(l, s.lim.dev)
	if err != nil {
		return in, fmt.Errorf("limits: %w", err)
	}
	s.lim.applied, s.lim.want = l, l
	in.Mechanism, in.Cgroup, in.ReadBack = "cgroup "+s.lim.group.version(), s.lim.group.Path(), back
	if s.lim.dev != "" {
		in.Device = s.lim.dev + " (" + s.lim.devName + ")"
	}
	return in, nil
}

func (s *Sandbox) findDevice(l catalog.LimitSet) error {
	if s.lim.dev != "" || !l.Disk() {
		return nil
	}
	dev, name, err := BlockDevice(s.datadir())
	if err != nil {
		return err
	}
	s.lim.dev, s.lim.devName = dev, name
	return nil
}

// liftLimits lifts every limit before a stop: a throttled shutdown
// (flushing the buffer pool at 100 IOPS) can take minutes. What SetLimits
// asked for stays wanted; the next start puts it back (joinLimits).
func (s *Sandbox) liftLimits() {
	if s.lim.group == nil || s.lim.applied.IsZero() {
		return
	}
	if err := s.lim.group.lift(s.lim.dev); err == nil {
		s.lim.applied = catalog.LimitSet{}
	}
}

// removeLimits removes the sandbox's cgroup once its server has exited.
func (s *Sandbox) removeLimits() error {
	if s.lim.group == nil {
		return nil
	}
	err := s.lim.group.remove()
	if err == nil {
		s.lim.group = nil
	}
	return err
}

// CheckDisk implements Limiter.
func (s *Sandbox) CheckDisk(ctx context.Context, d time.Duration) (DiskCheck, error) {
	if s.lim.group == nil {
		return DiskCheck{}, errors.New("no cgroup: the server has no limits")
	}
	return diskCheck(ctx, s.lim.group, s.lim.dev, s.datadir(), s.lim.applied.DiskWriteIOPS, d)
}

// Cgroup implements Limiter: the sandbox's group once limits made one.
func (s *Sandbox) Cgroup() (CgroupPaths, bool) {
	if s.lim.group == nil {
		return CgroupPaths{}, false
	}
	return s.lim.group.paths(s.lim.dev, s.datadir()), true
}

// diskCheck runs the self-check on one OS thread moved into the group's
// blkio cgroup (cgroup v1 moves single threads; v2 groups refuse them).
func diskCheck(ctx context.Context, g *cgroupGroup, dev, dir string, capIOPS int64, d time.Duration) (DiskCheck, error) {
	if g.v2 {
		return DiskCheck{}, errors.New("the disk self-check needs cgroup v1 (a v2 group takes whole processes only); not measured")
	}
	blkio := g.dirs["blkio"]
	if blkio == "" || dev == "" {
		return DiskCheck{}, errors.New("no disk limit")
	}
	type result struct {
		dc  DiskCheck
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// The thread is not unlocked: if leaving the cgroup fails, the
		// thread exits with the goroutine instead of serving others.
		tid := strconv.Itoa(syscall.Gettid())
		if err := writeFile(filepath.Join(blkio, "tasks"), tid); err != nil {
			ch <- result{err: fmt.Errorf("move the self-check thread into %s: %w", blkio, err)}
			return
		}
		dc, err := writeFsyncLoop(ctx, blkio, dev, dir, d)
		if lerr := writeFile(filepath.Join(g.own["blkio"], "tasks"), tid); lerr == nil {
			runtime.UnlockOSThread()
		}
		ch <- result{dc, err}
	}()
	r := <-ch
	if r.err == nil && capIOPS > 0 {
		r.dc.CapWriteIOPS = capIOPS
		r.dc.Ratio = r.dc.DeviceWriteIOPS / float64(capIOPS)
	}
	return r.dc, r.err
}

// writeFsyncLoop writes 4 KiB with O_DIRECT at rotating offsets of a
// 1 MiB file and fsyncs after each write, like fio --direct=1 --fsync=1,
// counting the device writes the cgroup saw.
func writeFsyncLoop(ctx context.Context, blkio, dev, dir string, d time.Duration) (DiskCheck, error) {
	const block, size = 4096, 1 << 20
	p := filepath.Join(dir, "benchmatrix-diskcheck.tmp")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC|syscall.O_DIRECT, 0o600)
	if err != nil {
		return DiskCheck{}, fmt.Errorf("disk self-check: %w", err)
	}
	defer os.Remove(p)
	defer f.Close()
	raw := make([]byte, 2*block)
	off := int(uintptr(unsafe.Pointer(&raw[0])) & (block - 1))
	if off != 0 {
		off = block - off
	}
	buf := raw[off : off+block]
	for i := range buf {
		buf[i] = byte(i)
	}
	// Allocate the file first, so the loop measures overwrites.
	for o := int64(0); o < size; o += block {
		if _, err := f.WriteAt(buf, o); err != nil {
			return DiskCheck{}, fmt.Errorf("disk self-check: %w", err)
		}
	}
	if err := f.Sync(); err != nil {
		return DiskCheck{}, err
	}
	before := ioServiced(blkio, dev)
	start := time.Now()
	var dc DiskCheck
	var total, worst time.Duration
	for o := int64(0); time.Since(start) < d && ctx.Err() == nil; o = (o + block) % size {
		if _, err := f.WriteAt(buf, o); err != nil {
			return dc, fmt.Errorf("disk self-check: %w", err)
		}
		t := time.Now()
		if err := f.Sync(); err != nil {
			return dc, fmt.Errorf("disk self-check: %w", err)
		}
		ft := time.Since(t)
		total += ft
		worst = max(worst, ft)
		dc.Loops++
	}
	el := time.Since(start).Seconds()
	after := ioServiced(blkio, dev)
	dc.Seconds = el
	if el > 0 {
		dc.LoopsPerSec = float64(dc.Loops) / el
		dc.DeviceWriteIOPS = float64(after.WriteIOs-before.WriteIOs) / el
	}
	if dc.Loops > 0 {
		dc.FsyncAvgMs = total.Seconds() * 1000 / float64(dc.Loops)
		dc.FsyncMaxMs = worst.Seconds() * 1000
	}
	return dc, nil
}

// ioPair is a read and a write count of a v1 blkio file.
type ioPair struct{ ReadIOs, WriteIOs int64 }

func ioServiced(blkioDir, dev string) ioPair {
	return blkioPair(filepath.Join(blkioDir, "blkio.throttle.io_serviced"), dev)
}

// blkioPair reads "MAJ:MIN Read N" / "MAJ:MIN Write N" lines into
// ReadIOs/WriteIOs.
func blkioPair(p, dev string) ioPair {
	var st ioPair
	b, err := os.ReadFile(p)
	if err != nil {
		return st
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != dev {
			continue
		}
		n, _ := strconv.ParseInt(f[2], 10, 64)
		switch f[1] {
		case "Read":
			st.ReadIOs = n
		case "Write":
			st.WriteIOs = n
		}
	}
	return st
}
