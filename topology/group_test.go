package topology

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/exitcode"
	"benchmatrix/experiment"
	"benchmatrix/server"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/group-replication.golden")

// What a 3-member group would be started with, per version and mode: every
// node's options and statements, pinned in testdata/group-replication.golden
// (go test ./topology -run TestGroupOptionsAndStatements -update rewrites
// it), and the facts from MySQL's documentation checked one by one below,
// so that a change to the golden file must still agree with them.
func TestGroupOptionsAndStatements(t *testing.T) {
	cases := []struct {
		version, mode string
		docker        bool
	}{
		{"5.7.44", catalog.GroupSinglePrimary, false},
		{"8.0.36", catalog.GroupSinglePrimary, false},
		{"8.0.20", catalog.GroupMultiPrimary, false},
		{"8.4.3", catalog.GroupMultiPrimary, false},
		{"5.7.44", catalog.GroupSinglePrimary, true},
		{"8.4.3", catalog.GroupSinglePrimary, true},
	}
	var b strings.Builder
	for _, c := range cases {
		v, err := catalog.ParseMySQLVersion(c.version)
		if err != nil {
			t.Fatal(err)
		}
		// On sandboxes: loopback ports, no password. In containers: the
		// members by name on the private network (the test's subnet and
		// password stand for the run's).
		seeds := []string{"127.0.0.1:33061", "127.0.0.1:33062", "127.0.0.1:33063"}
		local := func(id int) string { return fmt.Sprintf("127.0.0.1:%d", 33060+id) }
		report := func(int) string { return "127.0.0.1" }
		allow, password, where := "127.0.0.1", "", "sandboxes"
		if c.docker {
			seeds = []string{"node1:33061", "node2:33061", "node3:33061"}
			local = func(id int) string { return fmt.Sprintf("node%d:33061", id) }
			report = func(id int) string { return fmt.Sprintf("node%d", id) }
			allow, password, where = "172.18.0.0/16", "0123456789abcdef", "docker"
		}
		m := groupMember{version: v, mode: c.mode, name: "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee", password: password}
		fmt.Fprintf(&b, "## MySQL %s, %s, %s\n", c.version, c.mode, where)
		for id := 1; id <= 3; id++ {
			opts := m.options(id, groupAddress{local: local(id), seeds: seeds, allow: allow, report: report(id)})
			got := map[string]string{}
			var flags []string
			for _, o := range opts {
				got[o.Name] = o.Value
				flags = append(flags, server.StartupFlag(o))
			}
			fmt.Fprintf(&b, "node%d options: %s\n", id, strings.Join(flags, " "))
			fmt.Fprintf(&b, "node%d statements:\n  %s\n", id, strings.Join(m.statements(id == 1), ";\n  "))

			// The documentation's requirements, each on its own.
			want := map[string]string{"gtid_mode": "ON", "enforce_gtid_consistency": "ON", "binlog_format": "ROW",
				"plugin_load_add": "group_replication.so", "group_replication_start_on_boot": "OFF",
				"group_replication_bootstrap_group": "OFF", "server_id": fmt.Sprint(id),
				"group_replication_local_address": local(id),
				"group_replication_group_seeds":   strings.Join(seeds, ","), "report_host": report(id)}
			if v.AtLeast("8.0.22") {
				want["group_replication_ip_allowlist"] = allow
			} else {
				want["group_replication_ip_whitelist"] = allow
			}
			if v.AtLeast("8.0.26") {
				want["log_replica_updates"] = "ON"
			} else {
				want["log_slave_updates"] = "ON"
			}
			if c.mode == catalog.GroupMultiPrimary {
				want["group_replication_single_primary_mode"] = "OFF"
				want["group_replication_enforce_update_everywhere_checks"] = "ON"
			} else {
				want["group_replication_single_primary_mode"] = "ON"
			}
			if !v.AtLeast("8.0.21") {
				want["binlog_checksum"] = "NONE"
			}
			if c.version == "5.7.44" {
				want["master_info_repository"] = "TABLE"
				want["transaction_write_set_extraction"] = "XXHASH64"
			}
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s node%d: %s = %q, want %q", c.version, id, k, got[k], w)
				}
			}
			if v.AtLeast("8.0.21") && got["binlog_checksum"] != "" {
				t.Errorf("%s: binlog_checksum set, but group replication supports checksums from 8.0.21", c.version)
			}
			// Every option must be a name this version has.
			for _, o := range opts {
				if n, err := catalog.MySQLName(v, o.Name); err != nil || n != o.Name {
					t.Errorf("%s: option %s is %q on this version (%v)", c.version, o.Name, n, err)
				}
			}
		}
		// Bootstrap: ON, START, OFF on node 1 only; the others only start.
		first, other := m.statements(true), m.statements(false)
		if len(first) != 4 || first[1] != "SET GLOBAL group_replication_bootstrap_group = ON" || first[2] != "START GROUP_REPLICATION" ||
			first[3] != "SET GLOBAL group_replication_bootstrap_group = OFF" {
			t.Errorf("%s bootstrap: %q", c.version, first)
		}
		if len(other) != 2 || other[1] != "START GROUP_REPLICATION" {
			t.Errorf("%s join: %q", c.version, other)
		}
		wantCreds := "CHANGE MASTER TO"
		if v.AtLeast("8.0.23") {
			wantCreds = "CHANGE REPLICATION SOURCE TO" // CHANGE MASTER is gone in 8.4
		}
		if !strings.HasPrefix(first[0], wantCreds) || !strings.HasSuffix(first[0], "FOR CHANNEL 'group_replication_recovery'") ||
			!strings.Contains(first[0], "PASSWORD = '"+password+"'") || first[0] != other[0] {
			t.Errorf("%s recovery credentials: %q", c.version, first[0])
		}
	}
	golden := filepath.Join("testdata", "group-replication.golden")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./topology -run TestGroupOptionsAndStatements -update writes it)", err)
	}
	if string(want) != b.String() {
		t.Errorf("options or statements differ from %s (rerun with -update if intended):\n%s", golden, b.String())
	}
}

