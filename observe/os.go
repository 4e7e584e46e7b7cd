package observe

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// userHZ is the tick rate of the times in /proc/stat and /proc/PID/stat.
// The kernel exports them in USER_HZ, which is 100 on every mainstream
// Linux architecture (sysconf(_SC_CLK_TCK) needs cgo to ask).
const userHZ = 100

// diskstats fields after major, minor and name (Documentation/admin-guide/
// iostats.rst). Sectors are always 512 bytes there.
type diskStat struct {
	Reads, ReadSectors, ReadMs    uint64
	Writes, WriteSectors, WriteMs uint64
	IOMs                          uint64 // time the device had I/O in flight
	Flushes                       uint64 // kernel ≥ 5.5
	HasFlushes                    bool
	Name                          string
}

// parseDiskstats finds the line for major:minor in /proc/diskstats text.
func parseDiskstats(text string, major, minor uint32) (diskStat, bool) {
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 14 {
			continue
		}
		if f[0] != strconv.FormatUint(uint64(major), 10) || f[1] != strconv.FormatUint(uint64(minor), 10) {
			continue
		}
		n := make([]uint64, len(f)-3)
		for i, s := range f[3:] {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return diskStat{}, false
			}
			n[i] = v
		}
		d := diskStat{Name: f[2],
			Reads: n[0], ReadSectors: n[2], ReadMs: n[3],
			Writes: n[4], WriteSectors: n[6], WriteMs: n[7],
			IOMs: n[9]}
		if len(n) >= 17 {
			d.Flushes, d.HasFlushes = n[15], true
		}
		return d, true
	}
	return diskStat{}, false
}

// cpuTimes is the aggregate "cpu" line of /proc/stat, in USER_HZ ticks.
type cpuTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// Total is every tick the CPUs spent (guest time is already inside user and
// nice, so it is not added again).
func (c cpuTimes) Total() uint64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
}

// parseProcStat reads the aggregate cpu line of /proc/stat.
func parseProcStat(text string) (cpuTimes, error) {
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		var n [8]uint64
		for i := 0; i < len(n) && i+1 < len(f); i++ {
			v, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return cpuTimes{}, fmt.Errorf("/proc/stat cpu field %d: %w", i+1, err)
			}
			n[i] = v
		}
		if len(f) < 5 {
			return cpuTimes{}, fmt.Errorf("/proc/stat cpu line too short: %q", line)
		}
		return cpuTimes{n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7]}, nil
	}
	return cpuTimes{}, fmt.Errorf("/proc/stat has no cpu line")
}

// parsePidStat returns utime+stime (ticks) from /proc/PID/stat. The command
// name is in parentheses and may hold spaces or parentheses, so fields are
// counted from the last ')'.
func parsePidStat(text string) (uint64, error) {
	i := strings.LastIndexByte(text, ')')
	if i < 0 {
		return 0, fmt.Errorf("pid stat: no command field")
	}
	f := strings.Fields(text[i+1:])
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("pid stat: %d fields after the command", len(f))
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("pid stat: bad utime/stime %q %q", f[11], f[12])
	}
	return u + s, nil
}

