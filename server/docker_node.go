package server

import (
	"benchmatrix/stale"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	dc "github.com/ory/dockertest/v3/docker"
)

// Docker containers as topology nodes (catalog.Topologies): every node of a
// cluster is a container on one private network that the cluster creates
// (a user-defined bridge, labelled like the containers so the sweep finds
// it after a SIGKILL). The host reaches each node on a fixed published
// port on 127.0.0.1, chosen at the node's first start and kept across its
// restarts and across a disconnect/reconnect (Docker would give a new
// random port on reconnect, and the samplers' connections would lose the
// node). Nodes reach each other by their addresses on the private network.
//
// Pause is `docker pause` (the cgroup freezer): it freezes every process
// of the node (the server and a state-transfer rsync alike), works with a
// remote engine whose processes this host cannot signal, and is what a
// Docker user knows. SIGSTOP of the server would leave the rest running.

var _ Node = (*Docker)(nil)

// Halt implements Node: a clean shutdown; the container is removed and
// the datadir kept for Restart.
func (d *Docker) Halt(grace time.Duration) error {
	_ = d.Resume() // a paused container cannot act on SIGTERM
	return d.stopContainer(context.Background(), grace)
}

// Crash implements Node: SIGKILL to the server, the container kept (its
// log too) until Restart replaces it.
func (d *Docker) Crash() {
	id := d.containerID()
	if id == "" {
		return
	}
	_ = d.Resume()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = d.pool.Client.KillContainer(dc.KillContainerOptions{ID: id, Signal: dc.SIGKILL, Context: ctx})
	_, _ = d.pool.Client.WaitContainerWithContext(id, ctx)
}

// Pause implements Node: docker pause.
func (d *Docker) Pause() error {
	id := d.containerID()
	if id == "" || !d.Alive() {
		return errors.New("the server is not running")
	}
	return d.pool.Client.PauseContainer(id)
}

// Resume implements Node: docker unpause (nothing when not paused).
func (d *Docker) Resume() error {
	id := d.containerID()
	if id == "" {
		return errors.New("the server is not running")
	}
	ctx, cancel := context.WithTimeout(context.Background(), dockerProbeTimeout)
	defer cancel()
	c, err := d.pool.Client.InspectContainerWithContext(id, ctx)
	if err != nil || !c.State.Paused {
		return nil
	}
	return d.pool.Client.UnpauseContainer(id)
}

// PrivateIP is the container's address on its private network ("" when
// it has none: not on a network, stopped, disconnected).
func (d *Docker) PrivateIP() string {
	id := d.containerID()
	if id == "" || d.cfg.Network == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), dockerProbeTimeout)
	defer cancel()
	c, err := d.pool.Client.InspectContainerWithContext(id, ctx)
	if err != nil || c.NetworkSettings == nil {
		return ""
	}
	if ep, ok := c.NetworkSettings.Networks[d.cfg.Network.Name]; ok {
		return ep.IPAddress
	}
	return ""
}

// Disconnect cuts the node off its private network (docker network
// disconnect): the other nodes and the host no longer reach it.
func (d *Docker) Disconnect() error {
	id := d.containerID()
	if id == "" || d.cfg.Network == nil {
		return errors.New("the node is not a running container on a private network")
	}
	return d.pool.Client.DisconnectNetwork(d.cfg.Network.ID, dc.NetworkConnectionOptions{Container: id, Force: true})
}

// Reconnect puts the node back on its private network; nothing when it is
// on it.
func (d *Docker) Reconnect() error {
	id := d.containerID()
	if id == "" || d.cfg.Network == nil {
		return errors.New("the node is not a running container on a private network")
	}
	if d.PrivateIP() != "" {
		return nil
	}
	opts := dc.NetworkConnectionOptions{Container: id}
	if d.cfg.Hostname != "" {
		// The node's name on the network, as at its start (Docker derives
		// it from the host name on create; said here so that a reconnect
		// cannot lose it).
		opts.EndpointConfig = &dc.EndpointConfig{Aliases: []string{d.cfg.Hostname}}
	}
	return d.pool.Client.ConnectNetwork(d.cfg.Network.ID, opts)
}

// DockerNetwork is a private network for one cluster's containers.
type DockerNetwork struct {
	ID, Name string
	// Subnet is the network's address range as CIDR (172.18.0.0/16),
	// "" when the engine did not say.
	Subnet string
	pool   poolClient
	reaper *reaper
}

type poolClient interface {
	RemoveNetwork(id string) error
}