// Members as replication_group_members lists them (rows as in MySQL's
// documentation): ONLINE when the node itself (by its server_uuid, the
// MEMBER_ID: in containers every member reports port 3306) and every
// member are.
func TestGroupOnlineFromMembersTable(t *testing.T) {
	t.Parallel()
	m := func(port int, state string) GroupMember {
		return GroupMember{ID: fmt.Sprintf("uuid-%d", port), Host: "127.0.0.1", Port: port, State: state}
	}
	cases := []struct {
		name    string
		members []GroupMember
		want    bool
		why     string
	}{
		{"all online", []GroupMember{m(4410, "ONLINE"), m(4420, "ONLINE"), m(4430, "ONLINE")}, true, ""},
		{"one recovering", []GroupMember{m(4410, "ONLINE"), m(4420, "RECOVERING"), m(4430, "ONLINE")}, false,
			"2 of 3 members ONLINE (127.0.0.1:4410 ONLINE, 127.0.0.1:4420 RECOVERING, 127.0.0.1:4430 ONLINE)"},
		{"not started", nil, false, "no member listed (group replication not started)"},
		{"itself offline", []GroupMember{m(4410, "OFFLINE")}, false, "0 of 3 members ONLINE (127.0.0.1:4410 OFFLINE)"},
		{"too few", []GroupMember{m(4410, "ONLINE"), m(4420, "ONLINE")}, false, "2 of 3 members ONLINE (127.0.0.1:4410 ONLINE, 127.0.0.1:4420 ONLINE)"},
		{"itself not listed", []GroupMember{m(4420, "ONLINE"), m(4430, "ONLINE"), m(4440, "ONLINE")}, false,
			"3 of 3 members ONLINE (127.0.0.1:4420 ONLINE, 127.0.0.1:4430 ONLINE, 127.0.0.1:4440 ONLINE)"},
	}
	for _, c := range cases {
		ok, why := onlineIn(c.members, "uuid-4410", 3)
		if ok != c.want || why != c.why {
			t.Errorf("%s: %v %q, want %v %q", c.name, ok, why, c.want, c.why)
		}
	}
}

// A group needs MySQL's own server: refused, before any node starts and
// with nothing left behind, with a message naming what is missing, for
// MariaDB's server, a MySQL without group replication and a MySQL tarball
// without the plugin (on docker: group_docker_test.go).
func TestGroupRefusedWithoutMySQL(t *testing.T) {
	dir := t.TempDir()
	fake := func(version string, plugin bool) string {
		base := filepath.Join(dir, "mysql-"+version)
		for _, d := range []string{"bin", "share", "lib/plugin"} {
			if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if plugin {
			if err := os.WriteFile(filepath.Join(base, "lib/plugin/group_replication.so"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		bin := filepath.Join(base, "bin", "mysqld")
		s := fmt.Sprintf("#!/bin/sh\necho \"$0  Ver %s for Linux on x86_64 (MySQL Community Server - GPL)\"\n", version)
		if err := os.WriteFile(bin, []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
		return bin
	}
	cases := []struct {
		name, binary string
		provider     catalog.ProviderName
		want         string
	}{
		{"5.7.16", fake("5.7.16", true), "", `MySQL 5.7.16 has no group replication (5.7.17 and later)`},
		{"no plugin", fake("8.4.3", false), "", "has no group replication plugin"},
	}
	if _, err := server.FindBinary(""); err == nil {
		if bin, err := server.DetectBinary(context.Background(), mustFind(t)); err == nil && bin.Flavor == catalog.MariaDB {
			cases = append(cases, struct {
				name, binary string
				provider     catalog.ProviderName
				want         string
			}{"mariadb", "", "", `needs MySQL's own mysqld (5.7.17+, 8.0 or 8.4) with its group_replication plugin: MariaDB has no group replication; the server binary is ` + bin.Path + " (mariadb "})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			top := experiment.Topology{Kind: catalog.TopologyGroup, Nodes: 3, Mode: catalog.GroupSinglePrimary}
			_, err := Open(ctx, Config{Topology: top, Binary: c.binary, TempDir: tmp, Provider: c.provider})
			if err == nil {
				t.Fatal("a group was opened")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant it to say %q", err, c.want)
			}
			if exitcode.Of(err) != exitcode.Usage {
				t.Errorf("exit code %d, want 2", exitcode.Of(err))
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

func mustFind(t *testing.T) string {
	p, err := server.FindBinary("")
	if err != nil {
		t.Fatal(err)
	}
	return p
}
