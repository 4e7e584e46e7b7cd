package server

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/exitcode"
	"benchmatrix/stale"
)

// The cgroup files are written by hand rather than through
// github.com/containerd/cgroups/v3 (available, v3.1.3): benchmatrix needs
// eight files per version, must create and remove only its own groups, and
// must never enable a controller in a parent it did not create; the
// library would bring a dozen modules (cilium/ebpf, runtime-spec, godbus)
// for that, and its v1 Manager creates every controller's group at once.

// CgroupRoot is where the cgroup filesystems are mounted.
const CgroupRoot = "/sys/fs/cgroup"

// CgroupPrefix begins every cgroup benchmatrix creates; the rest is the
// owner's process id and a sequence number, so that the next run can
// remove those left by a benchmatrix killed with SIGKILL.
const CgroupPrefix = "benchmatrix-"

// v1Controllers are the cgroup v1 hierarchies a limit group spans.
var v1Controllers = []string{"blkio", "cpu", "cpuset", "memory"}

// LimitsUnsupportedError says the machine cannot apply the limits asked
// for (not root, no cgroup controller, no block device): exit 2, before
// the first cell.
type LimitsUnsupportedError struct{ Msg string }

func (e *LimitsUnsupportedError) Error() string { return e.Msg }

// ExitCode implements exitcode.Coder.
func (e *LimitsUnsupportedError) ExitCode() int { return exitcode.Usage }

// cgroupGroup is one server's cgroup: a directory per v1 controller, or
// one v2 directory. owned groups were created here and are removed; an
// adopted one (a container's) is only written.
type cgroupGroup struct {
	v2    bool
	dirs  map[string]string // v1: controller -> directory; v2: "" -> directory
	own   map[string]string // this process's own cgroup per controller (to leave a thread's move)
	owned bool
	root  string
}

var cgroupSeq atomic.Int64

// cgroupV2 reports whether root is a cgroup v2 (unified) mount.
func cgroupV2(root string) bool {
	_, err := os.Stat(filepath.Join(root, "cgroup.controllers"))
	return err == nil
}

// selfCgroups reads /proc/self/cgroup: the controller list of each v1
// hierarchy (and "" for the v2 one) to the path of this process in it.
func selfCgroups(procFile string) map[string]string {
	out := map[string]string{}
	f, err := os.Open(procFile)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out
}

// neededControllers lists the v1 controllers (or v2 controller names) a
// limit set uses, with the file that proves each is there (v1), from
// catalog.LimitTable.
func neededControllers(l catalog.LimitSet, v2 bool) map[string]string {
	need := map[string]string{}
	for _, k := range catalog.LimitTable {
		m := k.Mechanism
		switch {
		case k.Client || k.Get(l) == "":
		case v2 && m.V2Controller != "":
			need[m.V2Controller] = strings.Fields(m.V2File)[0]
		case !v2 && m.V1Controller != "":
			if _, seen := need[m.V1Controller]; !seen {
				need[m.V1Controller] = m.V1File
			}
		}
	}
	return need
}

// CheckLimitSupport says, before any server starts, whether this machine
// can apply the limits: root, and every controller they need. The error
// names what is missing (exit 2).
func CheckLimitSupport(l catalog.LimitSet) error {
	return checkLimitSupport(CgroupRoot, "/proc/self/cgroup", l.Server(), os.Geteuid())
}

func checkLimitSupport(root, procFile string, l catalog.LimitSet, euid int) error {
	if l.IsZero() {
		return nil
	}
	if euid != 0 {
		return &LimitsUnsupportedError{Msg: fmt.Sprintf("resource limits (%s) need root to create cgroups; run as root or drop the limit keys", l)}
	}
	v2 := cgroupV2(root)
	need := neededControllers(l, v2)
	var missing []string
	if v2 {
		parent := v2Parent(root, selfCgroups(procFile)[""])
		have, _ := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
		enabled := map[string]bool{}
		for _, c := range strings.Fields(string(have)) {
			enabled[c] = true
		}
		for c := range need {
			if !enabled[c] {
				missing = append(missing, fmt.Sprintf("%s (enable it with `echo +%s > %s/cgroup.subtree_control`)", c, c, parent))
			}
		}
	} else {
		for c, file := range need {
			if _, err := os.Stat(filepath.Join(root, c, file)); err != nil {
				missing = append(missing, fmt.Sprintf("%s (no %s under %s)", c, file, filepath.Join(root, c)))
			}
		}
	}
	if len(missing) > 0 {
		sortStrings(missing)
		return &LimitsUnsupportedError{Msg: fmt.Sprintf("resource limits (%s): this machine lacks the cgroup controller(s) %s",
			l, strings.Join(missing, "; "))}
	}
	return nil
}

