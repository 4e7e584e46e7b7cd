package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// gateManifest is a single-thread insert load in two scenarios; the slow
// variant changes scenario fast to the durable settings.
const gateManifest = `
[experiment]
name = "gate"
baseline = "durable"
duration = "3s"
warmup = "1s"
repeats = 4

[server.config]
log_bin = "binlog"
innodb_buffer_pool_size = "128M"

[workload]
name = "oltp_insert"
table_size = 1000
threads = 1

[scenarios]
durable = { sync_binlog = 1, innodb_flush_log_at_trx_commit = 1 }
fast = { sync_binlog = 0, innodb_flush_log_at_trx_commit = 0 }
`

// cpuHog keeps every CPU busy until the returned stop is called.
func cpuHog() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < runtime.NumCPU(); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
			}
		}()
	}
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}

// compare that knows the host, on real runs (issue 26): two runs of one
// manifest, the second beside a CPU hog, pass the gate and say why; a run
// whose scenario fast was changed to the durable settings fails it (exit 3),
// naming the cell and the change.
func TestCompareKnowsTheHostReal(t *testing.T) {
	needServer(t)
	tmp := t.TempDir()
	run := func(name, manifest string) string {
		out := filepath.Join(tmp, name)
		if b, err := exec.Command(binary, "run", writeManifest(t, manifest), "-o", out, "-q").CombinedOutput(); err != nil {
			t.Fatalf("run %s: %v\n%s", name, err, b)
		}
		return out
	}
	compare := func(base, new string) (int, string) {
		out, err := exec.Command(binary, "compare", base, new).CombinedOutput()
		return exitStatus(err), string(out)
	}
	base := run("base", gateManifest)

	stop := cpuHog()
	t.Cleanup(stop)
	hog := run("hog", gateManifest)
	stop()
	code, out := compare(base, hog)
	t.Logf("compare base hog: exit %d\n%s", code, out)
	if code != 0 || !strings.Contains(out, "No regressions") {
		t.Fatalf("identical settings, the new run beside a CPU hog: exit %d, want 0", code)
	}
	// It says why: the new run's contention, per cell and in the Host
	// paragraph; a worsening, if one was significant, is not counted.
	if !strings.Contains(out, "new contended in 4 of 4 repeats") || !strings.Contains(out, "Host: other load") {
		t.Errorf("the hog's contention is not shown beside the cells")
	}
	if strings.Contains(out, "worse, contended") && !strings.Contains(out, "Not counted:") {
		t.Errorf("a discounted worsening without the reason in the verdict")
	}

	slow := strings.Replace(gateManifest, "fast = { sync_binlog = 0, innodb_flush_log_at_trx_commit = 0 }",
		"fast = { sync_binlog = 1, innodb_flush_log_at_trx_commit = 1 }", 1)
	changed := run("changed", slow)
	code, out = compare(base, changed)
	t.Logf("compare base changed: exit %d\n%s", code, out)
	if code != 3 {
		t.Fatalf("scenario fast changed to slower settings: exit %d, want 3", code)
	}
	for _, want := range []string{
		"fast    │ tps    │", "REGRESSION",
		"What changed there: fast: innodb_flush_log_at_trx_commit 0 -> 1, sync_binlog 0 -> 1.",
		"- fast\n  - changed: innodb_flush_log_at_trx_commit 0 -> 1, sync_binlog 0 -> 1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "Unmatched") {
		t.Errorf("the changed cell is listed as unmatched")
	}
}
