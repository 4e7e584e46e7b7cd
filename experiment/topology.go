package experiment

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/catalog"
	"benchmatrix/oltp"
)

// Topologies: [topology] says what servers a cell runs on (one, a primary
// with replicas, a Galera cluster); [[observe.metric]] adds the user's own
// per-second metrics; [[events]] are node faults at set times of a cell.
//
//	[topology]
//	kind = "galera"        # single (default) | replicas | galera
//	nodes = 3              # galera
//	replicas = 2           # replicas: a primary and this many GTID replicas
//	semi_sync = true       # replicas: semi-synchronous
//	fc_limit = 16          # galera: gcs.fc_limit on every node
//	mode = "multi-primary" # group: single-primary (default) | multi-primary
//
// kind (as "topology"), nodes, replicas, semi_sync and fc_limit can vary as
// scenario or axis keys too.

// TopologyReplicas and TopologyGalera are catalog's, for topology's attach
// tests; the rest of benchmatrix names catalog's.
const (
	TopologyReplicas = catalog.TopologyReplicas
	TopologyGalera   = catalog.TopologyGalera
)

// Topology is the servers one cell runs on.
type Topology struct {
	Kind     string `json:"kind"`
	Replicas int    `json:"replicas,omitempty"`
	SemiSync bool   `json:"semi_sync,omitempty"`
	Nodes    int    `json:"nodes,omitempty"`
	// FCLimit is Galera's gcs.fc_limit, set on every node (0: the
	// provider's default).
	FCLimit int `json:"fc_limit,omitempty"`
	// Mode is a replication group's mode (catalog.GroupSinglePrimary or
	// GroupMultiPrimary); "" for other kinds.
	Mode string `json:"mode,omitempty"`
	// Writers is where the workload's connections go: "one" (node 1, the
	// default) or "all" (Galera: connection i to node i mod N).
	Writers string `json:"writers,omitempty"`
}

// NodeCount is how many servers the topology has.
func (t *Topology) NodeCount() int {
	if t == nil {
		return 1
	}
	return t.Describe().Nodes(t.size())
}

// Describe is the topology's kind (single for nil or an unknown kind).
func (t *Topology) Describe() catalog.TopologyKind {
	var name string
	if t != nil {
		name = t.Kind
	}
	if k, ok := catalog.LookupTopology(name); ok {
		return k
	}
	k, _ := catalog.LookupTopology(catalog.TopologySingle)
	return k
}

// size is the value of the kind's size key (nodes, replicas).
func (t *Topology) size() int {
	switch t.Describe().SizeKey {
	case "nodes":
		return t.Nodes
	case "replicas":
		return t.Replicas
	}
	return 0
}

// setSize sets the kind's size key.
func (t *Topology) setSize(n int) {
	switch t.Describe().SizeKey {
	case "nodes":
		t.Nodes = n
	case "replicas":
		t.Replicas = n
	}
}

// withDefaults gives the kind its default size when none was given.
func (t *Topology) withDefaults() {
	if k := t.Describe(); k.SizeKey != "" && t.size() == 0 {
		t.setSize(k.DefaultSize)
	}
	switch k := t.Describe(); {
	case len(k.Modes) == 0:
		t.Mode = "" // a cell whose scenario made it another kind
	case t.Mode == "":
		t.Mode = k.Modes[0]
	}
}

// IsCluster reports whether the topology has more than one server.
func (t *Topology) IsCluster() bool { return t != nil && t.Describe().SizeKey != "" }

// Key names what a running cluster must be rebuilt for: the kind, the
// node count and the replication mode (fc_limit is set live).
func (t *Topology) Key() string {
	if !t.IsCluster() {
		return catalog.TopologySingle
	}
	if t.Mode != "" {
		return fmt.Sprintf("%s/%d/%s", t.Kind, t.NodeCount(), t.Mode)
	}
	return fmt.Sprintf("%s/%d/semi=%v", t.Kind, t.NodeCount(), t.SemiSync)
}

// MetricKinds: a rate is a counter turned into a per-second change; a gauge
// is shown as read.
const (
	MetricRate  = "rate"
	MetricGauge = "gauge"
)

