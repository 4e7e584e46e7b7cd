package record

// TopologyResult is what a cell on a topology (a primary with replicas, a
// Galera cluster) records beside its figures: its nodes, the data checks
// on every node and the node events that happened.
type TopologyResult struct {
	Kind  string   `json:"kind"`
	Nodes []string `json:"nodes"` // "node1=127.0.0.1:PORT (primary)", ...
	// Checks compare every node's data with node 1's (row counts and
	// CHECKSUM TABLE): after loading and after the cell.
	Checks []DataCheck `json:"checks,omitempty"`
	Events []NodeEvent `json:"events,omitempty"`
	Healed []string    `json:"healed,omitempty"`
}

// DataCheck is one comparison of the nodes' data.
type DataCheck struct {
	When        string   `json:"when"`
	Equal       bool     `json:"equal"`
	Summary     string   `json:"summary"`
	Differences []string `json:"differences,omitempty"`
}

// NodeEvent is one [[events]] entry as it happened: when (seconds on the
// cell's clock, intervals.csv's t), on which node, and its error if it
// failed.
type NodeEvent struct {
	At     float64 `json:"at"`
	Node   int     `json:"node"`
	Action string  `json:"action"`
	Error  string  `json:"error,omitempty"`
}
