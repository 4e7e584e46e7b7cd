package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/record"
	"benchmatrix/results"
	"benchmatrix/swarm"
)

// dockerState is what the swarm tests must leave as they found it.
type dockerState struct {
	swarm      string
	networks   []string
	containers []string // labelled by a swarm run
	services   []string
}

func docker(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func fields(s string) []string {
	f := strings.Fields(s)
	sort.Strings(f)
	return f
}

func readDockerState(t *testing.T) dockerState {
	t.Helper()
	st := dockerState{
		swarm:      docker(t, "info", "--format", "{{.Swarm.LocalNodeState}}"),
		networks:   fields(docker(t, "network", "ls", "--format", "{{.Name}}")),
		containers: fields(docker(t, "ps", "-aq", "--filter", "label="+swarm.LabelRun)),
	}
	if st.swarm == "active" {
		st.services = fields(docker(t, "service", "ls", "-q", "--filter", "label="+swarm.LabelRun))
	}
	return st
}

func needSwarmImage(t *testing.T) {
	t.Helper()
	needServer(t)
	if err := exec.Command("docker", "info").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI has a Docker engine: %v", err)
		}
		t.Skipf("no Docker engine reachable: %v", err)
	}
	if err := exec.Command("docker", "image", "inspect", catalog.DefaultDockerImage).Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI runs make test, which builds %s first", catalog.DefaultDockerImage)
		}
		t.Skipf("image %s not built (make docker-image)", catalog.DefaultDockerImage)
	}
	if st := docker(t, "info", "--format", "{{.Swarm.LocalNodeState}}"); st != "inactive" && st != "active" {
		t.Skipf("the engine's swarm state is %q", st)
	}
}

func checkLeftAsFound(t *testing.T, before dockerState) {
	t.Helper()
	after := readDockerState(t)
	if after.swarm != before.swarm {
		t.Errorf("swarm state %q, was %q", after.swarm, before.swarm)
	}
	// Other programs may make networks meanwhile: only those a swarm makes count.
	for _, n := range []string{"docker_gwbridge", "ingress"} {
		if n == "docker_gwbridge" && before.swarm == "active" {
			continue // Swarm makes it for a node's first task: the existing swarm's, not benchmatrix's
		}
		if slices.Contains(after.networks, n) != slices.Contains(before.networks, n) {
			t.Errorf("network %s: there before %v, after %v", n, slices.Contains(before.networks, n), slices.Contains(after.networks, n))
		}
	}
	if !slices.Equal(after.containers, before.containers) || !slices.Equal(after.services, before.services) {
		t.Errorf("swarm containers %v services %v left (before: %v, %v)", after.containers, after.services, before.containers, before.services)
	}
}

// TestSwarmTwoShards runs 2 shards as replicated jobs on a single-node
// swarm (made for the test when the engine is not in one), merges them,
// and leaves the engine as it found it.
func TestSwarmTwoShards(t *testing.T) {
	needSwarmImage(t)
	before := readDockerState(t)
	m := writeManifest(t, strings.Replace(shardManifest, "repeats = 3", "repeats = 2", 1))
	dir := filepath.Join(t.TempDir(), "swarm")
	cmd := exec.Command(binary, "swarm", m, "--shards", "2", "-o", dir)
	out, err := cmd.CombinedOutput()
	checkLeftAsFound(t, before)
	if exitStatus(err) != 0 {
		t.Fatalf("swarm: exit %d\n%s", exitStatus(err), out)
	}
	r, rerr := results.ReadRun(dir)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if r.Shard == nil || len(r.Shard.Merged) != 2 || len(r.Cells) != 8 || r.Shard.Partial {
		t.Fatalf("merged run: %d cells, shard record %+v\n%s", len(r.Cells), r.Shard, out)
	}
	for _, c := range r.Cells {
		if c.Status != record.CellOK || c.Shard != c.Repeat || c.Host == "" {
			t.Errorf("%s #%d: %s, shard %d, host %q", c.Name, c.Repeat, c.Status, c.Shard, c.Host)
		}
	}
	// Both tasks ran on this machine, at the same time: the merged run
	// names it (the task's hostname is the node's) and says they competed.
	host, _ := os.Hostname()
	for _, ms := range r.Shard.Merged {
		if ms.Host.Hostname != host {
			t.Errorf("shard %d reports host %q, want the node's %q", ms.K, ms.Host.Hostname, host)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, results.SummaryFile))
	if !strings.Contains(string(md), "shards 1, 2 ran on host "+host+" at the same time") {
		t.Errorf("summary.md does not say the shards competed:\n%s", md)
	}
	if got := csvKeys(t, filepath.Join(dir, results.CellsFile), -1); len(got) != 8 {
		t.Errorf("cells.csv has %d rows, want 8", len(got))
	}
	if out, err := exec.Command(binary, "report", dir).CombinedOutput(); err != nil {
		t.Errorf("report: %v\n%s", err, out)
	}
	for k := 1; k <= 2; k++ {
		if _, err := os.Stat(filepath.Join(dir, swarm.ShardsDir, itoa(k), results.RunFile)); err != nil {
			t.Errorf("shard %d directory: %v", k, err)
		}
	}
}