// CustomMetric is one [[observe.metric]]: SQL read every second.
type CustomMetric struct {
	Name string `json:"name"`
	// SQL returns one row with one numeric column, or name/value rows
	// (SHOW STATUS LIKE ...: the values are summed).
	SQL  string `json:"sql"`
	Kind string `json:"kind"`
	// Node, when set, reads it on that node only (1 is the primary);
	// otherwise on every node.
	Node int `json:"node,omitempty"`
}

// Node fault actions.
const (
	ActionStop       = "stop"
	ActionKill       = "kill"
	ActionPause      = "pause"
	ActionResume     = "resume"
	ActionStart      = "start"
	ActionDisconnect = "disconnect"
	ActionReconnect  = "reconnect"
)

var sandboxActions = []string{ActionStop, ActionKill, ActionPause, ActionResume, ActionStart}

// Event is one [[events]] entry: at a time of the cell (from the start of
// its warm-up, the clock of intervals.csv's t), an action on a node.
type Event struct {
	At     time.Duration `json:"at"`
	Node   int           `json:"node"`
	Action string        `json:"action"`
}

// topologyKeys are the keys that can vary as scenario or axis keys.
var topologyKeys = map[string]bool{"topology": true, "nodes": true, "replicas": true, "semi_sync": true, "fc_limit": true, "mode": true}

// IsTopologyKey reports whether a parameter belongs to the topology.
func IsTopologyKey(name string) bool { return topologyKeys[name] }

// topologySection decodes [topology], [observe] and [[events]]; false for
// any other section.
func (d *decoder) topologySection(k string, v any, m *Manifest) bool {
	switch k {
	case "topology":
		t, ok := v.(map[string]any)
		if !ok {
			d.problem(k, "must be a table ([topology]), not a %s", typeName(v))
			return true
		}
		d.topology(t, m)
	case "observe":
		t, ok := v.(map[string]any)
		if !ok {
			d.problem(k, "must be a table ([[observe.metric]] entries), not a %s", typeName(v))
			return true
		}
		d.observeSection(t, m)
	case "events":
		d.events(v, m)
	default:
		return false
	}
	return true
}

func (d *decoder) topology(t map[string]any, m *Manifest) {
	top := &Topology{Kind: catalog.TopologySingle}
	for _, k := range d.keys("topology", t) {
		key := "topology." + k
		p, ok := d.scalar(key, k, t[k])
		if !ok {
			continue
		}
		switch k {
		case "kind", "writers", "mode":
			if _, isStr := t[k].(string); !isStr {
				d.problem(key, "want a string")
				continue
			}
			if k == "mode" {
				if err := setTopology(top, k, p.Value); err != nil {
					d.problem(key, "%v", err)
				}
				continue
			}
			if k == "writers" {
				top.Writers = p.Value
				if p.Value != "one" && p.Value != "all" {
					d.problem(key, "\"one\" (every connection to node 1) or \"all\" (connections spread over the Galera nodes), not %q", p.Value)
				}
				continue
			}
			if err := setTopology(top, "topology", p.Value); err != nil {
				d.problem(key, "%v", err)
			}
		case "nodes", "replicas", "semi_sync", "fc_limit":
			if err := setTopology(top, k, p.Value); err != nil {
				d.problem(key, "%v", err)
			}
		default:
			d.problem(key, "unknown key (known: kind, nodes, replicas, semi_sync, fc_limit, writers, mode)")
		}
	}
	if top.Mode != "" && len(top.Describe().Modes) == 0 {
		d.problem("topology.mode", "mode is a replication group's (kind = %q); a %s topology has none", catalog.TopologyGroup, top.Kind)
		top.Mode = ""
	}
	top.withDefaults()
	if top.Writers == "all" && !top.Describe().MultiWriter {
		d.problem("topology.writers", "writers = \"all\" is for Galera (every node takes writes); a %s topology writes on its %s only", top.Kind, top.Describe().FirstNode)
	}
	if top.Writers == "all" && top.Mode == catalog.GroupSinglePrimary {
		d.problem("topology.writers", "writers = \"all\" needs mode = %q: in a single-primary group only the primary (node 1) takes writes", catalog.GroupMultiPrimary)
	}
	m.Topology = top
}

// sizedBy is the kind a size key (nodes, replicas) sizes.
func sizedBy(key string) catalog.TopologyKind {
	for _, name := range catalog.TopologyNames() {
		if k, _ := catalog.LookupTopology(name); k.SizeKey == key {
			return k
		}
	}
	return catalog.TopologyKind{}
}