// ProcessCPU returns the user+system CPU time the process pid has used so
// far, from /proc/PID/stat (10 ms resolution).
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	ticks, err := parsePidStat(string(b))
	if err != nil {
		return 0, err
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// mountFor finds the mount whose device is major:minor in
// /proc/self/mountinfo text, for notes ("datadir is on overlay").
func mountFor(text string, major, minor uint32) (fstype, src, point string, ok bool) {
	want := fmt.Sprintf("%d:%d", major, minor)
	for _, line := range strings.Split(text, "\n") {
		pre, post, found := strings.Cut(line, " - ")
		if !found {
			continue
		}
		f := strings.Fields(pre)
		g := strings.Fields(post)
		if len(f) < 5 || len(g) < 2 || f[2] != want {
			continue
		}
		return g[0], g[1], f[4], true
	}
	return "", "", "", false
}

// devNumbers splits a Linux dev_t into major and minor (glibc's encoding).
func devNumbers(dev uint64) (major, minor uint32) {
	major = uint32((dev>>8)&0xfff) | uint32((dev>>32)&^uint64(0xfff))
	minor = uint32(dev&0xff) | uint32((dev>>12)&^uint64(0xff))
	return major, minor
}

// osReader reads the /proc files for one sampler.
type osReader struct {
	proc      string // "/proc", or a fake tree in tests
	hasDisk   bool
	major     uint32
	minor     uint32
	serverPID int
	peerPIDs  []int // the server's other processes (contention.go)
}

// resolveDisk finds the block device under datadir. It returns a note when
// the disk columns will stay empty, and a note naming the device otherwise.
func (r *osReader) resolveDisk(datadir string) string {
	if datadir == "" {
		return "disk: no datadir given (remote server?); disk columns are empty"
	}
	st, err := os.Stat(datadir)
	if err != nil {
		return fmt.Sprintf("disk: stat datadir: %v; disk columns are empty", err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return "disk: no device number for the datadir on this OS; disk columns are empty"
	}
	r.major, r.minor = devNumbers(uint64(sys.Dev))
	where := ""
	if mi, err := os.ReadFile(filepath.Join(r.proc, "self", "mountinfo")); err == nil {
		if fs, src, pt, ok := mountFor(string(mi), r.major, r.minor); ok {
			where = fmt.Sprintf(" (%s %s on %s)", fs, src, pt)
		}
	}
	ds, err := os.ReadFile(filepath.Join(r.proc, "diskstats"))
	if err != nil {
		return fmt.Sprintf("disk: %v; disk columns are empty", err)
	}
	d, ok := parseDiskstats(string(ds), r.major, r.minor)
	if !ok {
		return fmt.Sprintf("disk: datadir %s is on device %d:%d%s, which has no /proc/diskstats line "+
			"(a virtual filesystem such as overlay, tmpfs or btrfs); disk columns are empty",
			datadir, r.major, r.minor, where)
	}
	r.hasDisk = true
	return fmt.Sprintf("disk: datadir %s is on %s (%d:%d)%s", datadir, d.Name, r.major, r.minor, where)
}

// read stores the current OS counters in vals; what cannot be read is left
// out (a gap).
func (r *osReader) read(vals map[string]float64) {
	if r.hasDisk {
		if b, err := os.ReadFile(filepath.Join(r.proc, "diskstats")); err == nil {
			if d, ok := parseDiskstats(string(b), r.major, r.minor); ok {
				vals["os.disk.reads"] = float64(d.Reads)
				vals["os.disk.read_sectors"] = float64(d.ReadSectors)
				vals["os.disk.read_ms"] = float64(d.ReadMs)
				vals["os.disk.writes"] = float64(d.Writes)
				vals["os.disk.write_sectors"] = float64(d.WriteSectors)
				vals["os.disk.write_ms"] = float64(d.WriteMs)
				vals["os.disk.io_ms"] = float64(d.IOMs)
				if d.HasFlushes {
					vals["os.disk.flushes"] = float64(d.Flushes)
				}
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(r.proc, "stat")); err == nil {
		if c, err := parseProcStat(string(b)); err == nil {
			vals["os.cpu.user"] = float64(c.User + c.Nice)
			vals["os.cpu.system"] = float64(c.System + c.IRQ + c.SoftIRQ)
			vals["os.cpu.iowait"] = float64(c.IOWait)
			vals["os.cpu.steal"] = float64(c.Steal)
			vals["os.cpu.total"] = float64(c.Total())
		}
	}
	if r.serverPID > 0 {
		if b, err := os.ReadFile(filepath.Join(r.proc, strconv.Itoa(r.serverPID), "stat")); err == nil {
			if t, err := parsePidStat(string(b)); err == nil {
				vals["os.server.ticks"] = float64(t)
				vals["os.server.pid"] = float64(r.serverPID)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(r.proc, "self", "stat")); err == nil {
		if t, err := parsePidStat(string(b)); err == nil {
			vals["os.client.ticks"] = float64(t)
		}
	}
	r.readPeers(vals)     // contention.go
	r.readRunDelays(vals) // rundelay.go
}
