package experiment

import (
	"strings"
	"testing"

	"benchmatrix/slap"
)

// TestSlapWorkload: the slap workload's keys are workload keys, axes and
// scenario keys; a cell runs one engine at one concurrency; slap keys on
// an engine workload, engine keys on slap, and bad values are problems
// with their key and line.
func TestSlapWorkload(t *testing.T) {
	p, err := resolve("s.toml", `[experiment]
duration = "1m"
[workload]
name = "slap"
number_of_queries = 1000
iterations = 5
[scenarios]
trx1 = { innodb_flush_log_at_trx_commit = 1 }
trx2 = { innodb_flush_log_at_trx_commit = 2 }
[axes]
engine = ["myisam", "innodb"]
load_type = ["read", "write", "update"]
concurrency = [1, 8]
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Cells) != 24 {
		t.Fatalf("%d cells, want 24", len(p.Cells))
	}
	for _, c := range p.Cells {
		so, ok := c.Workload.Options.(slap.Options)
		if !ok {
			t.Fatalf("cell %s has no slap configuration", c.Name)
		}
		s := so.Config
		if !s.AutoGenerate || s.NumberOfQueries != 1000 || s.Iterations != 5 || len(s.Engines) != 1 || len(s.Concurrency) != 1 {
			t.Errorf("cell %s: %+v", c.Name, s)
		}
		if cm := c.Workload.Common(); cm.Threads != s.Concurrency[0] || c.Workload.Workload() != SlapWorkload || cm.Warmup != 0 {
			t.Errorf("cell %s: engine options %+v", c.Name, c.Workload)
		}
		if len(c.Server) != 1 || c.Server[0].Name != "innodb_flush_log_at_trx_commit" {
			t.Errorf("cell %s: server variables %v", c.Name, c.Server)
		}
	}

	for _, tc := range []struct{ src, want string }{
		{"[workload]\nname = \"oltp_insert\"\nload_type = \"read\"\n", "line 3: workload.load_type: oltp_insert does not read load_type (only slap do)"},
		{"[workload]\nname = \"slap\"\ntables = 4\n", "line 3: workload.tables: slap does not read tables"},
		{"[workload]\nname = \"slap\"\nload_type = \"sideways\"\n", "line 3: workload.load_type: option load_type: \"sideways\": want read, write, update, key or mixed"},
		{"[workload]\nname = \"slap\"\nload_type = \"key\"\n", "Can't perform key test without a primary key!"},
		{"[workload]\nname = \"slap\"\n[axes]\nconcurrency = [0, 4]\n", "axes.concurrency"},
		{"[workload]\nname = \"slap\"\nnumber_of_querys = 4\n", "line 3: workload.number_of_querys: unknown workload option"},
	} {
		_, err := resolve("bad.toml", tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want a problem saying %q", tc.src, err, tc.want)
		}
	}
}