// setTopology sets one topology key from its text.
func setTopology(t *Topology, name, value string) error {
	switch name {
	case "topology":
		if _, ok := catalog.LookupTopology(value); !ok {
			return fmt.Errorf("unknown topology kind %q (known: %s)", value, strings.Join(catalog.TopologyNames(), ", "))
		}
		t.Kind = value
	case "nodes", "replicas", "fc_limit":
		n, err := strconv.Atoi(value)
		if err != nil {
			return fmt.Errorf("want a whole number, got %q", value)
		}
		switch name {
		case "nodes", "replicas":
			k := sizedBy(name)
			if n < k.MinSize || n > k.MaxSize {
				return fmt.Errorf("%d to %d %s, got %d", k.MinSize, k.MaxSize, k.SizeNoun, n)
			}
			if name == "nodes" {
				t.Nodes = n
			} else {
				t.Replicas = n
			}
		case "fc_limit":
			if n < 1 {
				return fmt.Errorf("gcs.fc_limit must be at least 1, got %d", n)
			}
			t.FCLimit = n
		}
	case "semi_sync":
		b, err := oltp.ParseBool(value)
		if err != nil {
			return err
		}
		t.SemiSync = b
	case "mode":
		k, _ := catalog.LookupTopology(catalog.TopologyGroup)
		for _, m := range k.Modes {
			if value == m {
				t.Mode = value
				return nil
			}
		}
		return fmt.Errorf("a replication group's mode is %s, not %q", strings.Join(k.Modes, " or "), value)
	default:
		return fmt.Errorf("%q is not a topology key", name)
	}
	return nil
}

func (d *decoder) observeSection(t map[string]any, m *Manifest) {
	for _, k := range d.keys("observe", t) {
		if k != "metric" {
			d.problem("observe."+k, "unknown key (known: [[observe.metric]])")
			continue
		}
		arr, ok := t[k].([]map[string]any)
		if !ok {
			d.problem("observe.metric", "write each metric as an [[observe.metric]] table with name, sql and kind")
			continue
		}
		for i, mt := range arr {
			key := fmt.Sprintf("observe.metric[%d]", i+1)
			cm := CustomMetric{Kind: MetricGauge}
			for _, f := range slices.Sorted(maps.Keys(mt)) {
				fk := "observe.metric." + f
				switch f {
				case "name", "sql", "kind":
					s, ok := d.str(fk, mt[f])
					if !ok {
						continue
					}
					switch f {
					case "name":
						cm.Name = s
					case "sql":
						cm.SQL = strings.TrimSpace(s)
					case "kind":
						cm.Kind = s
					}
				case "node":
					n, ok := mt[f].(int64)
					if !ok || n < 1 || n > catalog.MaxTopologyNodes {
						d.problem(fk, "a node number from 1 (the primary) to %d", catalog.MaxTopologyNodes)
						continue
					}
					cm.Node = int(n)
				default:
					d.problem(fk, "unknown key (known: name, sql, kind, node)")
				}
			}
			if !varNameRE.MatchString(cm.Name) {
				d.problem("observe.metric.name", "%s: a metric name of lower-case letters, digits and '_' (got %q)", key, cm.Name)
			}
			if cm.SQL == "" {
				d.problem("observe.metric.sql", "%s %s: missing: the query that reads it", key, cm.Name)
			}
			if cm.Kind != MetricRate && cm.Kind != MetricGauge {
				d.problem("observe.metric.kind", "%s %s: %q is not \"rate\" or \"gauge\"", key, cm.Name, cm.Kind)
			}
			for _, o := range m.Metrics {
				if o.Name == cm.Name {
					d.problem("observe.metric.name", "%q appears twice", cm.Name)
				}
			}
			m.Metrics = append(m.Metrics, cm)
		}
	}
}

