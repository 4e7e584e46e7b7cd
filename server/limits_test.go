package server

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchmatrix/catalog"
)

func needCgroupRoot(t *testing.T, l catalog.LimitSet) {
	t.Helper()
	if _, err := FindBinary(""); err != nil {
		t.Skip(err)
	}
	if err := CheckLimitSupport(l); err != nil {
		t.Skipf("this machine cannot apply limits: %v", err)
	}
}

// A real sandbox under every limit: each reads back from its cgroup, the
// disk cap is measured by the self-check (device writes within 15% of the
// cap), the server restarts inside its group, and Stop removes the group.
func TestSandboxLimitsInForce(t *testing.T) {
	want := catalog.LimitSet{DiskWriteIOPS: 100, DiskReadIOPS: 300, DiskWriteBPS: 50 << 20, DiskReadBPS: 60 << 20,
		CPUs: 0.5, ServerCPUs: "0", Memory: 1 << 30}
	needCgroupRoot(t, want)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sb, err := StartSandbox(ctx, SandboxConfig{Limits: want})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Stop(context.Background())
	in, err := sb.SetLimits(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("in force: %s %s %s %v", in.Mechanism, in.Cgroup, in.Device, in.ReadBack)
	dev := strings.Fields(in.Device)[0]
	for file, v := range map[string]string{
		"blkio.throttle.write_iops_device": dev + " 100", "blkio.throttle.read_iops_device": dev + " 300",
		"blkio.throttle.write_bps_device": dev + " 52428800", "blkio.throttle.read_bps_device": dev + " 62914560",
		"cpu.cfs_quota_us": "50000", "cpuset.cpus": "0", "memory.limit_in_bytes": "1073741824",
	} {
		if got := in.ReadBack[file]; got != v {
			t.Errorf("%s reads back %q, want %q", file, got, v)
		}
	}
	// The server's process is in every group.
	groups := sb.lim.group.dirs
	pid := sb.PID()
	for c, dir := range groups {
		b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if !strings.Contains("\n"+string(b), "\n"+strconv.Itoa(pid)+"\n") {
			t.Errorf("server pid %d not in %s group %s", pid, c, dir)
		}
	}
	dc, err := sb.CheckDisk(ctx, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("disk check: %+v", dc)
	if dc.Ratio < 0.85 || dc.Ratio > 1.15 {
		t.Errorf("device write IOPS %.1f not within 15%% of the cap 100", dc.DeviceWriteIOPS)
	}
	// A restart starts the new process inside the group, under the same
	// limits: the stop lifted them (a throttled shutdown is slow), the
	// start puts them back (so does a snapshot's and a restore's).
	lifted := false
	for _, restart := range []func() error{
		func() error { return sb.Restart(ctx, nil) },
		func() error { return sb.Snapshot(ctx, "limits") },
		func() error { return sb.Restore(ctx, "limits", nil) },
	} {
		if err := restart(); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(groups["blkio"], "cgroup.procs"))
		if !strings.Contains("\n"+string(b), "\n"+strconv.Itoa(sb.PID())+"\n") {
			t.Errorf("restarted server pid %d not in its blkio group", sb.PID())
		}
		for file, v := range map[string]string{
			"blkio.throttle.write_iops_device": dev + " 100", "blkio.throttle.read_iops_device": dev + " 300",
			"cpu.cfs_quota_us": "50000", "memory.limit_in_bytes": "1073741824",
		} {
			ctrl, _, _ := strings.Cut(file, ".")
			got, err := readTrim(filepath.Join(groups[ctrl], file))
			if strings.HasPrefix(file, "blkio.") {
				got = deviceLine(got, dev)
			}
			if err != nil || got != v {
				t.Errorf("after a restart %s reads %q (%v), want %q", file, got, err, v)
				lifted = true
			}
		}
	}
	if !lifted {
		t.Log("the limits held over a restart, a snapshot and a restore")
	}
	// Lifted: zero limits read back as none.
	in, err = sb.SetLimits(ctx, catalog.LimitSet{})
	if err != nil || len(in.ReadBack) != 0 {
		t.Errorf("lifted limits read back %v (%v)", in.ReadBack, err)
	}
	dirs := make([]string, 0, len(groups))
	for _, d := range groups {
		dirs = append(dirs, d)
	}
	if err := sb.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("cgroup %s left after Stop", d)
		}
	}
}

// The emergency path removes the group too.
func TestSandboxLimitsKillAll(t *testing.T) {
	want := catalog.LimitSet{DiskWriteIOPS: 100}
	needCgroupRoot(t, want)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sb, err := StartSandbox(ctx, SandboxConfig{Limits: want})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sb.SetLimits(ctx, want); err != nil {
		sb.kill()
		t.Fatal(err)
	}
	dir := sb.lim.group.Path()
	KillAll()
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("cgroup %s left after KillAll", dir)
	}
}

