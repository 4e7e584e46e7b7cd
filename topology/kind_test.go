package topology

import (
	"testing"

	"benchmatrix/catalog"
	"benchmatrix/experiment"
)

// Every kind the catalog describes has its implementation here, and no
// other; an unknown kind is refused naming it.
func TestEveryKindIsImplemented(t *testing.T) {
	t.Parallel()
	names := catalog.TopologyNames()
	for _, n := range names {
		if _, ok := kinds[n]; !ok {
			t.Errorf("catalog describes kind %q, topology has no implementation", n)
		}
	}
	if len(kinds) != len(names) {
		t.Errorf("topology implements %d kinds, catalog describes %d (%v)", len(kinds), len(names), names)
	}
	if _, err := kindOf(experiment.Topology{Kind: "ring"}); err == nil || err.Error() != `unknown topology kind "ring"` {
		t.Errorf("unknown kind: %v", err)
	}
}
