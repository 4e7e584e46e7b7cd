package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// procField reads /proc/PID/stat's fields after the command name: state,
// ppid, pgrp, ...; nil when the process is gone.
func procField(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// runningProc: the process exists and has not exited (a zombie has).
func runningProc(pid int) bool {
	f := procField(pid)
	return f != nil && f[0] != "Z" && f[0] != "X"
}

// reapersOf lists the reaper shells benchmatrix process pid started (its
// children whose command line names them).
func reapersOf(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f := procField(p)
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if f != nil && f[1] == strconv.Itoa(pid) && strings.Contains(string(b), "benchmatrix-reaper") {
			out = append(out, p)
		}
	}
	return out
}

// TestSIGKILLDockerReplicasLeavesNoProcess: benchmatrix SIGKILLed with a
// replicas topology of Docker nodes: the reapers remove the containers
// and the network, and leave no process (each used to leave its `sleep
// 3600`, reparented to init).
func TestSIGKILLDockerReplicasLeavesNoProcess(t *testing.T) {
	needDockerImage(t)
	src := strings.Replace(slowManifest, "[workload]", "[server]\nprovider = \"docker\"\n[topology]\nkind = \"replicas\"\nreplicas = 1\n[workload]", 1)
	cmd, buf := startRun(t, writeManifest(t, src), filepath.Join(t.TempDir(), "r"))
	pid := cmd.Process.Pid
	reapers := reapersOf(pid)
	if len(reapers) < 3 { // two containers and the network
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("want a reaper per container and for the network, found %v\n%s", reapers, buf.String())
	}
	cmd.Process.Kill()
	cmd.Wait()
	left := func() []string {
		var out []string
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			p, err := strconv.Atoi(e.Name())
			if err != nil || !runningProc(p) {
				continue
			}
			for _, r := range reapers {
				if f := procField(p); f != nil && f[2] == strconv.Itoa(r) {
					b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
					out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
				}
			}
		}
		return out
	}
	containers := func() string {
		out, _ := exec.Command("docker", "ps", "-aq", "--filter", "label=benchmatrix.owner-pid="+strconv.Itoa(pid)).Output()
		return strings.TrimSpace(string(out))
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		busy := containers() != ""
		for _, r := range reapers {
			busy = busy || runningProc(r)
		}
		if !busy {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reapers did not finish: containers %q, processes %v", containers(), left())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if l := left(); len(l) > 0 {
		for _, p := range l {
			if n, err := strconv.Atoi(strings.SplitN(p, ":", 2)[0]); err == nil {
				if pr, err := os.FindProcess(n); err == nil {
					pr.Kill()
				}
			}
		}
		t.Fatalf("processes of the reapers outlived them: %v", l)
	}
}
