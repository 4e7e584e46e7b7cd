package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestHelpPrintsNoPanic: every command's --help lists its flags without
// the flag package's "panic calling String method" lines (plan, swarm and
// k8s printed four of them for the flags passed on to shards).
func TestHelpPrintsNoPanic(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"run", "plan", "compare", "report", "merge", "swarm", "k8s", "cache"} {
		out, _ := exec.Command(binary, c, "--help").CombinedOutput()
		if strings.Contains(string(out), "panic") {
			t.Errorf("%s --help:\n%s", c, out)
		}
	}
}