func (d *decoder) events(v any, m *Manifest) {
	arr, ok := v.([]map[string]any)
	if !ok {
		d.problem("events", "write each event as an [[events]] table with at, node and action")
		return
	}
	for i, et := range arr {
		key := fmt.Sprintf("events[%d]", i+1)
		var ev Event
		for _, f := range slices.Sorted(maps.Keys(et)) {
			fk := "events." + f
			switch f {
			case "at":
				dur, err := ParseDuration(et[f])
				if err != nil || dur <= 0 {
					d.problem(fk, "%s: a time after the cell's start such as \"20s\" (%v)", key, err)
					continue
				}
				ev.At = dur
			case "node":
				n, ok := et[f].(int64)
				if !ok || n < 1 || n > catalog.MaxTopologyNodes {
					d.problem(fk, "%s: a node number from 1 (the primary) to %d", key, catalog.MaxTopologyNodes)
					continue
				}
				ev.Node = int(n)
			case "action":
				ev.Action, _ = d.str(fk, et[f])
			default:
				d.problem(fk, "%s: unknown key (known: at, node, action)", key)
			}
		}
		switch ev.Action {
		case ActionStop, ActionKill, ActionPause, ActionResume, ActionStart:
		case ActionDisconnect, ActionReconnect:
			// provider docker only: checked in validateTopology
		default:
			d.problem("events.action", "%s: unknown action %q (known: %s, disconnect, reconnect)", key, ev.Action, strings.Join(sandboxActions, ", "))
		}
		if ev.At == 0 && !d.isSet("events.at") {
			d.problem("events.at", "%s: missing: when, e.g. at = \"20s\"", key)
		}
		if ev.Node == 0 {
			d.problem("events.node", "%s: missing: which node (1 is the primary)", key)
		}
		m.Events = append(m.Events, ev)
	}
}

// checkTopologyParam validates a topology key given in a scenario or axis.
func (d *decoder) checkTopologyParam(m *Manifest, prov catalog.Descriptor, key string, p Param) {
	var t Topology
	if err := setTopology(&t, p.Name, p.Value); err != nil {
		d.problem(key, "%v", err)
		return
	}
	switch {
	case p.Name == "topology" && !t.IsCluster():
	case prov.Caps.Has(catalog.ExistingTopologies):
		if p.Name != "fc_limit" {
			d.problem(key, "%s cannot vary on provider %s: the topology is the servers its DSNs name (only fc_limit, set live and put back, can)", p.Name, prov.Name)
		}
	default:
		d.needs(prov, catalog.Topologies, key, "a topology ("+p.Name+" = "+p.Value+")")
	}
}

// dsns decodes [server] dsns: the nodes of an existing topology.
func (d *decoder) dsns(key string, v any, m *Manifest) {
	arr, ok := v.([]any)
	if !ok {
		d.problem(key, "want an array of DSNs, one per node, the primary first, got a %s", typeName(v))
		return
	}
	for i, e := range arr {
		s, ok := e.(string)
		if !ok || strings.TrimSpace(s) == "" {
			d.problem(key, "node %d: want a DSN such as \"bench@tcp(db2:3306)/sbtest\"", i+1)
			continue
		}
		m.Server.DSNs = append(m.Server.DSNs, s)
	}
}

// nodeDSNs checks the DSNs of an existing topology and makes node 1's the
// server's DSN (the workload's and the schema's): they must all parse and
// name the same database, if any.
func (d *decoder) nodeDSNs(m *Manifest) {
	if len(m.Server.DSNs) == 0 {
		return
	}
	if m.Server.DSN != "" {
		d.problem("server.dsns", "give dsn (one server) or dsns (one per node of a [topology]), not both")
		return
	}
	db := ""
	for i, s := range m.Server.DSNs {
		c, err := mysql.ParseDSN(s)
		if err != nil {
			key := "server.dsns"
			if !d.isSet(key) {
				key = "--dsn" // --dsn once per node
			}
			d.problem(key, "node %d: %s", i+1, dsnProblem(err))
			continue
		}
		if c.DBName == "" {
			continue
		}
		if db == "" {
			db = c.DBName
		} else if c.DBName != db {
			d.problem("server.dsns", "node %d names the database %q, node 1 %q: the workload's tables are in one schema, replicated to every node", i+1, c.DBName, db)
		}
	}
	m.Server.DSN = m.Server.DSNs[0]
}

