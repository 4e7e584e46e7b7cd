package server

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	dc "github.com/ory/dockertest/v3/docker"

	"benchmatrix/catalog"
)

// Every server limit of catalog.LimitTable has one row of limitMechanisms,
// and each mechanism writes, when its limit is set, the cgroup files the
// catalog names for it (and sets something of a container's HostConfig).
func TestLimitMechanismsCoverTheTable(t *testing.T) {
	rows := map[string]int{}
	for _, m := range limitMechanisms {
		for _, k := range m.keys {
			rows[k]++
		}
	}
	for _, k := range catalog.LimitTable {
		want := 1
		if k.Client {
			want = 0
		}
		if rows[k.Name] != want {
			t.Errorf("limit %s: %d rows of limitMechanisms, want %d", k.Name, rows[k.Name], want)
		}
	}
	root := t.TempDir()
	g := &cgroupGroup{dirs: map[string]string{}}
	for _, c := range v1Controllers {
		g.dirs[c] = filepath.Join(root, c, "g")
		if err := os.MkdirAll(g.dirs[c], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range limitMechanisms {
		for _, name := range m.keys {
			k, ok := catalog.LookupLimit(name)
			if !ok {
				t.Errorf("limitMechanisms names %q, not a limit of catalog.LimitTable", name)
				continue
			}
			var l catalog.LimitSet
			if err := k.Set(&l, "1"); err != nil {
				t.Fatalf("%s = 1: %v", name, err)
			}
			written := func(ws []cgroupWrite, ctrl, file string) bool {
				for _, w := range ws {
					if w.set && w.ctrl == ctrl && w.file == file {
						return true
					}
				}
				return false
			}
			if !written(m.v1(g, l, "8:0"), k.Mechanism.V1Controller, k.Mechanism.V1File) {
				t.Errorf("%s: cgroup v1 does not set %s %s", name, k.Mechanism.V1Controller, k.Mechanism.V1File)
			}
			if v2File := strings.Fields(k.Mechanism.V2File)[0]; !written(m.v2(l, "8:0"), "", v2File) {
				t.Errorf("%s: cgroup v2 does not set %s", name, v2File)
			}
			var hc dc.HostConfig
			if m.docker(&hc, l, "/dev/vda"); reflect.DeepEqual(hc, dc.HostConfig{}) {
				t.Errorf("%s: docker sets nothing of the HostConfig", name)
			}
		}
	}
}
