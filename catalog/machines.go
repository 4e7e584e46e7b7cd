package catalog

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// ParseBytes reads a size: a number of bytes, or one with a K, M, G or T
// suffix (powers of 1024, an optional trailing B or iB): "2G", "512M",
// "125MB". It must be more than 0.
func ParseBytes(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "IB"), "B")
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			t = t[:n-1]
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("want a size such as \"2G\", \"512M\" or a number of bytes, got %q", s)
	}
	if f <= 0 {
		return 0, fmt.Errorf("must be more than 0 (got %q); leave the key out for no limit", s)
	}
	v := f * float64(mult)
	if v >= math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(v), nil
}

// FormatBytes prints a size the way ParseBytes reads it, exactly.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n >= u.m && n%u.m == 0 {
			return strconv.FormatInt(n/u.m, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

// ParseCPUList reads a Linux CPU list ("0", "0-3", "0,2-3") into the CPU
// numbers it names, sorted.
func ParseCPUList(s string) ([]int, error) {
	bad := func() ([]int, error) {
		return nil, fmt.Errorf("want a CPU list such as \"0\", \"0-1\" or \"0,2\", got %q", s)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return bad()
	}
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return bad()
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return bad()
			}
		}
		if b-a > 1<<16 {
			return bad()
		}
		for c := a; c <= b; c++ {
			seen[c] = true
		}
	}
	out := make([]int, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Ints(out)
	return out, nil
}

// OnlineCPUs lists the CPUs this machine has online
// (/sys/devices/system/cpu/online).
func OnlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, err
	}
	return ParseCPUList(string(b))
}

// CheckCPUs says which CPUs of a list the machine lacks (online lists the
// CPUs it has).
func CheckCPUs(list string, online []int) error {
	want, err := ParseCPUList(list)
	if err != nil {
		return err
	}
	have := map[int]bool{}
	for _, c := range online {
		have[c] = true
	}
	var missing []string
	for _, c := range want {
		if !have[c] {
			missing = append(missing, strconv.Itoa(c))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("this machine has no CPU %s (online: %s)", strings.Join(missing, ", "), FormatCPUList(online))
	}
	return nil
}

// FormatCPUList prints CPU numbers as a Linux CPU list ("0-3,6").
func FormatCPUList(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, strconv.Itoa(cpus[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Machine is a shipped preset: a named set of limits standing for a kind
// of machine, with where its numbers come from.
type Machine struct {
	Name   string
	Doc    string
	Source string
	Limits LimitSet
}

// Machines are the shipped presets, chosen with machine = "NAME" (also as
// a scenario or axis key); a manifest's own [machines.NAME] tables add to
// them or replace one of the same name.
var Machines = []Machine{
	{
		Name: "small-cloud",
		Doc:  "a 1-vCPU, 2 GB cloud VM on a general-purpose network volume",
		Source: "1 vCPU / 2 GB is the smallest general-purpose size of the big clouds (e.g. a DigitalOcean " +
			"Basic 2 GB droplet, an AWS t3.small's memory); 3000 IOPS and 125 MiB/s are the baseline " +
			"of an AWS gp3 volume (AWS EBS documentation, \"General Purpose SSD volumes\")",
		Limits: LimitSet{CPUs: 1, Memory: 2 << 30, DiskWriteIOPS: 3000, DiskReadIOPS: 3000,
			DiskWriteBPS: 125 << 20, DiskReadBPS: 125 << 20},
	},
	{
		Name: "slow-disk",
		Doc:  "a disk whose every synchronous write is slow: 100 write IOPS (a network disk or one spindle)",
		Source: "about 100 random IOPS is a 7,200 rpm disk or a throttled network volume (Azure Standard HDD " +
			"tiers: 500 IOPS shared; AWS sc1: 12 IOPS per TiB of baseline); measured here: 100 write IOPS took " +
			"1-thread sysbench oltp_insert with sync_binlog=1, innodb_flush_log_at_trx_commit=1 from 601 to 16 tps",
		Limits: LimitSet{DiskWriteIOPS: 100, DiskReadIOPS: 200},
	},
	{
		Name: "shared-storage",
		Doc:  "slow shared storage: few IOPS and little bandwidth for reads and writes alike",
		Source: "a SAN or NFS share busy with other tenants: a few hundred IOPS and some MB/s left per " +
			"client (the AUTO_INCREMENT report: stalls \"only on slow storage\"); 200 IOPS and 8 MiB/s each way",
		Limits: LimitSet{DiskWriteIOPS: 200, DiskReadIOPS: 200, DiskWriteBPS: 8 << 20, DiskReadBPS: 8 << 20},
	},
	{
		Name:   "nvme",
		Doc:    "a local NVMe-like machine: no limit at all (the baseline beside the others)",
		Source: "no limit: whatever this machine has",
	},
}

// LookupMachine finds a shipped preset.
func LookupMachine(name string) (Machine, bool) {
	for _, m := range Machines {
		if m.Name == name {
			return m, true
		}
	}
	return Machine{}, false
}

// MachineNames lists the shipped presets.
func MachineNames() []string {
	out := make([]string, len(Machines))
	for i, m := range Machines {
		out[i] = m.Name
	}
	return out
}
