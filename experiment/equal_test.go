package experiment

import (
	"errors"
	"strings"
	"testing"
)

// A Galera cell compared with cells on one server or on replicas is refused
// when its run lets AUTO_INCREMENT choose ids (Galera steps them) or its
// tables are not InnoDB, naming the key and the way out; the same workload
// with client-chosen ids, or within Galera cells alone, is not.
func TestEqualWorkloadsAcrossTopologies(t *testing.T) {
	t.Parallel()
	const topologies = "[scenarios]\nasync = { topology = \"replicas\", replicas = 2 }\ngalera = { topology = \"galera\", nodes = 3 }\n"
	cases := []struct {
		name, src string
		want      []string // nil: resolves
	}{
		{"write_only re-inserts the same ids", "[workload]\nname = \"oltp_write_only\"\n" + topologies, nil},
		{"insert with client ids", "[workload]\nname = \"oltp_insert\"\nauto_inc = false\n" + topologies, nil},
		{"insert with AUTO_INCREMENT ids", "[workload]\nname = \"oltp_insert\"\n" + topologies,
			[]string{"line 1: workload.auto_inc", "cell galera: oltp_insert with auto_inc = on", "steps them by the cluster's size", "than on a primary with replicas", "wsrep_auto_increment_control = \"OFF\""}},
		{"AUTO_INCREMENT ids, control off", "[server.config]\nwsrep_auto_increment_control = \"OFF\"\n[workload]\nname = \"oltp_insert\"\n" + topologies, nil},
		{"control off in the galera scenario", "[workload]\nname = \"oltp_insert\"\n[scenarios]\nasync = { topology = \"replicas\" }\ngalera = { topology = \"galera\", wsrep_auto_increment_control = 0 }\n", nil},
		{"control on in the galera scenario", "[server.config]\nwsrep_auto_increment_control = \"OFF\"\n[workload]\nname = \"oltp_insert\"\n[scenarios]\nasync = { topology = \"replicas\" }\ngalera = { topology = \"galera\", wsrep_auto_increment_control = \"ON\" }\n",
			[]string{"cell galera: oltp_insert with auto_inc = on"}},
		{"writers all", "[server.config]\nwsrep_auto_increment_control = \"OFF\"\n[topology]\nkind = \"galera\"\nwriters = \"all\"\n[workload]\nname = \"oltp_insert\"\n[scenarios]\none = { topology = \"single\" }\ngalera = { }\n",
			[]string{"with writers = \"all\" every node hands out its own ids", "than on one server", "no setting makes them the same"}},
		{"re-insert with a new id", "[workload]\nname = \"oltp_write_only\"\n[scenarios]\nasync = { topology = \"replicas\", reinsert_id = \"auto\" }\ngalera = { topology = \"galera\", reinsert_id = \"auto\" }\n",
			[]string{"line 5: scenarios.galera.reinsert_id", "reinsert_id = \"auto\" lets AUTO_INCREMENT choose"}},
		{"myisam", "[workload]\nname = \"oltp_read_only\"\nmysql_storage_engine = \"myisam\"\n" + topologies,
			[]string{"line 3: workload.mysql_storage_engine", "engine myisam, which galera does not replicate"}},
		{"galera cells only", "[topology]\nkind = \"galera\"\n[workload]\nname = \"oltp_insert\"\n[axes]\nfc_limit = [16, 256]\n", nil},
		{"slap AUTO_INCREMENT", "[workload]\nname = \"slap\"\nauto_generate_sql = true\nauto_generate_sql_add_autoincrement = true\nauto_generate_sql_load_type = \"write\"\n" + topologies,
			[]string{"workload.auto_generate_sql_add_autoincrement", "cell galera: auto_generate_sql_add_autoincrement"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m, err := Parse("m.toml", c.src)
			if err == nil {
				_, err = Resolve(m, Flags{})
			}
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("got %v, want *Error", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%s", w, err)
				}
			}
		})
	}
}
