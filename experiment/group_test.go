package experiment

import (
	"strings"
	"testing"
)

// [topology] mode: a replication group's, single-primary by default, part
// of what makes a new cluster; refused on other kinds, with an unknown
// value, and with writers = "all" on a single primary.
func TestGroupMode(t *testing.T) {
	t.Parallel()
	base := "[workload]\nname = \"oltp_insert\"\n"
	p, err := resolve("m.toml", base+"[topology]\nkind = \"group\"\n")
	if err != nil {
		t.Fatal(err)
	}
	top := p.Cells[0].Topology
	if top.Mode != "single-primary" || top.Nodes != 3 || top.Key() != "group/3/single-primary" {
		t.Fatalf("default group: %+v key %s", top, top.Key())
	}
	p, err = resolve("m.toml", base+"[topology]\nkind = \"group\"\nmode = \"multi-primary\"\nwriters = \"all\"\n")
	if err != nil || p.Cells[0].Topology.Key() != "group/3/multi-primary" {
		t.Fatalf("multi-primary: %v", err)
	}
	for _, c := range []struct{ src, want string }{
		{"[topology]\nkind = \"group\"\nmode = \"ring\"\n", `line 5: topology.mode: a replication group's mode is single-primary or multi-primary, not "ring"`},
		{"[topology]\nkind = \"galera\"\nmode = \"multi-primary\"\n", `topology.mode: mode is a replication group's (kind = "group"); a galera topology has none`},
		{"[topology]\nkind = \"group\"\nwriters = \"all\"\n", `topology.writers: writers = "all" needs mode = "multi-primary"`},
		{"[topology]\nkind = \"group\"\nfc_limit = 16\n", "a group's flow control is its group_replication_flow_control_* variables"},
	} {
		_, err := resolve("m.toml", base+c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
}
