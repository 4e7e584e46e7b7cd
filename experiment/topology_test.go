package experiment

import (
	"errors"
	"strings"
	"testing"

	"benchmatrix/catalog"
	"benchmatrix/exitcode"
)

func TestTopologyKeysExpand(t *testing.T) {
	t.Parallel()
	p, err := resolve("m.toml", `
[topology]
kind = "galera"
fc_limit = 16
[workload]
name = "oltp_write_only"
[axes]
fc_limit = [16, 256]
[[observe.metric]]
name = "recv_queue"
sql = "SHOW GLOBAL STATUS LIKE 'wsrep_local_recv_queue'"
node = 2
[[events]]
at = "10s"
node = 2
action = "pause"
[[events]]
at = "14s"
node = 2
action = "resume"
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Cells) != 2 {
		t.Fatalf("%d cells", len(p.Cells))
	}
	for i, want := range []int{16, 256} {
		c := p.Cells[i]
		if c.Topology == nil || c.Topology.Kind != catalog.TopologyGalera || c.Topology.Nodes != 3 || c.Topology.FCLimit != want {
			t.Fatalf("cell %s topology %+v, want galera, 3 nodes, fc_limit %d", c.Name, c.Topology, want)
		}
		if len(c.Server) != 0 {
			t.Fatalf("fc_limit became a server variable: %v", c.Server)
		}
		if c.Topology.Key() != p.Cells[0].Topology.Key() {
			t.Fatal("fc_limit must not rebuild the cluster")
		}
	}
	m := p.Manifest
	if len(m.Metrics) != 1 || m.Metrics[0].Kind != MetricGauge || m.Metrics[0].Node != 2 {
		t.Fatalf("metrics %+v", m.Metrics)
	}
	if len(m.Events) != 2 || m.Events[0].Action != ActionPause || m.Events[1].At.Seconds() != 14 {
		t.Fatalf("events %+v", m.Events)
	}
}

func TestTopologyAxisRebuilds(t *testing.T) {
	t.Parallel()
	p, err := resolve("m.toml", "[topology]\nkind = \"replicas\"\nreplicas = 2\n[workload]\nname = \"oltp_insert\"\n[axes]\nsemi_sync = [false, true]\n")
	if err != nil {
		t.Fatal(err)
	}
	if p.Cells[0].Topology.Key() == p.Cells[1].Topology.Key() || p.Cells[1].Topology.NodeCount() != 3 {
		t.Fatalf("semi_sync must be another cluster: %+v %+v", p.Cells[0].Topology, p.Cells[1].Topology)
	}
	single, err := resolve("m.toml", "[workload]\nname = \"oltp_insert\"\n")
	if err != nil || single.Cells[0].Topology != nil {
		t.Fatalf("a manifest without [topology] runs on one server: %+v %v", single.Cells[0].Topology, err)
	}
}

// A docker topology resolves, with disconnect and reconnect events.
func TestDockerTopologyResolves(t *testing.T) {
	t.Parallel()
	p, err := resolve("m.toml", "[server]\nprovider = \"docker\"\n[topology]\nkind = \"galera\"\n[workload]\nname = \"oltp_insert\"\n"+
		"[[events]]\nat = \"2s\"\nnode = 2\naction = \"disconnect\"\n[[events]]\nat = \"4s\"\nnode = 2\naction = \"reconnect\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if n := p.Cells[0].Topology.NodeCount(); n != 3 || len(p.Manifest.Events) != 2 {
		t.Fatalf("nodes %d, events %+v", n, p.Manifest.Events)
	}
}

func TestTopologyProblems(t *testing.T) {
	t.Parallel()
	const ext = "[server]\nprovider = \"external\"\n"
	cases := []struct {
		name, src string
		want      []string
	}{
		{"unknown kind", "[topology]\nkind = \"ring\"\n[workload]\nname = \"oltp_insert\"\n", []string{"line 2: topology.kind", "unknown topology kind \"ring\""}},
		{"one galera node", "[topology]\nkind = \"galera\"\nnodes = 1\n[workload]\nname = \"oltp_insert\"\n", []string{"line 3: topology.nodes", "2 to 9 nodes"}},
		{"unknown key", "[topology]\nkind = \"galera\"\nnodez = 3\n[workload]\nname = \"oltp_insert\"\n", []string{"line 3: topology.nodez: unknown key"}},
		{"writers all on replicas", "[topology]\nkind = \"replicas\"\nwriters = \"all\"\n[workload]\nname = \"oltp_insert\"\n", []string{"line 3: topology.writers", "is for Galera"}},
		{"writers some", "[topology]\nkind = \"galera\"\nwriters = \"some\"\n[workload]\nname = \"oltp_insert\"\n", []string{"line 3: topology.writers", "not \"some\""}},
		{"events without a topology", "[workload]\nname = \"oltp_insert\"\n[[events]]\nat = \"2s\"\nnode = 2\naction = \"kill\"\n", []string{"events: node events need a [topology]"}},
		{"event on a missing node", "[topology]\nkind = \"replicas\"\n[workload]\nname = \"oltp_insert\"\n[[events]]\nat = \"2s\"\nnode = 3\naction = \"kill\"\n", []string{"node 3, but the topology has 2"}},
		{"disconnect on sandboxes", "[topology]\nkind = \"galera\"\n[workload]\nname = \"oltp_insert\"\n[[events]]\nat = \"2s\"\nnode = 2\naction = \"disconnect\"\n", []string{"line 8: events.action", "needs provider = \"docker\""}},
		{"unknown action", "[topology]\nkind = \"galera\"\n[workload]\nname = \"oltp_insert\"\n[[events]]\nat = \"2s\"\nnode = 2\naction = \"reboot\"\n", []string{"unknown action \"reboot\""}},
		{"metric kind", "[workload]\nname = \"oltp_insert\"\n[[observe.metric]]\nname = \"x\"\nsql = \"SELECT 1\"\nkind = \"counter\"\n", []string{"line 6: observe.metric.kind", "\"counter\" is not \"rate\" or \"gauge\""}},
		{"metric without sql", "[workload]\nname = \"oltp_insert\"\n[[observe.metric]]\nname = \"x\"\n", []string{"observe.metric.sql", "missing"}},
		{"bad topology axis", "[workload]\nname = \"oltp_insert\"\n[axes]\nreplicas = [1, 0]\n", []string{"line 4: axes.replicas", "1 to 8 replicas"}},
		{"external with one dsn", "[server]\nprovider = \"external\"\ndsn = \"u@tcp(h:3306)/\"\n[topology]\nkind = \"replicas\"\n[workload]\nname = \"oltp_insert\"\n", []string{"line 3: server.dsn: the replicas topology has 2 nodes: give one DSN per node", "(got 1)"}},
		{"external dsns too few", ext + "dsns = [\"u@tcp(a:3306)/\", \"u@tcp(b:3306)/\"]\n[topology]\nkind = \"galera\"\n[workload]\nname = \"oltp_insert\"\n", []string{"line 3: server.dsns: the galera topology has 3 nodes", "(got 2)"}},
		{"external dsns without a topology", ext + "dsns = [\"u@tcp(a:3306)/\", \"u@tcp(b:3306)/\"]\n[workload]\nname = \"oltp_insert\"\n", []string{"line 3: server.dsns: 2 DSNs are the nodes of a topology", "replicas = 1"}},
		{"external dsn and dsns", ext + "dsn = \"u@tcp(a:3306)/\"\ndsns = [\"u@tcp(a:3306)/\", \"u@tcp(b:3306)/\"]\n[topology]\nkind = \"replicas\"\n[workload]\nname = \"oltp_insert\"\n", []string{"server.dsns: give dsn (one server) or dsns"}},
		{"external dsns databases", ext + "dsns = [\"u@tcp(a:3306)/shop\", \"u@tcp(b:3306)/other\"]\n[topology]\nkind = \"replicas\"\n[workload]\nname = \"oltp_insert\"\n", []string{"node 2 names the database \"other\", node 1 \"shop\""}},
		{"external dsns not strings", ext + "dsns = [\"u@tcp(a:3306)/\", 3]\n[topology]\nkind = \"replicas\"\n[workload]\nname = \"oltp_insert\"\n", []string{"line 3: server.dsns: node 2: want a DSN"}},
		{"external events", ext + "dsns = [\"u@tcp(a:3306)/\", \"u@tcp(b:3306)/\"]\n[topology]\nkind = \"replicas\"\n[workload]\nname = \"oltp_insert\"\n[[events]]\nat = \"2s\"\nnode = 2\naction = \"stop\"\n",
			[]string{"events: node events stop, kill, pause or cut off a server, and benchmatrix never does that to servers it does not own"}},
		{"external topology axis", ext + "dsns = [\"u@tcp(a:3306)/\", \"u@tcp(b:3306)/\"]\n[topology]\nkind = \"replicas\"\n[workload]\nname = \"oltp_insert\"\n[axes]\nsemi_sync = [false, true]\n",
			[]string{"line 9: axes.semi_sync: semi_sync cannot vary on provider external"}},
		{"event beyond a scenario's nodes", "[workload]\nname = \"oltp_insert\"\n[scenarios]\nr1 = { topology = \"replicas\", replicas = 1 }\ng = { topology = \"galera\" }\n[[events]]\nat = \"2s\"\nnode = 3\naction = \"kill\"\n", []string{"node 3, but cell r1 has 2 nodes"}},
		{"semi_sync on galera", "[topology]\nkind = \"galera\"\nsemi_sync = true\n[workload]\nname = \"oltp_insert\"\n", []string{"line 3: topology.semi_sync", "semi_sync = true means nothing", "a galera topology has none"}},
		{"semi_sync on a galera scenario", "[workload]\nname = \"oltp_insert\"\n[scenarios]\ng = { topology = \"galera\", semi_sync = true }\n", []string{"line 4: scenarios.g.semi_sync", "a galera topology has none"}},
		{"fc_limit on replicas", "[topology]\nkind = \"replicas\"\nfc_limit = 16\n[workload]\nname = \"oltp_insert\"\n", []string{"line 3: topology.fc_limit", "Galera's flow control"}},
		{"nodes axis on replicas", "[topology]\nkind = \"replicas\"\n[workload]\nname = \"oltp_insert\"\n[axes]\nnodes = [3, 5]\n", []string{"line 6: axes.nodes", "nodes sizes a galera topology; a replicas topology is sized by replicas"}},
		{"replicas axis without a kind", "[workload]\nname = \"oltp_insert\"\n[axes]\nreplicas = [1, 2]\n", []string{"line 4: axes.replicas", "run on one server"}},
		{"nodes axis crossed with kinds", "[workload]\nname = \"oltp_insert\"\n[axes]\ntopology = [\"replicas\", \"galera\"]\nnodes = [3, 5]\n", []string{"line 5: axes.nodes", "differ only in nodes", "exclude"}},
		{"event after the window", "[experiment]\nduration = \"30s\"\nwarmup = \"5s\"\n[topology]\nkind = \"galera\"\n[workload]\nname = \"oltp_insert\"\n[[events]]\nat = \"40s\"\nnode = 2\naction = \"kill\"\n", []string{"line 9: events.at", "events[1]: at = 40s", "ends at 35s", "never happen"}},
		{"event after an automatic warm-up's cap", "[experiment]\nduration = \"10s\"\nwarmup = \"auto\"\nwarmup_cap = \"20s\"\n[topology]\nkind = \"galera\"\n[workload]\nname = \"oltp_insert\"\n[[events]]\nat = \"31s\"\nnode = 2\naction = \"kill\"\n", []string{"events.at", "ends at 30s"}},
		{"metric named like a built-in column", "[workload]\nname = \"oltp_insert\"\n[[observe.metric]]\nname = \"tps\"\nsql = \"SELECT 1\"\n", []string{"line 4: observe.metric.name", "\"tps\" is a column benchmatrix writes itself"}},
		{"event on a single-server scenario", "[workload]\nname = \"oltp_insert\"\n[scenarios]\none = { topology = \"single\" }\ng = { topology = \"galera\" }\n[[events]]\nat = \"2s\"\nnode = 2\naction = \"kill\"\n", []string{"cell one runs on one server"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m, err := Parse("m.toml", c.src)
			if err == nil {
				_, err = Resolve(m, Flags{Columns: []string{"cell", "t", "tps", "qps"}})
			}
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("got %v, want *Error", err)
			}
			if exitcode.Of(err) != exitcode.Usage {
				t.Errorf("exit code %d, want %d", exitcode.Of(err), exitcode.Usage)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%s", w, err)
				}
			}
		})
	}
}

// An existing topology: one DSN per node, in [server] dsns or as --dsn
// flags; node 1's DSN is the server's, its database the schema; fc_limit
// may vary (set live, put back).
func TestExistingTopologyResolves(t *testing.T) {
	t.Parallel()
	src := "[server]\nprovider = \"external\"\ndsns = [\"u@tcp(a:3306)/shop\", \"u@tcp(b:3306)/shop\", \"u@tcp(c:3306)/\"]\n" +
		"[topology]\nkind = \"galera\"\n[workload]\nname = \"oltp_insert\"\n[axes]\nfc_limit = [16, 64]\n"
	p, err := resolve("m.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Manifest.Server; len(s.DSNs) != 3 || s.DSN != s.DSNs[0] || s.Schema != "shop" {
		t.Fatalf("server %+v", s)
	}
	if len(p.Cells) != 2 || p.Cells[0].Topology.Key() != p.Cells[1].Topology.Key() || p.Cells[1].Topology.FCLimit != 64 {
		t.Fatalf("fc_limit cells: %+v", p.Cells)
	}
	m, err := Parse("m.toml", "[server]\nprovider = \"external\"\n[topology]\nkind = \"replicas\"\n[workload]\nname = \"oltp_insert\"\n")
	if err != nil {
		t.Fatal(err)
	}
	p, err = Resolve(m, Flags{DSNs: []string{"u@tcp(a:3306)/", "u@tcp(b:3306)/"}})
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Manifest.Server; len(s.DSNs) != 2 || s.DSN != "u@tcp(a:3306)/" {
		t.Fatalf("--dsn twice: %+v", s)
	}
}
