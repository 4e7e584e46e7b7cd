package server

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	dc "github.com/ory/dockertest/v3/docker"

	"benchmatrix/catalog"
)

// limitMechanisms is how the server's limits of catalog.LimitTable are
// carried out, one row per mechanism: the cgroup v1 files, the cgroup v2
// files and the container options that enforce its keys. The four disk
// throttles share one row because they share the device's files (v2 has
// one io.max line for all four). A new limit is a row of catalog.LimitTable
// and a row here; a client limit (client_cpus) is the runner's and has
// none. cgroupGroup.apply and Docker.hostLimits go through the rows in
// order and know no limit by name.
var limitMechanisms = []limitMechanism{
	{keys: []string{"disk_write_iops", "disk_read_iops", "disk_write_bps", "disk_read_bps"},
		v1: diskV1, v2: diskV2, docker: diskDocker},
	{keys: []string{"cpus"}, v1: cpuV1, v2: cpuV2, docker: cpuDocker},
	{keys: []string{"server_cpus"}, v1: cpusetV1, v2: cpusetV2, docker: cpusetDocker},
	{keys: []string{"memory"}, v1: memoryV1, v2: memoryV2, docker: memoryDocker},
}

// limitMechanism enforces some limit keys on each mechanism. Zero fields
// of the limit set lift what they limit.
type limitMechanism struct {
	keys []string // the catalog.LimitTable keys it enforces
	// v1 and v2 are the cgroup files to write, in order, for the limits l
	// (dev: "MAJ:MIN" of the datadir's disk, "" when no disk limit needed
	// it). g is the v1 group, whose parent a file may inherit from.
	v1 func(g *cgroupGroup, l catalog.LimitSet, dev string) []cgroupWrite
	v2 func(l catalog.LimitSet, dev string) []cgroupWrite
	// docker puts the limits in a new container's HostConfig (devPath:
	// the datadir's disk, "/dev/vda"; "" when unknown).
	docker func(hc *dc.HostConfig, l catalog.LimitSet, devPath string)
}

// cgroupWrite is one cgroup file written and read back; a value that does
// not read back as wanted is an error.
type cgroupWrite struct {
	ctrl  string // the v1 controller whose directory holds file; "" on v2
	file  string
	value string // what is written
	want  string // what must read back (after readBack)
	// set: a limit is in force through this file, and what reads back goes
	// in run.json (LimitsInForce.ReadBack); false when it lifts one or
	// only supports one (cpu.cfs_period_us).
	set bool
	// readBack, when not nil, turns the file's text into what is compared
	// (a per-device file's line about the disk).
	readBack func(got string) string
	// writeIf, when not nil, says whether to write the file at p at all
	// (its text is read back either way).
	writeIf func(p string) bool
}

// apply writes the limits (dev is the datadir's disk, "MAJ:MIN") and reads
// them back; a value that does not read back as written is an error. Zero
// fields lift that limit.
func (g *cgroupGroup) apply(l catalog.LimitSet, dev string) (map[string]string, error) {
	l = l.Server()
	if l.Disk() && dev == "" {
		return nil, errors.New("disk limits need the datadir's block device")
	}
	var ws []cgroupWrite
	for _, m := range limitMechanisms {
		if g.v2 {
			ws = append(ws, m.v2(l, dev)...)
		} else {
			ws = append(ws, m.v1(g, l, dev)...)
		}
	}
	back := map[string]string{}
	for _, w := range ws {
		dir, ok := g.dirs[w.ctrl]
		if !ok {
			continue // a v1 controller this machine lacks: no limit needed it (CheckLimitSupport)
		}
		p := filepath.Join(dir, w.file)
		if w.writeIf == nil || w.writeIf(p) {
			if err := writeFile(p, w.value); err != nil {
				return back, fmt.Errorf("set %s = %q: %w", w.file, w.value, err)
			}
		}
		got, err := readTrim(p)
		if err != nil {
			return back, err
		}
		if w.readBack != nil {
			got = w.readBack(got)
		}
		if got != w.want {
			return back, fmt.Errorf("cgroup %s: wrote %q, reads back %q", w.file, w.value, got)
		}
		if w.set {
			back[w.file] = got
		}
	}
	return back, nil
}

// hostLimits puts the wanted limits in a new container's HostConfig.
func (d *Docker) hostLimits(hc *dc.HostConfig) {
	l := d.lim.want.Server()
	// The new container starts under them: what a later SetLimits (or the
	// lift before a stop) must change from. A restart after a lift must not
	// leave the wanted limits in force unrecorded.
	d.lim.applied = l
	if l.IsZero() {
		return
	}
	for _, m := range limitMechanisms {
		m.docker(hc, l, d.lim.devPath)
	}
}

// The disk throttles: a v1 blkio file each, one v2 io.max line for all
// four (its fields in the order the kernel prints them), a HostConfig
// list each.

func diskV1(_ *cgroupGroup, l catalog.LimitSet, dev string) []cgroupWrite {
	if dev == "" {
		return nil
	}
	var ws []cgroupWrite
	for _, x := range []struct {
		file string
		n    int64
	}{{"blkio.throttle.write_iops_device", l.DiskWriteIOPS}, {"blkio.throttle.read_iops_device", l.DiskReadIOPS},
		{"blkio.throttle.write_bps_device", l.DiskWriteBPS}, {"blkio.throttle.read_bps_device", l.DiskReadBPS}} {
		want := ""
		if x.n > 0 {
			want = fmt.Sprintf("%s %d", dev, x.n)
		}
		ws = append(ws, cgroupWrite{ctrl: "blkio", file: x.file, value: fmt.Sprintf("%s %d", dev, x.n), want: want, set: x.n > 0,
			readBack: func(got string) string { return deviceLine(got, dev) }})
	}
	return ws
}