// Fake hierarchies: v1 and v2 files written and read back, stale groups of
// dead owners swept, others' groups untouched.
func TestCgroupFilesFake(t *testing.T) {
	for _, v2 := range []bool{false, true} {
		root := t.TempDir()
		proc := filepath.Join(root, "self-cgroup")
		if v2 {
			os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpu io memory cpuset"), 0o644)
			os.WriteFile(filepath.Join(root, "cgroup.subtree_control"), []byte("cpu io memory"), 0o644)
			os.WriteFile(proc, []byte("0::/bench\n"), 0o644)
			if err := checkLimitSupport(root, proc, catalog.LimitSet{ServerCPUs: "0"}, 0); err == nil || !strings.Contains(err.Error(), "cpuset") {
				t.Errorf("v2 without cpuset in subtree_control: %v", err)
			}
		} else {
			os.WriteFile(proc, []byte("4:memory:/x\n3:blkio:/\n"), 0o644)
			for _, c := range []string{"blkio", "memory"} {
				os.MkdirAll(filepath.Join(root, c, "x"), 0o755)
			}
			if err := checkLimitSupport(root, proc, catalog.LimitSet{CPUs: 1}, 0); err == nil || !strings.Contains(err.Error(), "cpu (no cpu.cfs_quota_us") {
				t.Errorf("v1 without cpu: %v", err)
			}
		}
		if err := checkLimitSupport(root, proc, catalog.LimitSet{Memory: 1 << 30}, 1000); err == nil || !strings.Contains(err.Error(), "need root") {
			t.Errorf("not root: %v", err)
		}
		// A group of a dead owner, one of a live one and someone else's.
		parent := root
		if !v2 {
			parent = filepath.Join(root, "blkio")
		}
		dead := filepath.Join(parent, CgroupPrefix+"999999999-1")
		live := filepath.Join(parent, CgroupPrefix+strconv.Itoa(os.Getppid())+"-1")
		other := filepath.Join(parent, "docker")
		for _, d := range []string{dead, live, other} {
			os.Mkdir(d, 0o755)
		}
		var said []string
		removeStaleCgroups(root, proc, func(w string) { said = append(said, w) })
		if len(said) != 1 || !strings.Contains(said[0], dead) {
			t.Errorf("v2=%v: swept %v, want only %s", v2, said, dead)
		}
		for _, d := range []string{live, other} {
			if _, err := os.Stat(d); err != nil {
				t.Errorf("swept %s, which is not a dead benchmatrix's", d)
			}
		}
	}
}

func TestDeviceLineAndStats(t *testing.T) {
	if got := deviceLine("8:0 100\n254:0 200\n", "254:0"); got != "254:0 200" {
		t.Errorf("deviceLine: %q", got)
	}
	p := filepath.Join(t.TempDir(), "io_serviced")
	os.WriteFile(p, []byte("254:0 Read 5\n254:0 Write 7\n254:0 Sync 7\nTotal 12\n"), 0o644)
	if st := blkioPair(p, "254:0"); st.ReadIOs != 5 || st.WriteIOs != 7 {
		t.Errorf("blkioPair: %+v", st)
	}
}

// A process holding a limited sandbox is killed with SIGKILL: its server
// dies with it (parent-death signal), its cgroup stays, and the next
// Sweep removes the cgroup and names it.
func TestLimitsSweptAfterSIGKILL(t *testing.T) {
	if os.Getenv("BENCHMATRIX_LIMITS_CHILD") == "1" {
		ctx := context.Background()
		l := catalog.LimitSet{DiskWriteIOPS: 100, Memory: 1 << 30}
		sb, err := StartSandbox(ctx, SandboxConfig{Limits: l})
		if err != nil {
			os.Stdout.WriteString("ERR " + err.Error() + "\n")
			os.Exit(1)
		}
		if _, err := sb.SetLimits(ctx, l); err != nil {
			os.Stdout.WriteString("ERR " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("READY " + sb.lim.group.Path() + "\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	needCgroupRoot(t, catalog.LimitSet{DiskWriteIOPS: 100, Memory: 1 << 30})
	cmd := exec.Command(os.Args[0], "-test.run=^TestLimitsSweptAfterSIGKILL$")
	cmd.Env = append(os.Environ(), "BENCHMATRIX_LIMITS_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if !strings.HasPrefix(line, "READY ") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q", line)
	}
	dir := strings.TrimSpace(strings.TrimPrefix(line, "READY "))
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the killed process's cgroup %s is already gone: the test shows nothing", dir)
	}
	// Its server dies with it; the group empties.
	deadline := time.Now().Add(15 * time.Second)
	var said []string
	for time.Now().Before(deadline) {
		said = append(said, RemoveStaleCgroups(nil)...)
		if _, err := os.Stat(dir); err != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Fatalf("cgroup %s survived the sweep", dir)
	}
	if !slices.Contains(said, dir) {
		t.Errorf("the sweep did not name %s: %v", dir, said)
	}
	RemoveStale("", nil) // the child's sandbox directory
}
