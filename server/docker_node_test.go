package server

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"
)

// A network a dead benchmatrix left (labelled with its process id) is
// removed by the sweep and named; a live owner's is kept.
func TestDockerRemoveStaleNetworks(t *testing.T) {
	needDockerImage(t)
	ctx := context.Background()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	pool, err := dockertest.NewPool("")
	if err != nil {
		t.Fatal(err)
	}
	hostname, _ := os.Hostname()
	name := dockerNetworkPrefix + strconv.Itoa(dead) + "-1"
	stale, err := pool.Client.CreateNetwork(dc.CreateNetworkOptions{Name: name, Driver: "bridge",
		Labels: map[string]string{dockerLabelOwnerPID: strconv.Itoa(dead), dockerLabelOwnerHost: hostname}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pool.Client.RemoveNetwork(stale.ID) })
	var removed []string
	Sweep(ctx, Spec{Provider: "docker"}, func(what string) { removed = append(removed, what) })
	if _, err := pool.Client.NetworkInfo(stale.ID); err == nil {
		t.Fatalf("stale network %s kept (removed %v)", name, removed)
	}
	if !slices.Contains(removed, "network "+name) {
		// Another test process on this engine may have swept it first.
		t.Logf("stale network removed by someone else; this sweep removed %v", removed)
	}
	live, err := CreateDockerNetwork(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := live.ID
	Sweep(ctx, Spec{Provider: "docker"}, func(string) {})
	if _, err := pool.Client.NetworkInfo(id); err != nil {
		t.Fatalf("the live network %s was removed: %v", live.Name, err)
	}
	if err := live.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Client.NetworkInfo(id); err == nil {
		t.Fatalf("network %s not removed", live.Name)
	}
	t.Logf("the sweep reported %v", removed)
}