var networkSeq atomic.Int64

// dockerNetworkPrefix begins every network's name; the rest is the
// owner's process id and a sequence number.
const dockerNetworkPrefix = "benchmatrix-net-"

// CreateDockerNetwork creates a private bridge network, labelled with its
// owner so RemoveStaleNetworks removes it if benchmatrix dies, and starts
// its reaper (removes it when benchmatrix dies, after the containers').
func CreateDockerNetwork(ctx context.Context) (*DockerNetwork, error) {
	pool, err := dockerPool(ctx)
	if err != nil {
		return nil, err
	}
	_, _ = RemoveStaleContainers(ctx)
	_, _ = RemoveStaleNetworks(ctx)
	hostname, _ := os.Hostname()
	name := fmt.Sprintf("%s%d-%d", dockerNetworkPrefix, os.Getpid(), networkSeq.Add(1))
	n, err := pool.Client.CreateNetwork(dc.CreateNetworkOptions{Name: name, Driver: "bridge", Context: ctx,
		Labels: map[string]string{dockerLabelOwnerPID: strconv.Itoa(os.Getpid()), dockerLabelOwnerHost: hostname}})
	if err != nil {
		return nil, fmt.Errorf("create docker network %s: %w", name, err)
	}
	nw := &DockerNetwork{ID: n.ID, Name: name, pool: pool.Client, reaper: startNetworkReaper(n.ID)}
	if info, err := pool.Client.NetworkInfo(n.ID); err == nil {
		for _, c := range info.IPAM.Config {
			if nw.Subnet == "" && strings.Contains(c.Subnet, ".") { // IPv4
				nw.Subnet = c.Subnet
			}
		}
	}
	return nw, nil
}

// Remove removes the network (its containers must be gone).
func (n *DockerNetwork) Remove() error {
	if n == nil || n.ID == "" {
		return nil
	}
	var err error
	for i := 0; i < 20; i++ { // the engine may still be detaching a removed container
		if err = n.pool.RemoveNetwork(n.ID); err == nil || errors.As(err, new(*dc.NoSuchNetwork)) {
			err = nil
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("remove docker network %s: %w", n.Name, err)
	}
	n.reaper.stop()
	n.ID = ""
	return nil
}

// networkReaperScript removes the network ($1), retrying while the
// containers' reapers remove them (launchReaper runs it once benchmatrix
// has died).
const networkReaperScript = `for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do docker network rm "$1" >/dev/null 2>&1 && exit 0; sleep 0.5; done`

func startNetworkReaper(id string) *reaper {
	if _, err := exec.LookPath("docker"); err != nil {
		return nil
	}
	return launchReaper(networkReaperScript, id)
}

// RemoveStaleNetworks removes the networks that benchmatrix processes on
// this host left behind when they died, and returns their names. Run it
// after RemoveStaleContainers (a network in use cannot be removed).
func RemoveStaleNetworks(ctx context.Context) ([]string, error) {
	pool, err := dockerPool(ctx)
	if err != nil {
		return nil, err
	}
	hostname, _ := os.Hostname()
	list, err := pool.Client.FilteredListNetworks(dc.NetworkFilterOpts{"label": {dockerLabelOwnerPID: true}})
	if err != nil {
		return nil, fmt.Errorf("list docker networks: %w", err)
	}
	var removed []string
	var errs []error
	for _, n := range list {
		pid, err := strconv.Atoi(n.Labels[dockerLabelOwnerPID])
		if err != nil || n.Labels[dockerLabelOwnerHost] != hostname || !stale.Gone(pid) ||
			!strings.HasPrefix(n.Name, dockerNetworkPrefix) {
			continue
		}
		if err := pool.Client.RemoveNetwork(n.ID); err != nil {
			errs = append(errs, fmt.Errorf("remove stale network %s: %w", n.Name, err))
			continue
		}
		removed = append(removed, n.Name)
	}
	return removed, errors.Join(errs...)
}

// onNetwork puts a topology node's container on its private network, its
// port published on a host port kept for the node's life.
func (d *Docker) onNetwork(hc *dc.HostConfig) {
	if d.cfg.Network == nil {
		return
	}
	hc.NetworkMode = d.cfg.Network.Name
	if d.hostPort == "" {
		if l, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
			d.hostPort = strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
			l.Close()
		}
	}
	if d.hostPort != "" {
		b := hc.PortBindings["3306/tcp"]
		if len(b) > 0 {
			b[0].HostPort = d.hostPort
		}
	}
}