// v2Parent is where benchmatrix makes its v2 groups: beside its own cgroup
// (a v2 group with processes cannot have controllers in its children).
func v2Parent(root, self string) string {
	if self == "" || self == "/" {
		return root
	}
	return filepath.Join(root, filepath.Dir(self))
}

// newCgroup creates an empty limit group (no limit written yet).
func newCgroup(root, procFile string) (*cgroupGroup, error) {
	self := selfCgroups(procFile)
	name := fmt.Sprintf("%s%d-%d", CgroupPrefix, os.Getpid(), cgroupSeq.Add(1))
	g := &cgroupGroup{v2: cgroupV2(root), dirs: map[string]string{}, own: map[string]string{}, owned: true, root: root}
	if g.v2 {
		dir := filepath.Join(v2Parent(root, self[""]), name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create cgroup: %w", err)
		}
		g.dirs[""] = dir
		return g, nil
	}
	for _, c := range v1Controllers {
		base := filepath.Join(root, c)
		if _, err := os.Stat(base); err != nil {
			continue // a controller this machine lacks; CheckLimitSupport names it when needed
		}
		g.own[c] = filepath.Join(base, self[c])
		dir := filepath.Join(base, self[c], name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			g.remove()
			return nil, fmt.Errorf("create cgroup: %w", err)
		}
		g.dirs[c] = dir
		if c == "cpuset" {
			// A new cpuset has no CPUs and no memory nodes: take the parent's.
			for _, f := range []string{"cpuset.mems", "cpuset.cpus"} {
				v, err := readTrim(filepath.Join(filepath.Dir(dir), f))
				if err == nil {
					err = writeFile(filepath.Join(dir, f), v)
				}
				if err != nil {
					g.remove()
					return nil, fmt.Errorf("cgroup %s: %w", f, err)
				}
			}
		}
	}
	return g, nil
}

// Path names the group for run.json: its v2 directory or its blkio one.
func (g *cgroupGroup) Path() string {
	if g.v2 {
		return g.dirs[""]
	}
	if d, ok := g.dirs["blkio"]; ok {
		return d
	}
	for _, c := range v1Controllers {
		if d, ok := g.dirs[c]; ok {
			return d
		}
	}
	return ""
}

// version is "v1" or "v2".
func (g *cgroupGroup) version() string {
	if g.v2 {
		return "v2"
	}
	return "v1"
}

// addProcess moves a process, all its threads, into the group.
func (g *cgroupGroup) addProcess(pid int) error {
	for c, dir := range g.dirs {
		if err := writeFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return fmt.Errorf("move pid %d into cgroup %s: %w", pid, nameOr(c), err)
		}
	}
	return nil
}

func nameOr(c string) string {
	if c == "" {
		return "v2"
	}
	return c
}

func fileHasDevice(p, dev string) bool {
	b, _ := os.ReadFile(p)
	return deviceLine(string(b), dev) != ""
}

// deviceLine is the line of a per-device cgroup file about dev ("" if none).
func deviceLine(text, dev string) string {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, dev+" ") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// lift removes every limit, so that a stop is not throttled.
func (g *cgroupGroup) lift(dev string) error {
	_, err := g.apply(catalog.LimitSet{}, dev)
	return err
}

