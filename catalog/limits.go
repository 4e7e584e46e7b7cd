package catalog

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// LimitSet holds the resource limits put on a server (and, for ClientCPUs, on
// benchmatrix's own load generator) so that a report from a slow disk, a
// small VM or a shared host reproduces on any Linux box. The zero value is
// "no limit" for every field. Each field is one entry of LimitTable.
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

// LimitKey describes one limit key of the manifest: how its value is
// parsed and printed, whether changing it between two cells restarts the
// server, and the mechanism that enforces it on each provider (server/
// carries it out: a row of its limitMechanisms, per cgroup version and for
// Docker).
type LimitKey struct {
	Name string
	Doc  string
	// Set parses a value onto l (validated: positive, well formed); Get
	// prints l's value as Set reads it, "" when unset.
	Set func(l *LimitSet, value string) error
	Get func(l LimitSet) string
	// Restarts reports whether going from prev's limits to next's
	// restarts the server (nil: never; the limit changes live).
	Restarts func(prev, next LimitSet) bool
	// Client: the limit is on benchmatrix's own threads, not the server.
	Client bool
	// Mechanism is what enforces it, per provider.
	Mechanism LimitMechanism
}

// LimitMechanism names what enforces a limit: on a sandbox a cgroup v1
// controller and file or a cgroup v2 controller and file (key), on the
// docker provider an option of the container (its HostConfig field, the
// docker run flag in parentheses); Client limits pin benchmatrix's threads.
type LimitMechanism struct {
	V1Controller, V1File string
	V2Controller, V2File string
	Docker               string
}

// LimitTable is every limit key, in the order they print.
var LimitTable = []LimitKey{
	countLimit("disk_write_iops", "writes per second to the datadir's disk",
		func(l *LimitSet) *int64 { return &l.DiskWriteIOPS },
		LimitMechanism{"blkio", "blkio.throttle.write_iops_device", "io", "io.max (wiops)", "BlkioDeviceWriteIOps (--device-write-iops)"}),
	countLimit("disk_read_iops", "reads per second from the datadir's disk",
		func(l *LimitSet) *int64 { return &l.DiskReadIOPS },
		LimitMechanism{"blkio", "blkio.throttle.read_iops_device", "io", "io.max (riops)", "BlkioDeviceReadIOps (--device-read-iops)"}),
	sizeLimit("disk_write_bps", "bytes per second written to the datadir's disk",
		func(l *LimitSet) *int64 { return &l.DiskWriteBPS }, nil,
		LimitMechanism{"blkio", "blkio.throttle.write_bps_device", "io", "io.max (wbps)", "BlkioDeviceWriteBps (--device-write-bps)"}),
	sizeLimit("disk_read_bps", "bytes per second read from the datadir's disk",
		func(l *LimitSet) *int64 { return &l.DiskReadBPS }, nil,
		LimitMechanism{"blkio", "blkio.throttle.read_bps_device", "io", "io.max (rbps)", "BlkioDeviceReadBps (--device-read-bps)"}),
	{Name: "cpus", Doc: "a CPU quota, in CPUs' worth of time", Set: setCPUs,
		Get: func(l LimitSet) string {
			if l.CPUs == 0 {
				return ""
			}
			return strconv.FormatFloat(l.CPUs, 'f', -1, 64)
		},
		Mechanism: LimitMechanism{"cpu", "cpu.cfs_quota_us", "cpu", "cpu.max", "CPUQuota/CPUPeriod (--cpus)"}},
	cpuListLimit("server_cpus", "the CPUs the server runs on", func(l *LimitSet) *string { return &l.ServerCPUs }, false,
		LimitMechanism{"cpuset", "cpuset.cpus", "cpuset", "cpuset.cpus", "CpusetCpus (--cpuset-cpus)"}),
	cpuListLimit("client_cpus", "the CPUs benchmatrix's own threads (the load generator) run on", func(l *LimitSet) *string { return &l.ClientCPUs }, true,
		LimitMechanism{Docker: "sched_setaffinity of benchmatrix's threads"}),
	// A cgroup cannot take back memory the server already holds without
	// reclaiming or killing it: a smaller memory limit restarts the server
	// inside it.
	sizeLimit("memory", "the server's memory",
		func(l *LimitSet) *int64 { return &l.Memory },
		func(prev, next LimitSet) bool {
			return next.Memory > 0 && (prev.Memory == 0 || next.Memory < prev.Memory)
		},
		LimitMechanism{"memory", "memory.limit_in_bytes", "memory", "memory.max", "Memory, MemorySwap -1 (--memory)"}),
}

