package server

import (
	"testing"

	"benchmatrix/catalog"
)

// The OOM kill counter is read from both cgroup versions' files, and the
// note names the limit (or its absence) and the count.
func TestOOMKillCounter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text string
		n    int64
		ok   bool
	}{
		{"oom_kill_disable 0\nunder_oom 0\noom_kill 2\n", 2, true},                // v1 memory.oom_control
		{"low 0\nhigh 0\nmax 31\noom 1\noom_kill 1\noom_group_kill 0\n", 1, true}, // v2 memory.events
		{"oom_kill_disable 0\nunder_oom 0\n", 0, false},                           // a kernel before 4.13
	}
	for _, c := range cases {
		if n, ok := oomKillCount(c.text); n != c.n || ok != c.ok {
			t.Errorf("%q: got %d %v, want %d %v", c.text, n, ok, c.n, c.ok)
		}
	}
	notes := []struct {
		n    int64
		l    catalog.LimitSet
		want string
	}{
		{0, catalog.LimitSet{Memory: 256 << 20}, ""},
		{1, catalog.LimitSet{Memory: 256 << 20}, "the server was killed by its memory limit (memory = 256M, 1 OOM kill in the cell)"},
		{2, catalog.LimitSet{Memory: 3 << 30}, "the server was killed by its memory limit (memory = 3G, 2 OOM kills in the cell)"},
		{1, catalog.LimitSet{CPUs: 1}, "the server was killed by the kernel's OOM killer (no memory limit on it; 1 OOM kill in the cell): the machine ran out of memory"},
	}
	for _, c := range notes {
		if got := memoryKillNote(c.n, c.l); got != c.want {
			t.Errorf("%d kills under %v: %q, want %q", c.n, c.l, got, c.want)
		}
	}
}
