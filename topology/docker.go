package topology

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"benchmatrix/catalog"
	"benchmatrix/experiment"
	"benchmatrix/server"
)

// A topology on the docker provider: one container of the image per node,
// all on a private bridge network the cluster creates and removes (labelled
// like the containers: the sweep and the reapers remove it after a
// SIGKILL). Every node has the same random root password, so a replica
// logs in to its primary, and a Galera joiner keeps working after its
// state transfer copies the donor's accounts. The host (workload, samplers)
// reaches each node on its fixed published port on 127.0.0.1; the nodes
// reach each other by their addresses on the private network: a replica's
// MASTER_HOST, Galera's wsrep_cluster_address (the other nodes' addresses),
// while each Galera node takes its own address from its one interface
// (wsrep_node_address unset) and uses the default ports inside its
// container for group communication (4567), IST (4568) and SST (4444).
// Each container's host name is its node's name, by which the others
// also reach it on the network (a MySQL group's addresses, group.go), and
// which stays the same across the node's containers.
// disconnect and reconnect events are docker network disconnect/connect.

// nodeServer is what a node runs on: a sandbox or a container.
type nodeServer interface {
	server.Server
	server.Node
	Alive() bool
	PID() int
}

var (
	_ nodeServer = (*server.Sandbox)(nil)
	_ nodeServer = (*server.Docker)(nil)
)

// dockerCluster is the docker provider's part of a cluster.
type dockerCluster struct {
	net      *server.DockerNetwork
	password string            // never print it
	lastIP   map[string]string // node name: its last address on the network
	// mysqlVersion and env are the image's MySQL version and more
	// environment for its entrypoint, when the kind found them (group.go).
	mysqlVersion string
	env          []string
}

func (c *Cluster) isDocker() bool { return c.cfg.Provider == catalog.Docker }

// openDocker creates the private network and the nodes' password.
func (c *Cluster) openDocker(ctx context.Context) error {
	if !c.isDocker() {
		return nil
	}
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	c.docker.password = hex.EncodeToString(b)
	c.docker.lastIP = map[string]string{}
	nw, err := server.CreateDockerNetwork(ctx)
	if err != nil {
		return err
	}
	c.docker.net = nw
	fmt.Fprintf(c.cfg.Log, "  private network %s\n", nw.Name)
	return nil
}

// remove removes the network; the nodes must be gone.
func (d *dockerCluster) remove() error {
	if d.net == nil {
		return nil
	}
	return d.net.Remove()
}

// startContainer starts node n as a container on the private network.
func (c *Cluster) startContainer(ctx context.Context, n *Node) error {
	d, err := server.StartDocker(ctx, server.DockerConfig{Image: c.cfg.Image, Startup: append(c.Startup(), n.opts...),
		Password: c.docker.password, ReadyTimeout: c.cfg.ReadyTimeout, Network: c.docker.net,
		Hostname: n.Name, MySQLVersion: c.docker.mysqlVersion, Env: c.docker.env})
	if err != nil {
		return fmt.Errorf("%s (%s): %w", n.Name, n.Role, err)
	}
	n.srv = d
	c.noteIP(n)
	return nil
}

// noteIP keeps a node's address on the network, for the Galera joiners'
// cluster address when the node is down.
func (c *Cluster) noteIP(n *Node) {
	if d, ok := n.srv.(*server.Docker); ok {
		if ip := d.PrivateIP(); ip != "" {
			c.docker.lastIP[n.Name] = ip
		}
	}
}

// dockerGaleraOpts are a Galera node's options in a container: the cluster
// address lists the other nodes' addresses on the private network (empty
// before any other node ran: node 1 bootstrapping).
func (c *Cluster) dockerGaleraOpts(n *Node, id int) []server.Setting {
	var peers []string
	for _, o := range c.nodes {
		if o == n {
			continue
		}
		if o.srv != nil {
			c.noteIP(o)
		}
		if ip := c.docker.lastIP[o.Name]; ip != "" {
			peers = append(peers, ip)
		}
	}
	opts := []server.Setting{
		{Name: "server_id", Value: strconv.Itoa(id)},
		{Name: "wsrep_on", Value: "ON"},
		{Name: "wsrep_provider", Value: GaleraProvider},
		{Name: "wsrep_cluster_name", Value: c.name},
		{Name: "wsrep_cluster_address", Value: "gcomm://" + strings.Join(peers, ",")},
		{Name: "wsrep_node_name", Value: n.Name},
		{Name: "wsrep_sst_method", Value: "rsync"},
		{Name: "binlog_format", Value: "ROW"},
		{Name: "innodb_autoinc_lock_mode", Value: "2"},
	}
	if fc := c.cfg.Topology.FCLimit; fc > 0 {
		opts = append(opts, server.Setting{Name: "wsrep_provider_options", Value: "gcs.fc_limit=" + strconv.Itoa(fc)})
	}
	return opts
}

// refreshGaleraJoin recomputes a docker Galera node's options before it
// starts again: the other nodes' addresses may have changed with their
// containers.
func (c *Cluster) refreshGaleraJoin(n *Node) {
	if !c.isDocker() {
		return
	}
	for i, o := range c.nodes {
		if o == n {
			n.join = c.dockerGaleraOpts(n, i+1)
		}
	}
}

// primaryAddr is where a replica reaches the primary: its loopback port
// (sandbox) or its address on the private network (docker), and the
// password.
func (c *Cluster) primaryAddr() (host string, port int, password string, err error) {
	p := c.nodes[0]
	if d, ok := p.srv.(*server.Docker); ok {
		ip := d.PrivateIP()
		if ip == "" {
			return "", 0, "", fmt.Errorf("%s has no address on network %s", p.Name, c.docker.net.Name)
		}
		return ip, 3306, c.docker.password, nil
	}
	host, port, err = splitAddr(p.srv.Endpoint().Addr)
	return host, port, "", err
}

// repointReplicas points every replica at the primary again after the
// primary's container changed (a new container may have a new address).
func (c *Cluster) repointReplicas(ctx context.Context) error {
	if !c.isDocker() {
		return nil
	}
	for _, n := range c.nodes[1:] {
		if n.srv == nil || !n.srv.Alive() {
			continue
		}
		if err := c.replicate(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// network carries out disconnect and reconnect.
func (c *Cluster) network(n *Node, action string) error {
	d, ok := n.srv.(*server.Docker)
	if !ok {
		return fmt.Errorf("action %q needs the docker provider (a node on a private network)", action)
	}
	var err error
	if action == experiment.ActionDisconnect {
		c.noteIP(n)
		if err = d.Disconnect(); err == nil {
			n.disconnected = true
		}
	} else {
		if err = d.Reconnect(); err == nil {
			n.disconnected = false
			c.noteIP(n)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %s: %w", n.Name, action, err)
	}
	return nil
}