// LimitKeys are the manifest keys of a LimitSet, in the order they print.
var LimitKeys = limitNames()

func limitNames() []string {
	out := make([]string, len(LimitTable))
	for i, k := range LimitTable {
		out[i] = k.Name
	}
	return out
}

// LookupLimit finds a limit key.
func LookupLimit(name string) (LimitKey, bool) {
	for _, k := range LimitTable {
		if k.Name == name {
			return k, true
		}
	}
	return LimitKey{}, false
}

// IsLimitKey reports whether name is one of LimitKeys.
func IsLimitKey(name string) bool {
	_, ok := LookupLimit(name)
	return ok
}

func countLimit(name, doc string, field func(*LimitSet) *int64, m LimitMechanism) LimitKey {
	return LimitKey{Name: name, Doc: doc, Mechanism: m,
		Set: func(l *LimitSet, value string) error {
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return fmt.Errorf("want a whole number of IOs per second, got %q", value)
			}
			if n <= 0 {
				return fmt.Errorf("must be more than 0 (got %d); leave the key out for no limit", n)
			}
			*field(l) = n
			return nil
		},
		Get: func(l LimitSet) string { return numText(*field(&l)) }}
}

func sizeLimit(name, doc string, field func(*LimitSet) *int64, restarts func(prev, next LimitSet) bool, m LimitMechanism) LimitKey {
	return LimitKey{Name: name, Doc: doc, Mechanism: m, Restarts: restarts,
		Set: func(l *LimitSet, value string) error {
			n, err := ParseBytes(value)
			if err != nil {
				return err
			}
			*field(l) = n
			return nil
		},
		Get: func(l LimitSet) string { return numText(*field(&l)) }}
}

func cpuListLimit(name, doc string, field func(*LimitSet) *string, client bool, m LimitMechanism) LimitKey {
	return LimitKey{Name: name, Doc: doc, Mechanism: m, Client: client,
		Set: func(l *LimitSet, value string) error {
			if _, err := ParseCPUList(value); err != nil {
				return err
			}
			*field(l) = value
			return nil
		},
		Get: func(l LimitSet) string { return *field(&l) }}
}

func setCPUs(l *LimitSet, value string) error {
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
	return nil
}

func numText(n int64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
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
	if k, ok := LookupLimit(key); ok {
		return k.Get(l)
	}
	return ""
}

// String lists the limits set, as key=value in LimitKeys' order; sizes in
// bytes. "none" when no limit is set.
func (l LimitSet) String() string {
	var parts []string
	for _, k := range LimitTable {
		if v := k.Get(l); v != "" {
			parts = append(parts, k.Name+"="+v)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// Text prints a limit set for people: sizes with a unit ("2G", "8M/s"),
// "none" when no limit is set.
func (l LimitSet) Text() string {
	var parts []string
	for _, k := range LimitKeys {
		v := l.Get(k)
		if v == "" {
			continue
		}
		switch k {
		case "disk_write_bps", "disk_read_bps":
			n, _ := strconv.ParseInt(v, 10, 64)
			v = FormatBytes(n) + "/s"
		case "memory":
			n, _ := strconv.ParseInt(v, 10, 64)
			v = FormatBytes(n)
		}
		parts = append(parts, k+"="+v)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// Set parses one key's value onto l. Every limit must be positive; CPU
// lists must be well formed (whether the machine has them is CheckCPUs').
func (l *LimitSet) Set(key, value string) error {
	k, ok := LookupLimit(key)
	if !ok {
		return fmt.Errorf("%q is not a limit (known: %s)", key, strings.Join(LimitKeys, ", "))
	}
	return k.Set(l, strings.TrimSpace(value))
}

// Merge returns l with every limit o sets taken from o.
func (l LimitSet) Merge(o LimitSet) LimitSet {
	for _, k := range LimitTable {
		if v := k.Get(o); v != "" {
			_ = k.Set(&l, v)
		}
	}
	return l
}

// LimitChange is one limit key whose value differs between two cells:
// the new value, "(none)" for a limit lifted.
type LimitChange struct{ Name, Value string }

// ChangedLimits lists the keys whose values differ from prev to next, and
// whether one of them restarts the server (LimitKey.Restarts).
func ChangedLimits(prev, next LimitSet) (changes []LimitChange, restart bool) {
	for _, k := range LimitTable {
		if k.Restarts != nil && k.Restarts(prev, next) {
			restart = true
		}
		a, b := k.Get(prev), k.Get(next)
		if a == b {
			continue
		}
		if b == "" {
			b = "(none)"
		}
		changes = append(changes, LimitChange{k.Name, b})
	}
	return changes, restart
}
