package catalog

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// LimitSet holds the resource limits put on a server (and, for ClientCPUs, on
// benchmatrix's own load generator) so that a report from a slow disk, a
// small VM or a shared host reproduces on any Linux box. The zero value is
// "no limit" for every field.
type LimitSet struct {
	// Disk limits apply to the block device under the server's datadir.
	DiskWriteIOPS int64 `json:"disk_write_iops,omitempty"`
	DiskReadIOPS  int64 `json:"disk_read_iops,omitempty"`
	DiskWriteBPS  int64 `json:"disk_write_bps,omitempty"` // bytes per second
	DiskReadBPS   int64 `json:"disk_read_bps,omitempty"`
	// CPUs is a CPU quota in CPUs' worth of time (1.0, 0.5, 2).
	CPUs float64 `json:"cpus,omitempty"`
	// ServerCPUs and ClientCPUs are CPU lists ("0", "0-1", "0,2"): the
	// server's cpuset, and the CPUs benchmatrix's own threads (the load
	// generator) are pinned to while a cell runs.
	ServerCPUs string `json:"server_cpus,omitempty"`
	ClientCPUs string `json:"client_cpus,omitempty"`
	// Memory caps the server's memory, in bytes.
	Memory int64 `json:"memory,omitempty"`
}

// LimitKeys are the manifest keys of a LimitSet, in the order they print.
var LimitKeys = []string{"disk_write_iops", "disk_read_iops", "disk_write_bps", "disk_read_bps",
	"cpus", "server_cpus", "client_cpus", "memory"}

// IsLimitKey reports whether name is one of LimitKeys.
func IsLimitKey(name string) bool {
	for _, k := range LimitKeys {
		if k == name {
			return true
		}
	}
	return false
}

// IsZero reports whether no limit is set.
func (l LimitSet) IsZero() bool { return l == LimitSet{} }

// Server is l without the client's pinning: what the server's cgroup or
// container holds.
func (l LimitSet) Server() LimitSet { l.ClientCPUs = ""; return l }

// Disk reports whether any disk limit is set.
func (l LimitSet) Disk() bool {
	return l.DiskWriteIOPS > 0 || l.DiskReadIOPS > 0 || l.DiskWriteBPS > 0 || l.DiskReadBPS > 0
}

// Get returns the text of one key ("" when unset).
func (l LimitSet) Get(key string) string {
	num := func(n int64) string {
		if n == 0 {
			return ""
		}
		return strconv.FormatInt(n, 10)
	}
	switch key {
	case "disk_write_iops":
		return num(l.DiskWriteIOPS)
	case "disk_read_iops":
		return num(l.DiskReadIOPS)
	case "disk_write_bps":
		return num(l.DiskWriteBPS)
	case "disk_read_bps":
		return num(l.DiskReadBPS)
	case "cpus":
		if l.CPUs == 0 {
			return ""
		}
		return strconv.FormatFloat(l.CPUs, 'f', -1, 64)
	case "server_cpus":
		return l.ServerCPUs
	case "client_cpus":
		return l.ClientCPUs
	case "memory":
		return num(l.Memory)
	}
	return ""
}

// String lists the limits set, as key=value in LimitKeys' order; sizes in
// bytes. "none" when no limit is set.
func (l LimitSet) String() string {
	var parts []string
	for _, k := range LimitKeys {
		if v := l.Get(k); v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// Set parses one key's value onto l. Every limit must be positive; CPU
// lists must be well formed (whether the machine has them is CheckCPUs').
func (l *LimitSet) Set(key, value string) error {
	value = strings.TrimSpace(value)
	switch key {
	case "disk_write_iops", "disk_read_iops":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return fmt.Errorf("want a whole number of IOs per second, got %q", value)
		}
		if n <= 0 {
			return fmt.Errorf("must be more than 0 (got %d); leave the key out for no limit", n)
		}
		if key == "disk_write_iops" {
			l.DiskWriteIOPS = n
		} else {
			l.DiskReadIOPS = n
		}
	case "disk_write_bps", "disk_read_bps", "memory":
		n, err := ParseBytes(value)
		if err != nil {
			return err
		}
		switch key {
		case "disk_write_bps":
			l.DiskWriteBPS = n
		case "disk_read_bps":
			l.DiskReadBPS = n
		default:
			l.Memory = n
		}
	case "cpus":
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("want a number of CPUs such as 1.0 or 0.5, got %q", value)
		}
		if f <= 0 {
			return fmt.Errorf("must be more than 0 (got %g); leave the key out for no limit", f)
		}
		if f < 0.01 {
			return fmt.Errorf("%g is below the smallest quota, 0.01 CPUs", f)
		}
		l.CPUs = f
	case "server_cpus", "client_cpus":
		if _, err := ParseCPUList(value); err != nil {
			return err
		}
		if key == "server_cpus" {
			l.ServerCPUs = value
		} else {
			l.ClientCPUs = value
		}
	default:
		return fmt.Errorf("%q is not a limit (known: %s)", key, strings.Join(LimitKeys, ", "))
	}
	return nil
}

// Merge returns l with every limit o sets taken from o.
func (l LimitSet) Merge(o LimitSet) LimitSet {
	for _, k := range LimitKeys {
		if v := o.Get(k); v != "" {
			_ = l.Set(k, v)
		}
	}
	return l
}

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