// remove deletes the group's directories (owned groups only). A directory
// still holding a task (a server exiting) is retried for a few seconds.
func (g *cgroupGroup) remove() error {
	if g == nil || !g.owned {
		return nil
	}
	var errs []error
	for c, dir := range g.dirs {
		if err := rmdirRetry(dir, 5*time.Second); err != nil {
			errs = append(errs, err)
		} else {
			delete(g.dirs, c)
		}
	}
	return errors.Join(errs...)
}

func rmdirRetry(dir string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Rmdir(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("remove cgroup %s: %w", dir, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// RemoveStaleCgroups removes the cgroups of benchmatrix processes that no
// longer run (killed with SIGKILL: their servers died with them), naming
// each. It looks under each hierarchy's root and beside this process's own
// cgroup; a group still holding a task is left (and not reported).
func RemoveStaleCgroups(report func(what string)) []string {
	return removeStaleCgroups(CgroupRoot, "/proc/self/cgroup", report)
}

func removeStaleCgroups(root, procFile string, report func(string)) []string {
	self := selfCgroups(procFile)
	var parents []string
	if cgroupV2(root) {
		parents = append(parents, root, v2Parent(root, self[""]))
	} else {
		for _, c := range v1Controllers {
			parents = append(parents, filepath.Join(root, c), filepath.Join(root, c, self[c]))
		}
	}
	var removed []string
	seen := map[string]bool{}
	for _, parent := range parents {
		if seen[parent] {
			continue
		}
		seen[parent] = true
		entries, err := os.ReadDir(parent)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() || !strings.HasPrefix(e.Name(), CgroupPrefix) {
				continue
			}
			pidText, _, ok := strings.Cut(strings.TrimPrefix(e.Name(), CgroupPrefix), "-")
			pid, err := strconv.Atoi(pidText)
			if !ok || err != nil || !stale.Gone(pid) {
				continue
			}
			p := filepath.Join(parent, e.Name())
			if rmdirRetry(p, 0) == nil {
				removed = append(removed, p)
				if report != nil {
					report("cgroup " + p)
				}
			}
		}
	}
	return removed
}

// BlockDevice finds the whole disk under path: "MAJ:MIN" and its name
// (a partition's throttle must name its disk).
func BlockDevice(path string) (dev, name string, err error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return "", "", err
	}
	major, minor := (st.Dev>>8)&0xfff|(st.Dev>>32)&^0xfff, st.Dev&0xff|(st.Dev>>12)&^0xff
	if major == 0 {
		return "", "", &LimitsUnsupportedError{Msg: fmt.Sprintf("%s is on a filesystem without a block device (tmpfs, overlay or similar): "+
			"disk limits cannot apply; give [server] tmpdir on a real disk", path)}
	}
	sys := fmt.Sprintf("/sys/dev/block/%d:%d", major, minor)
	real, err := filepath.EvalSymlinks(sys)
	if err != nil {
		return fmt.Sprintf("%d:%d", major, minor), "", nil
	}
	if _, err := os.Stat(filepath.Join(real, "partition")); err == nil {
		real = filepath.Dir(real)
	}
	d, err := readTrim(filepath.Join(real, "dev"))
	if err != nil {
		return "", "", err
	}
	return d, filepath.Base(real), nil
}

func readTrim(p string) (string, error) {
	b, err := os.ReadFile(p)
	return strings.TrimSpace(string(b)), err
}

func writeFile(p, v string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(v)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// oomKills is the group's count of processes the OOM killer killed in it:
// oom_kill in memory.events (v2) or memory.oom_control (v1, kernel 4.13
// and later); false when the group has no memory controller or the kernel
// does not count.
func (g *cgroupGroup) oomKills() (int64, bool) {
	var p string
	switch {
	case g.v2:
		p = filepath.Join(g.dirs[""], "memory.events")
	case g.dirs["memory"] != "":
		p = filepath.Join(g.dirs["memory"], "memory.oom_control")
	default:
		return 0, false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, false
	}
	return oomKillCount(string(b))
}

// oomKillCount reads the oom_kill line of memory.events or
// memory.oom_control ("oom_kill 1").
func oomKillCount(text string) (int64, bool) {
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "oom_kill" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