// validateExisting checks a topology on servers someone else runs: one
// DSN per node, nothing that stops, pauses or rebuilds a node.
func (d *decoder) validateExisting(m *Manifest, varies bool) {
	n := 0
	if m.Topology.IsCluster() {
		n = m.Topology.NodeCount()
	}
	got, key := len(m.Server.DSNs), "server.dsns"
	if got == 0 && m.Server.DSN != "" {
		got, key = 1, "server.dsn"
	}
	switch {
	case n == 0 && len(m.Server.DSNs) > 1:
		d.problem("server.dsns", "%d DSNs are the nodes of a topology: add [topology] kind = \"replicas\" (replicas = %d) or \"galera\" (nodes = %d), or give one server as dsn",
			len(m.Server.DSNs), len(m.Server.DSNs)-1, len(m.Server.DSNs))
	case n > 0 && got != n:
		d.problem(key, "the %s topology has %d nodes: give one DSN per node, node 1 (the %s) first, in [server] dsns or as --dsn once per node (got %d)",
			m.Topology.Kind, n, m.Topology.Describe().FirstNode, got)
	}
	if varies {
		d.problem("topology", "on provider external the topology is the servers the DSNs name: its kind, nodes, replicas and semi_sync cannot vary by scenario or axis")
	}
	if len(m.Events) > 0 {
		d.problem("events", "node events stop, kill, pause or cut off a server, and benchmatrix never does that to servers it does not own (provider external): drop [[events]] or run the topology on provider sandbox or docker")
	}
}

// validateTopology checks [topology], the metrics and the events against
// the provider and each other.
func (d *decoder) validateTopology(m *Manifest, prov catalog.Descriptor) {
	existing := prov.Caps.Has(catalog.ExistingTopologies)
	if m.Topology.IsCluster() && !existing {
		d.needs(prov, catalog.Topologies, "topology.kind", "[topology] kind = \""+m.Topology.Kind+"\"")
	}
	varies := false
	for _, sc := range m.Scenarios {
		for _, p := range sc.Params {
			varies = varies || (IsTopologyKey(p.Name) && p.Name != "fc_limit")
		}
	}
	for _, ax := range m.Axes {
		varies = varies || (IsTopologyKey(ax.Name) && ax.Name != "fc_limit")
	}
	if existing {
		d.validateExisting(m, varies)
	}
	for i, ev := range m.Events {
		if (ev.Action == ActionDisconnect || ev.Action == ActionReconnect) && prov.Name != catalog.Docker {
			d.problem("events.action", "events[%d]: %q needs provider = \"docker\" (one container per node on a private network, cut off and healed with docker network disconnect/connect); the %s provider has %s",
				i+1, ev.Action, prov.Name, strings.Join(sandboxActions, ", "))
		}
	}
	if len(m.Events) > 0 && !m.Topology.IsCluster() && !varies {
		d.problem("events", "node events need a [topology] (kind = \"replicas\" or \"galera\")")
	}
	if m.Topology != nil && m.Topology.IsCluster() && !varies {
		n := m.Topology.NodeCount()
		if n < 2 {
			d.problem("topology", "kind = %q needs %s = N", m.Topology.Kind, m.Topology.Describe().SizeKey)
		}
		for i, ev := range m.Events {
			if ev.Node > n {
				d.problem("events.node", "events[%d]: node %d, but the topology has %d", i+1, ev.Node, n)
			}
		}
		for _, cm := range m.Metrics {
			if cm.Node > n {
				d.problem("observe.metric.node", "%s: node %d, but the topology has %d", cm.Name, cm.Node, n)
			}
		}
	}
}

// cellTopology is a cell's topology: [topology], then its own keys; nil
// when the cell runs on one server.
func (m *Manifest) cellTopology(params []Param) *Topology {
	t := Topology{Kind: catalog.TopologySingle}
	if m.Topology != nil {
		t = *m.Topology
	}
	for _, p := range params {
		if IsTopologyKey(p.Name) {
			_ = setTopology(&t, p.Name, p.Value) // validated before expansion
		}
	}
	t.withDefaults()
	if !t.IsCluster() {
		return nil
	}
	return &t
}

