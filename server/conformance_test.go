package server

import (
	"testing"

	"benchmatrix/catalog"
)

// Every provider's declared capabilities are exactly those its type has,
// and every descriptor has an implementation (and the reverse).
func TestProvidersConformToTheirDescriptors(t *testing.T) {
	all := []catalog.Capability{catalog.Liveness, catalog.PID, catalog.Logs, catalog.Snapshots, catalog.RestoresGlobals, catalog.Limits, catalog.Profiles, catalog.Topologies, catalog.ExistingTopologies}
	names := catalog.ProviderNames()
	if len(names) != len(implementations) {
		t.Fatalf("catalog describes %v, server implements %d providers", names, len(implementations))
	}
	for _, n := range names {
		d := catalog.Provider(catalog.ProviderName(n))
		impl, ok := implementations[d.Name]
		if !ok {
			t.Errorf("provider %s: described in catalog, no implementation", n)
			continue
		}
		for _, c := range all {
			if got, want := Implements(impl.zero, c), d.Caps.Has(c); got != want {
				t.Errorf("provider %s: declares %s = %v, but its type has it = %v", n, c, want, got)
			}
		}
	}
}
