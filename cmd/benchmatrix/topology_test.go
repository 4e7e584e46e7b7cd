package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchmatrix/topology"
)

// A Galera cluster's nodes die with a SIGKILLed benchmatrix (the servers
// keep their parent-death signal: they never change user), and the next
// run removes their directories.
func TestSIGKILLLeavesNoGaleraNode(t *testing.T) {
	needServer(t)
	if err := topology.CheckGalera(); err != nil {
		t.Skip(err)
	}
	m := strings.Replace(slowManifest, "[workload]", "[topology]\nkind = \"galera\"\nnodes = 3\n[workload]", 1)
	cmd, _ := startRun(t, writeManifest(t, m), filepath.Join(t.TempDir(), "r"))
	pid := cmd.Process.Pid
	if n := len(serversOf(pid)); n != 3 {
		t.Fatalf("%d servers for a 3-node cluster", n)
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for len(serversOf(pid)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := serversOf(pid); len(left) > 0 {
		t.Fatalf("nodes outlived a SIGKILLed benchmatrix: %v", left)
	}
	next := exec.Command(binary, "run", writeManifest(t, strings.Replace(slowManifest, `"20s"`, `"1s"`, 1)), "-o", filepath.Join(t.TempDir(), "r2"), "-q")
	if out, err := next.CombinedOutput(); err != nil || !strings.Contains(string(out), "left by a benchmatrix process that no longer runs") {
		t.Fatalf("next run: %v\n%s", err, out)
	}
	if d := sandboxDirsOf(pid); len(d) > 0 {
		t.Fatalf("stale directories remain: %v", d)
	}
}

// A topology on the external provider is refused before anything runs.
func TestTopologyOnExternalExits2(t *testing.T) {
	t.Parallel()
	m := writeManifest(t, "[server]\nprovider = \"external\"\ndsn = \"u@tcp(127.0.0.1:1)/\"\n[topology]\nkind = \"replicas\"\nreplicas = 2\n[workload]\nname = \"oltp_insert\"\n")
	out, err := exec.Command(binary, "run", m).CombinedOutput()
	if code := exitStatus(err); code != 2 || !strings.Contains(string(out), "line 3: server.dsn: the replicas topology has 3 nodes: give one DSN per node") {
		t.Fatalf("exit %d: %s", code, out)
	}
	// --dsn once per node, one short.
	out, err = exec.Command(binary, "run", m, "--dsn", "u@tcp(127.0.0.1:1)/", "--dsn", "u@tcp(127.0.0.1:2)/").CombinedOutput()
	if code := exitStatus(err); code != 2 || !strings.Contains(string(out), "(got 2)") {
		t.Fatalf("two --dsn for three nodes: exit %d: %s", code, out)
	}
}
