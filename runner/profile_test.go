package runner

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchmatrix/experiment"
	"benchmatrix/profile"
	"benchmatrix/record"
	"benchmatrix/results"
)

func needPerf(t *testing.T) {
	t.Helper()
	if err := profile.Check(profile.OnCPU, profile.OffCPU); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install perf and run as root: %v", err)
		}
		t.Skip(err)
	}
}

const profileFlush = `
[experiment]
name = "profile-flush"
baseline = "b1e1"
duration = "5s"
warmup = "1s"
profile = "both"
[server.config]
log_bin = "binlog"
[workload]
name = "oltp_insert"
table_size = 1000
[scenarios]
b1e1 = { sync_binlog = 1, innodb_flush_log_at_trx_commit = 1 }
b0e0 = { sync_binlog = 0, innodb_flush_log_at_trx_commit = 0 }
`

// A real sandbox under a 1-thread insert load, profiled: the on-CPU
// profile names mariadbd's functions, and in the b1e1 cell's off-CPU
// profile the commit's fsync paths hold a large share of the connection
// thread's time off CPU. The files are written, summary.md has the
// prediction and the profiler's cost, and perf leaves nothing behind.
func TestProfilesOnSandbox(t *testing.T) {
	needServer(t)
	needPerf(t)
	m, err := experiment.Parse("profile-flush.toml", profileFlush)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := experiment.Resolve(m, experiment.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	run, err := Run(context.Background(), plan, Config{OutDir: dir, Start: sandboxStart, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]record.Cell{}
	for _, c := range run.Cells {
		byName[c.Name] = c
	}
	b1 := byName["b1e1/profile=both"]
	if b1.Profile == nil || b1.Profile.CPU == nil || b1.Profile.OffCPU == nil {
		t.Fatalf("b1e1 has no profiles: %+v (notes %v)", b1.Profile, b1.ObserveNotes)
	}
	if twin := byName["b1e1/profile=off"]; twin.Status != record.CellOK || twin.Profile != nil {
		t.Fatalf("the unprofiled twin: %+v", twin)
	}
	for _, f := range []string{b1.Profile.CPU.Folded, b1.Profile.CPU.SVG, b1.Profile.CPU.Pprof, b1.Profile.OffCPU.SVG} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	on := readProfile(t, filepath.Join(dir, b1.Profile.CPU.Folded), profile.OnCPU)
	named := 0
	for _, f := range on.Only(profile.KindConnection).Top(30) {
		switch f.Name {
		case "dispatch_command", "mysql_parse", "mysql_execute_command", "ha_commit_trans", "trans_commit_stmt", "mysql_insert":
			named++
		}
	}
	if named < 3 {
		t.Errorf("the on-CPU profile names %d of mariadbd's statement functions; top: %v", named, on.Top(30))
	}
	off := readProfile(t, filepath.Join(dir, b1.Profile.OffCPU.Folded), profile.OffCPU).Only(profile.KindConnection)
	if off.Empty() {
		t.Fatal("no connection thread in the off-CPU profile")
	}
	fsync := off.Inclusive("fdatasync", "fsync")
	commit := off.Inclusive("ha_commit_trans")
	t.Logf("b1e1 connection off-CPU: %.2f s, fsync paths %.1f%%, under ha_commit_trans %.1f%%", float64(off.Total())/1e9, 100*fsync, 100*commit)
	if fsync < 0.4 || commit < fsync*0.9 {
		t.Errorf("fsync paths hold %.1f%% of the connection's off-CPU time (%.1f%% under ha_commit_trans): want a large share, from the commit", 100*fsync, 100*commit)
	}
	summary, err := os.ReadFile(filepath.Join(dir, results.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### Predicted against measured", "| b0e0/profile=both | b1e1/profile=both | on-CPU |", "### The profiler's cost", "profiles/b1e1_profile=both-r1/offcpu.svg"} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "profiles", "b0e0_profile=both", "diff-vs-baseline-offcpu.svg")); err != nil {
		t.Error(err)
	}
	marker := profile.DirPrefix + strconv.Itoa(os.Getpid()) + "-"
	if left, _ := filepath.Glob(filepath.Join(os.TempDir(), marker+"*")); len(left) > 0 {
		t.Errorf("perf files left in TMPDIR: %v", left)
	}
}

func readProfile(t *testing.T, path string, mode profile.Mode) *profile.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.ReadFolded(f, mode, int64(time.Second)/experiment.DefaultProfileHz)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The docker provider: perf records the container's mariadbd by its host
// pid, and resolves its symbols inside the container.
func TestProfilesOnDocker(t *testing.T) {
	needDockerImage(t)
	needPerf(t)
	plan := planFrom(t, `
[experiment]
duration = "4s"
warmup = "1s"
profile = "cpu"
[server]
provider = "docker"
[workload]
name = "oltp_insert"
table_size = 1000
`)
	dir := t.TempDir()
	run, err := Run(context.Background(), plan, Config{OutDir: dir, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	var cpu *record.ModeProfile
	for _, c := range run.Cells {
		if c.Profile != nil {
			cpu = c.Profile.CPU
		}
	}
	if cpu == nil || cpu.Empty {
		t.Fatalf("no on-CPU profile of the container's server: %+v", cpu)
	}
	p := readProfile(t, filepath.Join(dir, cpu.Folded), profile.OnCPU)
	if p.Inclusive("dispatch_command", "mysql_execute_command") < 0.3 {
		t.Errorf("the container's server functions are not named: %v", p.Top(20))
	}
}
