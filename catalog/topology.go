package catalog

import "sort"

// Role is what a node is in its topology: the node sampler chooses what
// it reads and its columns by it (a row of observe's roleSamplings each),
// and topology/ names its nodes with it.
type Role string

// The roles.
const (
	RoleSingle  Role = ""        // one server, no topology
	RolePrimary Role = "primary" // takes the writes; replicas read from it
	RoleReplica Role = "replica"
	RoleGalera  Role = "galera" // a Galera cluster's member
	RoleGroup   Role = "group"  // a MySQL group replication member
)

// TopologyKind describes one [topology] kind: the keys that size it, its
// nodes and their roles, and what the manifest may ask of it. How a kind
// starts, restarts, heals and checks its nodes is topology/'s, one file
// per kind; nothing else asks a kind's name.
type TopologyKind struct {
	Name string
	// SizeKey is the manifest key that sizes it ("nodes", "replicas");
	// "" for one server. DefaultSize, MinSize and MaxSize bound it.
	SizeKey                       string
	DefaultSize, MinSize, MaxSize int
	// SizeNoun says what SizeKey counts, for errors ("a Galera cluster
	// here has 2 to 9 nodes").
	SizeNoun string
	// Nodes is the node count of a topology of size n.
	Nodes func(n int) int
	// Role is node i's role (from 1).
	Role func(i int) Role
	// MultiWriter: every node takes writes (writers = "all" spreads the
	// connections over them); otherwise node 1 does.
	MultiWriter bool
	// FlowControl: fc_limit (Galera's gcs.fc_limit) applies.
	FlowControl bool
	// SemiSync: semi_sync applies.
	SemiSync bool
	// FirstNode names node 1 in messages ("primary", "first writer").
	FirstNode string
	// Modes are the values of [topology] mode, the default first; none
	// when the kind has no mode.
	Modes []string
	// Needs says what the kind needs that a MariaDB server lacks ("" when
	// MariaDB runs it): refused before a node starts.
	Needs string
}

// MaxTopologyNodes bounds a topology: the servers all run on this machine.
const MaxTopologyNodes = 9

// The kinds' names.
const (
	TopologySingle   = "single"
	TopologyReplicas = "replicas"
	TopologyGalera   = "galera"
	TopologyGroup    = "group"
)

// Group replication modes: one member takes writes (the others are read
// only) or every member does (group_replication_single_primary_mode).
const (
	GroupSinglePrimary = "single-primary"
	GroupMultiPrimary  = "multi-primary"
)

// topologyKinds is every kind, in one table.
var topologyKinds = map[string]TopologyKind{
	TopologySingle: {Name: TopologySingle, Nodes: func(int) int { return 1 }, Role: func(int) Role { return RoleSingle }, FirstNode: "server"},
	TopologyReplicas: {Name: TopologyReplicas, SizeKey: "replicas", DefaultSize: 1, MinSize: 1, MaxSize: MaxTopologyNodes - 1,
		SizeNoun: "replicas", Nodes: func(n int) int { return 1 + n }, SemiSync: true, FirstNode: "primary",
		Role: func(i int) Role {
			if i == 1 {
				return RolePrimary
			}
			return RoleReplica
		}},
	TopologyGalera: {Name: TopologyGalera, SizeKey: "nodes", DefaultSize: 3, MinSize: 2, MaxSize: MaxTopologyNodes,
		SizeNoun: "nodes in a Galera cluster", Nodes: func(n int) int { return n }, MultiWriter: true, FlowControl: true,
		FirstNode: "first writer", Role: func(int) Role { return RoleGalera }},
	// MySQL group replication (from MySQL's documentation: topology/group.go).
	TopologyGroup: {Name: TopologyGroup, SizeKey: "nodes", DefaultSize: 3, MinSize: 2, MaxSize: MaxTopologyNodes,
		SizeNoun: "members in a replication group", Nodes: func(n int) int { return n }, MultiWriter: true,
		FirstNode: "bootstrapping member", Role: func(int) Role { return RoleGroup },
		Modes: []string{GroupSinglePrimary, GroupMultiPrimary},
		Needs: "MySQL's own mysqld (5.7.17+, 8.0 or 8.4) with its group_replication plugin: MariaDB has no group replication"},
}

// LookupTopology finds a kind by name; "" is single.
func LookupTopology(name string) (TopologyKind, bool) {
	if name == "" {
		name = TopologySingle
	}
	k, ok := topologyKinds[name]
	return k, ok
}

// TopologyNames lists the kinds, single first.
func TopologyNames() []string {
	out := []string{TopologySingle}
	var rest []string
	for n := range topologyKinds {
		if n != TopologySingle {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}
