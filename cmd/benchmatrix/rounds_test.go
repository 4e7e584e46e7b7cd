package main

import (
	"os/exec"
	"strings"
	"testing"
)

// run --until, --max-repeats and --budget: refused with exit 2 naming the
// flag or the key, before anything starts; plan prints the rounds estimate.
func TestUntilFlags(t *testing.T) {
	t.Parallel()
	noBaseline := writeManifest(t, "[workload]\nname = \"oltp_insert\"\n")
	two := writeManifest(t, "[experiment]\nbaseline = \"a\"\n[workload]\nname = \"oltp_insert\"\n[scenarios]\na = { sync_binlog = 1 }\nb = { sync_binlog = 0 }\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", two, "--until", "later"}, `--until: "later": want conclusive or repeats`},
		{[]string{"run", noBaseline, "--until", "conclusive"}, "needs something to decide"},
		{[]string{"run", two, "--until", "conclusive", "--max-repeats", "1000"}, "--max-repeats: must be between 1 and 100"},
		{[]string{"run", two, "--until", "conclusive", "--max-repeats", "2", "--repeats", "4"}, "--max-repeats: 2 is fewer than repeats (4)"},
		{[]string{"run", two, "--until", "conclusive", "--budget", "0s"}, "--budget: must be more than 0"},
		{[]string{"run", two, "--budget", "soon"}, "budget"},
	} {
		out, err := exec.Command(binary, c.args...).CombinedOutput()
		if code := exitStatus(err); code != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: exit %d, output %q; want exit 2 mentioning %q", c.args, code, out, c.want)
		}
	}
	conclusive := writeManifest(t, "[experiment]\nbaseline = \"a\"\nuntil = \"conclusive\"\nbudget = \"10m\"\n[workload]\nname = \"oltp_insert\"\n[scenarios]\na = { sync_binlog = 1 }\nb = { sync_binlog = 0 }\n")
	out, err := exec.Command(binary, "plan", conclusive).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "until conclusive: 3 round(s) at least") || !strings.Contains(string(out), "at most 12 rounds, budget 10m0s") {
		t.Errorf("plan: %v\n%s", err, out)
	}
}