// validateCellTopology checks the events and metrics against every cell's
// own topology (scenarios and axes may vary it).
func (d *decoder) validateCellTopology(m *Manifest, plan *Plan) {
	if len(m.Events) == 0 && len(m.Metrics) == 0 {
		return
	}
	reported := map[string]bool{}
	seen := map[string]bool{} // one cell per topology: the checks depend on nothing else
	for _, c := range plan.Cells {
		if seen[c.Topology.Key()] {
			continue
		}
		seen[c.Topology.Key()] = true
		n := c.Topology.NodeCount()
		report := func(key, format string, args ...any) {
			msg := fmt.Sprintf(format, args...)
			if !reported[key+msg] {
				reported[key+msg] = true
				d.problem(key, "%s", msg)
			}
		}
		for i, ev := range m.Events {
			switch {
			case !c.Topology.IsCluster():
				report("events", "events[%d]: cell %s runs on one server; node events need a topology", i+1, c.Name)
			case ev.Node > n:
				report("events.node", "events[%d]: node %d, but cell %s has %d nodes", i+1, ev.Node, c.Name, n)
			}
		}
		for _, cm := range m.Metrics {
			if cm.Node > n {
				report("observe.metric.node", "%s: node %d, but cell %s has %d node(s)", cm.Name, cm.Node, c.Name, n)
			}
		}
	}
}

// reads reports whether a topology reads a topology key given as name =
// value: its size key sizes it, semi_sync and fc_limit need a kind that
// has them (semi_sync = false asks nothing), topology always applies.
func (t *Topology) reads(name, value string) bool {
	k := t.Describe()
	switch name {
	case "topology":
		return true
	case "semi_sync":
		b, _ := oltp.ParseBool(value)
		return !b || k.SemiSync
	case "fc_limit":
		return k.FlowControl
	case "mode":
		return len(k.Modes) > 0
	}
	return k.SizeKey == name
}

// whyNotRead says why a topology of kind k ignores a key, for errors.
func whyNotRead(k catalog.TopologyKind, name string) string {
	what := "a " + k.Name + " topology"
	if k.SizeKey == "" {
		what = "one server (no [topology] kind or topology key makes it a cluster)"
	}
	switch name {
	case "semi_sync":
		return fmt.Sprintf("semi_sync is semi-synchronous replication from a primary to its replicas (kind = %q); %s has none", catalog.TopologyReplicas, what)
	case "fc_limit":
		return fmt.Sprintf("fc_limit is Galera's flow control (gcs.fc_limit, kind = %q); %s has none (a group's flow control is its group_replication_flow_control_* variables)", catalog.TopologyGalera, what)
	case "mode":
		return fmt.Sprintf("mode is a replication group's single-primary or multi-primary mode (kind = %q); %s has none", catalog.TopologyGroup, what)
	}
	if k.SizeKey == "" {
		return fmt.Sprintf("%s sizes a %s topology; these cells run on %s", name, sizedBy(name).Name, what)
	}
	return fmt.Sprintf("%s sizes a %s topology; %s is sized by %s", name, sizedBy(name).Name, what, k.SizeKey)
}

