package experiment

import (
	"fmt"
	"strings"

	"benchmatrix/catalog"
	"benchmatrix/oltp"
)

// Equal workloads across topologies. A cell on a cluster whose every node
// takes writes (Galera) is compared with cells on one server or on
// replicas only when it runs the same statements on the same data. The
// loaded data is the same everywhere (prepare sends ids 1..N itself,
// oltp/prepare.go); two things cannot be made the same by benchmatrix and
// are refused here, naming why:
//   - ids chosen by AUTO_INCREMENT during the run (oltp_insert with
//     auto_inc, reinsert_id = auto, slap's auto-generate-sql-add-autoincrement):
//     a Galera node steps them by the cluster's size
//     (wsrep_auto_increment_control = ON, the default, which also overrides
//     a session's own auto_increment_increment), so the rows inserted get
//     other ids than on one server. wsrep_auto_increment_control = OFF
//     (every node then steps by 1) makes them the same when one node takes
//     the writes; with writers = "all" two nodes would hand out the same id.
//   - tables of another engine than InnoDB: Galera replicates InnoDB only,
//     so its nodes would not do the work a replica does.

// validateEqualWorkloads refuses the cells of a multi-writer topology that
// cannot run what the experiment's other topologies run.
func (d *decoder) validateEqualWorkloads(m *Manifest, plan *Plan) {
	kinds := map[string]bool{}
	for _, c := range plan.Cells {
		kinds[c.Topology.Describe().Name] = true
	}
	if len(kinds) < 2 {
		return // no comparison across topologies
	}
	reported := map[string]bool{}
	report := func(key, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if !reported[key+msg] {
			reported[key+msg] = true
			d.problem(key, "%s", msg)
		}
	}
	for _, c := range plan.Cells {
		top := c.Topology
		if c.Repeat != 1 || !top.Describe().MultiWriter {
			continue
		}
		others := otherKinds(kinds, top.Kind)
		if key, what := autoIDs(m, c); key != "" {
			ctl, set := cellServerValue(m, c, "wsrep_auto_increment_control")
			off := false
			if set {
				b, err := oltp.ParseBool(ctl)
				off = err == nil && !b
			}
			switch {
			case top.Writers == "all":
				report(key, "cell %s: %s, and on %s with writers = \"all\" every node hands out its own ids (auto_increment_increment = the cluster's size, offset = the node's place): the rows inserted get other ids than on %s, and no setting makes them the same; compare with client-chosen ids (auto_inc = false, reinsert_id = \"same\") or writers = \"one\"",
					c.Name, what, top.Kind, others)
			case !off:
				report(key, "cell %s: %s, and a %s node steps them by the cluster's size (wsrep_auto_increment_control = ON, the default, overrides a session's auto_increment_increment): the rows inserted get other ids than on %s; set wsrep_auto_increment_control = \"OFF\" in [server.config] (every node then steps by 1; writers = \"one\") or use client-chosen ids (auto_inc = false, reinsert_id = \"same\")",
					c.Name, what, top.Kind, others)
			}
		}
		if key, engine := otherEngine(m, c); key != "" {
			report(key, "cell %s: tables of engine %s, which %s does not replicate (InnoDB only): its nodes would not do what %s do; use InnoDB to compare topologies",
				c.Name, engine, top.Kind, others)
		}
	}
}

// otherKinds names the experiment's topologies other than kind.
func otherKinds(kinds map[string]bool, kind string) string {
	var out []string
	for _, k := range []string{catalog.TopologySingle, catalog.TopologyReplicas, catalog.TopologyGalera} {
		if kinds[k] && k != kind {
			out = append(out, map[string]string{catalog.TopologySingle: "one server", catalog.TopologyReplicas: "a primary with replicas"}[k])
		}
	}
	for k := range kinds {
		if k != kind && k != catalog.TopologySingle && k != catalog.TopologyReplicas && k != catalog.TopologyGalera {
			out = append(out, k)
		}
	}
	return strings.Join(out, " and ")
}

// autoIDs is the manifest key that makes cell c insert rows whose ids
// AUTO_INCREMENT chooses, and what it does; "" when it does not (the
// engine says: engine.Data.AutoIDs).
func autoIDs(m *Manifest, c Cell) (key, what string) {
	d := c.Workload.Data()
	if d.AutoIDKey == "" {
		return "", ""
	}
	return paramKey(m, c, d.AutoIDKey), d.AutoIDs
}

// otherEngine is the key that gives cell c tables of another engine than
// InnoDB, and that engine; "" when they are InnoDB.
func otherEngine(m *Manifest, c Cell) (key, engine string) {
	d := c.Workload.Data()
	for _, e := range d.StorageEngines {
		if e != "" && !strings.EqualFold(e, "innodb") && !strings.EqualFold(e, "default") {
			return paramKey(m, c, d.StorageEngineKey), e
		}
	}
	return "", ""
}

// paramKey is the manifest key that gave cell c its parameter name: the
// cell's scenario, an axis, or [workload].
func paramKey(m *Manifest, c Cell, name string) string {
	for _, sc := range m.Scenarios {
		for _, p := range sc.Params {
			if sc.Name == c.Scenario && p.Name == name {
				return "scenarios." + sc.Name + "." + name
			}
		}
	}
	for _, ax := range m.Axes {
		if ax.Name == name {
			return "axes." + name
		}
	}
	return "workload." + name
}

// cellServerValue is a server variable's value in cell c: its own
// parameter, else [server.config].
func cellServerValue(m *Manifest, c Cell, name string) (string, bool) {
	for _, p := range c.Server {
		if p.Name == name {
			return p.Value, true
		}
	}
	for _, p := range m.Server.Config {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}
