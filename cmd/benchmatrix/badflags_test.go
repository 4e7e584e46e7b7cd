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
		{append(k8s, "--deadline", "-1s"), "--deadline -1s: want at least 1s"},
		{append(k8s, "--deadline", "400ms"), "--deadline 400ms: want at least 1s"},
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
