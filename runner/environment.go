package runner

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"benchmatrix/record"
)

// hostFacts reads what the run's numbers depend on from the machine: CPU,
// cores, memory, kernel, and the storage under the datadir.
func hostFacts(datadir string) record.Host {
	h := record.Host{Cores: runtime.NumCPU()}
	h.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				h.CPUModel = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) >= 2 && fields[0] == "MemTotal:" {
				kb, _ := strconv.ParseInt(fields[1], 10, 64)
				h.MemoryMB = kb / 1024
				break
			}
		}
		f.Close()
	}
	if datadir != "" {
		h.Storage, h.Filesystem = mountOf(datadir)
	}
	return h
}

// mountOf finds the device and filesystem type of the mount holding path:
// the longest mount point in /proc/self/mounts that prefixes it.
func mountOf(path string) (device, fstype string) {
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return "", ""
	}
	defer f.Close()
	best := -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		mp := fields[1]
		if (path == mp || strings.HasPrefix(path, strings.TrimSuffix(mp, "/")+"/")) && len(mp) > best {
			best, device, fstype = len(mp), fields[0], fields[2]
		}
	}
	var st syscall.Statfs_t
	if fstype == "" && syscall.Statfs(path, &st) == nil {
		fstype = "unknown"
	}
	return device, fstype
}