func diskV2(l catalog.LimitSet, dev string) []cgroupWrite {
	if dev == "" {
		return nil
	}
	v := fmt.Sprintf("%s rbps=%s wbps=%s riops=%s wiops=%s", dev, v2Max(l.DiskReadBPS), v2Max(l.DiskWriteBPS), v2Max(l.DiskReadIOPS), v2Max(l.DiskWriteIOPS))
	w := cgroupWrite{file: "io.max", value: v, set: l.Disk(), readBack: func(got string) string { return deviceLine(got, dev) }}
	if l.Disk() {
		w.want = v
	} else {
		// Lifting: only a disk that has a line to lift.
		w.writeIf = func(p string) bool { return fileHasDevice(p, dev) }
	}
	return []cgroupWrite{w}
}

func diskDocker(hc *dc.HostConfig, l catalog.LimitSet, devPath string) {
	if !l.Disk() || devPath == "" {
		return
	}
	lim := func(n int64) []dc.BlockLimit {
		if n <= 0 {
			return nil
		}
		return []dc.BlockLimit{{Path: devPath, Rate: n}}
	}
	hc.BlkioDeviceWriteIOps, hc.BlkioDeviceReadIOps = lim(l.DiskWriteIOPS), lim(l.DiskReadIOPS)
	hc.BlkioDeviceWriteBps, hc.BlkioDeviceReadBps = lim(l.DiskWriteBPS), lim(l.DiskReadBPS)
}

// v2Max is a v2 limit's value: "max" for none.
func v2Max(n int64) string {
	if n <= 0 {
		return "max"
	}
	return strconv.FormatInt(n, 10)
}

// The CPU quota, over a period of 100 ms.

// cpuQuota is the quota of a period of 100000 µs.
func cpuQuota(cpus float64) int64 { return int64(cpus*100000 + 0.5) }

func cpuV1(_ *cgroupGroup, l catalog.LimitSet, _ string) []cgroupWrite {
	quota := "-1"
	if l.CPUs > 0 {
		quota = strconv.FormatInt(cpuQuota(l.CPUs), 10)
	}
	return []cgroupWrite{{ctrl: "cpu", file: "cpu.cfs_period_us", value: "100000", want: "100000"},
		{ctrl: "cpu", file: "cpu.cfs_quota_us", value: quota, want: quota, set: l.CPUs > 0}}
}

func cpuV2(l catalog.LimitSet, _ string) []cgroupWrite {
	quota := "max 100000"
	if l.CPUs > 0 {
		quota = fmt.Sprintf("%d 100000", cpuQuota(l.CPUs))
	}
	return []cgroupWrite{{file: "cpu.max", value: quota, want: quota, set: l.CPUs > 0}}
}

func cpuDocker(hc *dc.HostConfig, l catalog.LimitSet, _ string) {
	if l.CPUs > 0 {
		hc.CPUPeriod, hc.CPUQuota = 100000, cpuQuota(l.CPUs)
	}
}

// The server's CPUs: the cpuset, which reads back as a normalised list.

func cpusetV1(g *cgroupGroup, l catalog.LimitSet, _ string) []cgroupWrite {
	dir, ok := g.dirs["cpuset"]
	if !ok {
		return nil
	}
	cpus := l.ServerCPUs
	if cpus == "" {
		// Lifting: the parent's CPUs (a v1 cpuset cannot be empty).
		cpus, _ = readTrim(filepath.Join(filepath.Dir(dir), "cpuset.cpus"))
	}
	want := cpus
	if list, err := catalog.ParseCPUList(cpus); err == nil {
		want = catalog.FormatCPUList(list)
	}
	return []cgroupWrite{{ctrl: "cpuset", file: "cpuset.cpus", value: cpus, want: want, set: l.ServerCPUs != ""}}
}

func cpusetV2(l catalog.LimitSet, _ string) []cgroupWrite {
	want := ""
	if l.ServerCPUs != "" {
		list, _ := catalog.ParseCPUList(l.ServerCPUs)
		want = catalog.FormatCPUList(list)
	}
	return []cgroupWrite{{file: "cpuset.cpus", value: l.ServerCPUs, want: want, set: want != ""}}
}

func cpusetDocker(hc *dc.HostConfig, l catalog.LimitSet, _ string) {
	hc.CPUSetCPUs = l.ServerCPUs
}

// The memory limit, which the kernel rounds down to pages.

func memoryV1(_ *cgroupGroup, l catalog.LimitSet, _ string) []cgroupWrite {
	if l.Memory > 0 {
		return []cgroupWrite{{ctrl: "memory", file: "memory.limit_in_bytes", value: strconv.FormatInt(l.Memory, 10),
			want: strconv.FormatInt(l.Memory/4096*4096, 10), set: true}}
	}
	return []cgroupWrite{{ctrl: "memory", file: "memory.limit_in_bytes", value: "-1",
		readBack: func(got string) string {
			if n, _ := strconv.ParseInt(got, 10, 64); n >= 1<<62 {
				return "" // unlimited reads back as a huge page-rounded number
			}
			return got
		}}}
}

func memoryV2(l catalog.LimitSet, _ string) []cgroupWrite {
	want := "max"
	if l.Memory > 0 {
		want = strconv.FormatInt(l.Memory/4096*4096, 10)
	}
	return []cgroupWrite{{file: "memory.max", value: v2Max(l.Memory), want: want, set: l.Memory > 0}}
}

func memoryDocker(hc *dc.HostConfig, l catalog.LimitSet, _ string) {
	if l.Memory > 0 {
		// Unlimited swap: with the engine's default (twice Memory) a later
		// live raise of memory.limit_in_bytes above memsw would fail.
		hc.Memory, hc.MemorySwap = l.Memory, -1
	}
}
