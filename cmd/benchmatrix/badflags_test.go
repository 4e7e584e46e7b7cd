package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadEngineFlagsExit2: resources, deadlines and timeouts that cannot
// mean anything are refused with exit 2 naming the flag, before a Job is
// printed or a swarm is made.
func TestBadEngineFlagsExit2(t *testing.T) {
	t.Parallel()
	m := writeManifest(t, shardManifest)
	k8s := []string{"k8s", m, "--shards", "2", "--image", "registry.example/benchmatrix:test"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(k8s, "--cpu", "-1"), `--cpu "-1": want a positive quantity`},
		{append(k8s, "--cpu", "0"), `--cpu "0": want a positive quantity`},
		{append(k8s, "--memory", "-5Gi"), `--memory "-5Gi": want a positive quantity`},
		{append(k8s, "--memory", "0"), `--memory "0": want a positive quantity`},
		{append(k8s, "--memory", "lots"), `--memory "lots"`},
		{append(k8s, "--namespace", "Bad_NS"), `--namespace "Bad_NS": not a namespace name`},
		{append(k8s, "--volume-claim", "Bad_Claim"), `--volume-claim "Bad_Claim": not a PersistentVolumeClaim name`},
		{[]string{"k8s", m, "--shards", "2", "--image", "registry.example/bench mark"}, `--image "registry.example/bench mark": an image reference has no spaces`},
		{append(k8s, "--deadline", "-1s"), "--deadline -1s: want at least 1s"},
		{append(k8s, "--deadline", "400ms"), "--deadline 400ms: want at least 1s"},
		{[]string{"plan", m, "--shards", "0"}, "--shards 0: want at least 1"},
		{[]string{"swarm", m, "--shards", "2", "-o", filepath.Join(t.TempDir(), "r"), "--timeout", "-1m"}, "--timeout -1m0s: want more than 0"},
	} {
		cmd := exec.Command(binary, c.args...)
		var stdout, stderr syncBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if code := exitStatus(err); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args[len(c.args)-2:], code, stderr.String(), c.want)
		}
		if stdout.String() != "" {
			t.Errorf("%v: printed %q", c.args[len(c.args)-2:], stdout.String())
		}
	}
}

// TestMalformedDSNExits2: a DSN without tcp(...) is a usage problem (exit
// 2) naming where it was given, whether --dsn, [server] dsn or dsns, or
// restore's argument, and the password is never shown.
func TestMalformedDSNExits2(t *testing.T) {
	t.Parallel()
	const bad = "root:Pw0rdXyz@127.0.0.1:3306/db"
	m := writeManifest(t, "[workload]\nname = \"oltp_point_select\"\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", m, "--provider", "external", "--dsn", bad}, "--dsn: not a DSN"},
		{[]string{"run", m, "--provider", "external", "--dsn=" + bad}, "--dsn: not a DSN"},
		{[]string{"plan", m, "--provider", "external"}, ""}, // no DSN given: plan is fine
		{[]string{"run", writeManifest(t, "[server]\nprovider = \"external\"\ndsn = \""+bad+"\"\n[workload]\nname = \"oltp_point_select\"\n"), "-o", filepath.Join(t.TempDir(), "r")}, "line 3: server.dsn: not a DSN"},
		{[]string{"run", writeManifest(t, "[server]\nprovider = \"external\"\ndsns = [\""+bad+"\"]\n[workload]\nname = \"oltp_point_select\"\n"), "-o", filepath.Join(t.TempDir(), "r")}, "line 3: server.dsns: node 1: not a DSN"},
		{[]string{"restore", bad}, "not a DSN"},
	} {
		out, err := exec.Command(binary, c.args...).CombinedOutput()
		if c.want == "" {
			continue
		}
		if code := exitStatus(err); code != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: exit %d, output %q; want exit 2 mentioning %q", c.args[:2], code, out, c.want)
		}
		if strings.Contains(string(out), "Pw0rdXyz") {
			t.Errorf("%v: the password is shown: %s", c.args[:2], out)
		}
	}
}