// TestSwarmTaskCannotStart: a task Swarm cannot start (its bind-mounted
// binary does not exist) ends the command with the engine's reason, at
// once, and nothing is left.
func TestSwarmTaskCannotStart(t *testing.T) {
	needSwarmImage(t)
	before := readDockerState(t)
	m := writeManifest(t, shardManifest)
	cmd := exec.Command(binary, "swarm", m, "--shards", "2", "-o", filepath.Join(t.TempDir(), "swarm"))
	cmd.Env = append(os.Environ(), "BENCHMATRIX_SWARM_BINARY=/nonexistent/benchmatrix")
	out, err := cmd.CombinedOutput()
	checkLeftAsFound(t, before)
	if exitStatus(err) != 1 || !strings.Contains(string(out), "could not run") {
		t.Errorf("swarm with a missing binary: exit %d\n%s", exitStatus(err), out)
	}
}

// waitServices waits until n swarm services of benchmatrix exist.
func waitServices(t *testing.T, n int) {
	t.Helper()
	for range 120 {
		if docker(t, "info", "--format", "{{.Swarm.LocalNodeState}}") == "active" &&
			len(fields(docker(t, "service", "ls", "-q", "--filter", "label="+swarm.LabelRun))) >= n {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("no %d swarm services appeared", n)
}

// TestSwarmInterrupted: SIGINT while the tasks run removes the services
// (the tasks stop gracefully and keep what they finished), their
// containers and the swarm; exit 130.
func TestSwarmInterrupted(t *testing.T) {
	needSwarmImage(t)
	before := readDockerState(t)
	m := writeManifest(t, strings.Replace(shardManifest, `duration = "1s"`, `duration = "30s"`, 1))
	dir := filepath.Join(t.TempDir(), "swarm")
	cmd := exec.Command(binary, "swarm", m, "--shards", "3", "-o", dir)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitServices(t, 3)
	time.Sleep(3 * time.Second)
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	checkLeftAsFound(t, before)
	if exitStatus(err) != 130 {
		t.Errorf("interrupted swarm: exit %d\n%s", exitStatus(err), out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, results.RunFile)); err == nil {
		t.Error("an interrupted swarm run merged")
	}
}

// TestSwarmKilledThenSwept: after SIGKILL the services, task containers
// and the swarm the dead process made are left; the next swarm command
// removes them and says so.
func TestSwarmKilledThenSwept(t *testing.T) {
	needSwarmImage(t)
	before := readDockerState(t)
	m := writeManifest(t, strings.Replace(shardManifest, `duration = "1s"`, `duration = "30s"`, 1))
	cmd := exec.Command(binary, "swarm", m, "--shards", "2", "-o", filepath.Join(t.TempDir(), "killed"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitServices(t, 2)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if len(fields(docker(t, "service", "ls", "-q", "--filter", "label="+swarm.LabelRun))) == 0 {
		t.Fatal("SIGKILL left no service: nothing to sweep")
	}
	small := writeManifest(t, strings.Replace(shardManifest, "repeats = 3", "repeats = 1", 1))
	out, err := exec.Command(binary, "swarm", small, "--shards", "1", "-o", filepath.Join(t.TempDir(), "next")).CombinedOutput()
	checkLeftAsFound(t, before)
	if exitStatus(err) != 0 || !strings.Contains(string(out), "removed swarm service") {
		t.Errorf("next swarm run: exit %d\n%s", exitStatus(err), out)
	}
	if before.swarm == "inactive" && !strings.Contains(string(out), "removed the single-node swarm it made") {
		t.Errorf("the dead process's swarm was not named as removed:\n%s", out)
	}
}

// TestSwarmKeepsAnExistingSwarm: an engine already in a swarm stays in it
// (the test makes that swarm itself, and leaves it again).
func TestSwarmKeepsAnExistingSwarm(t *testing.T) {
	needSwarmImage(t)
	if docker(t, "info", "--format", "{{.Swarm.LocalNodeState}}") != "inactive" {
		t.Skip("the engine is in a swarm already: the other swarm tests cover it")
	}
	outer := readDockerState(t)
	docker(t, "swarm", "init", "--advertise-addr", "127.0.0.1", "--listen-addr", "127.0.0.1:2377")
	t.Cleanup(func() {
		_ = exec.Command("docker", "swarm", "leave", "--force").Run()
		if !slices.Contains(outer.networks, "docker_gwbridge") {
			for range 10 {
				if exec.Command("docker", "network", "rm", "docker_gwbridge").Run() == nil {
					break
				}
				time.Sleep(time.Second)
			}
		}
		checkLeftAsFound(t, outer)
	})
	before := readDockerState(t)
	m := writeManifest(t, strings.Replace(shardManifest, "repeats = 3", "repeats = 1", 1))
	out, err := exec.Command(binary, "swarm", m, "--shards", "2", "-o", filepath.Join(t.TempDir(), "s")).CombinedOutput()
	checkLeftAsFound(t, before)
	if exitStatus(err) != 0 || !strings.Contains(string(out), "using the active swarm") {
		t.Errorf("swarm in an existing swarm: exit %d\n%s", exitStatus(err), out)
	}
}