// validateTopologyKeys refuses topology keys that no cell they reach
// reads (semi_sync on Galera, nodes on replicas, fc_limit on one server):
// such a key means nothing, and as an axis it makes cells that differ only
// by name. Then it refuses any two cells that still differ only in keys
// their topology ignores.
func (d *decoder) validateTopologyKeys(m *Manifest, plan *Plan) {
	type source struct {
		key, name, value string
		reaches          func(c Cell) bool
	}
	param := func(c Cell, name string) (string, bool) {
		for _, p := range c.Params {
			if p.Name == name {
				return p.Value, true
			}
		}
		return "", false
	}
	var sources []source
	if m.Topology != nil {
		for _, name := range []string{"nodes", "replicas", "semi_sync", "fc_limit", "mode"} {
			if !d.isSet("topology." + name) {
				continue
			}
			value := map[string]string{"nodes": strconv.Itoa(m.Topology.Nodes), "replicas": strconv.Itoa(m.Topology.Replicas),
				"semi_sync": strconv.FormatBool(m.Topology.SemiSync), "fc_limit": strconv.Itoa(m.Topology.FCLimit), "mode": m.Topology.Mode}[name]
			sources = append(sources, source{"topology." + name, name, value, func(c Cell) bool { _, own := param(c, name); return !own }})
		}
	}
	for _, sc := range m.Scenarios {
		for _, p := range sc.Params {
			if IsTopologyKey(p.Name) {
				sources = append(sources, source{"scenarios." + sc.Name + "." + p.Name, p.Name, p.Value, func(c Cell) bool {
					v, _ := param(c, p.Name)
					return c.Scenario == sc.Name && v == p.Value
				}})
			}
		}
	}
	for _, ax := range m.Axes {
		if !IsTopologyKey(ax.Name) {
			continue
		}
		for _, v := range ax.Values {
			sources = append(sources, source{"axes." + ax.Name, ax.Name, v, func(c Cell) bool { got, ok := param(c, ax.Name); return ok && got == v }})
		}
	}
	reported := map[string]bool{}
	for _, s := range sources {
		var first *Cell
		read := false
		for i, c := range plan.Cells {
			if c.Repeat != 1 || !s.reaches(c) {
				continue
			}
			if first == nil {
				first = &plan.Cells[i]
			}
			read = read || c.Topology.reads(s.name, s.value)
		}
		if first != nil && !read && !reported[s.key] {
			reported[s.key] = true
			d.problem(s.key, "%s = %s means nothing in cell %s: %s", s.name, s.value, first.Name, whyNotRead(first.Topology.Describe(), s.name))
		}
	}
	if len(d.problems) > 0 {
		return // the cells below are the same for the reasons above
	}
	// Cells that differ only in keys their topology ignores.
	seen := map[string]Cell{}
	for _, c := range plan.Cells {
		if c.Repeat != 1 {
			continue
		}
		sig := []string{c.Scenario}
		var ignored []string
		for _, p := range c.Params {
			if IsTopologyKey(p.Name) && !c.Topology.reads(p.Name, p.Value) {
				ignored = append(ignored, p.Name)
				continue
			}
			sig = append(sig, p.Name+"="+p.Value)
		}
		k := strings.Join(sig, "\x00")
		if o, dup := seen[k]; dup && len(ignored) > 0 && !reported[ignored[0]] {
			reported[ignored[0]] = true
			key := "axes." + ignored[0]
			if !isAxis(m, ignored[0]) {
				key = "scenarios." + c.Scenario + "." + ignored[0]
			}
			d.problem(key, "cells %s and %s are the same servers and workload: they differ only in %s (%s); exclude the combinations that mean nothing or use scenarios",
				o.Name, c.Name, strings.Join(ignored, ", "), whyNotRead(c.Topology.Describe(), ignored[0]))
		}
		if _, dup := seen[k]; !dup {
			seen[k] = c
		}
	}
}

// validateEventTimes refuses an event after the end of a cell's window
// (its warm-up, at most warmup_cap when automatic, and its duration):
// it would never happen. A slap cell runs its queries to the end.
func (d *decoder) validateEventTimes(m *Manifest, plan *Plan) {
	reported := map[int]bool{}
	for _, c := range plan.Cells {
		if c.Repeat != 1 || !c.Topology.IsCluster() {
			continue
		}
		if d := c.descriptor(); d == nil || d.RunsToEnd {
			continue
		}
		cm := c.Workload.Common()
		warm, how := cm.Warmup, "warm-up"
		if c.Policy.WarmupAuto {
			warm, how = c.Policy.WarmupCap, "warm-up of at most warmup_cap"
		}
		end := warm + cm.Time
		for i, ev := range m.Events {
			if ev.At >= end && !reported[i] {
				reported[i] = true
				d.problem("events.at", "events[%d]: at = %v is not within cell %s, which ends at %v (%s %v + duration %v, after --duration and --warmup): the %s would never happen",
					i+1, ev.At, c.Name, end, how, warm, cm.Time, ev.Action)
			}
		}
	}
}

// validateMetricNames refuses a metric named like a column benchmatrix
// writes itself (tps, a sampled metric, a node column): intervals.csv
// would have two columns of that name.
func (d *decoder) validateMetricNames(m *Manifest, builtin []string) {
	taken := map[string]bool{}
	for _, c := range builtin {
		taken[c] = true
	}
	for i, cm := range m.Metrics {
		if taken[cm.Name] {
			d.problem("observe.metric.name", "observe.metric[%d]: %q is a column benchmatrix writes itself in intervals.csv (%s); name the metric otherwise, e.g. %q",
				i+1, cm.Name, "docs/results.md lists them", "my_"+cm.Name)
		}
	}
}
