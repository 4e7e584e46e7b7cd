package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/catalog"
	"benchmatrix/experiment"
	"benchmatrix/server"
	"benchmatrix/topology"
)

// A Galera cluster's nodes die with a SIGKILLed benchmatrix (the servers
// keep their parent-death signal: they never change user), and the next
// run removes their directories.
func TestSIGKILLLeavesNoGaleraNode(t *testing.T) {
	needServer(t)
	if err := topology.CheckGalera(); err != nil {
		t.Skip(err)
	}
	m := strings.Replace(slowManifest, "[workload]", "[topology]\nkind = \"galera\"\nnodes = 3\n[workload]", 1)
	cmd, _ := startRun(t, writeManifest(t, m), filepath.Join(t.TempDir(), "r"))
	pid := cmd.Process.Pid
	if n := len(serversOf(pid)); n != 3 {
		t.Fatalf("%d servers for a 3-node cluster", n)
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for len(serversOf(pid)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := serversOf(pid); len(left) > 0 {
		t.Fatalf("nodes outlived a SIGKILLed benchmatrix: %v", left)
	}
	next := exec.Command(binary, "run", writeManifest(t, strings.Replace(slowManifest, `"20s"`, `"1s"`, 1)), "-o", filepath.Join(t.TempDir(), "r2"), "-q")
	if out, err := next.CombinedOutput(); err != nil || !strings.Contains(string(out), "left by a benchmatrix process that no longer runs") {
		t.Fatalf("next run: %v\n%s", err, out)
	}
	if d := sandboxDirsOf(pid); len(d) > 0 {
		t.Fatalf("stale directories remain: %v", d)
	}
}

// A topology on the external provider is refused before anything runs.
func TestTopologyOnExternalExits2(t *testing.T) {
	t.Parallel()
	m := writeManifest(t, "[server]\nprovider = \"external\"\ndsn = \"u@tcp(127.0.0.1:1)/\"\n[topology]\nkind = \"replicas\"\nreplicas = 2\n[workload]\nname = \"oltp_insert\"\n")
	out, err := exec.Command(binary, "run", m).CombinedOutput()
	if code := exitStatus(err); code != 2 || !strings.Contains(string(out), "line 3: server.dsn: the replicas topology has 3 nodes: give one DSN per node") {
		t.Fatalf("exit %d: %s", code, out)
	}
	// --dsn once per node, one short.
	out, err = exec.Command(binary, "run", m, "--dsn", "u@tcp(127.0.0.1:1)/", "--dsn", "u@tcp(127.0.0.1:2)/").CombinedOutput()
	if code := exitStatus(err); code != 2 || !strings.Contains(string(out), "(got 2)") {
		t.Fatalf("two --dsn for three nodes: exit %d: %s", code, out)
	}
}

// benchmatrix killed (SIGKILL) during a run on an existing topology: the
// globals it had changed on every node stay changed until the next run
// against those servers, which puts each node's own value back and says
// so, node by node.
func TestSIGKILLExistingTopologyPutBack(t *testing.T) {
	needServer(t)
	ctx := context.Background()
	cl, err := topology.Open(ctx, topology.Config{Topology: experiment.Topology{Kind: catalog.TopologyReplicas, Replicas: 1}, TempDir: t.TempDir(),
		Startup: []server.Setting{{Name: "innodb_buffer_pool_size", Value: "32M"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Stop(context.Background()) })
	var dbs []*sql.DB
	var args []string
	for i, n := range cl.Nodes() {
		conn, _ := mysql.NewConnector(n.Endpoint())
		db := sql.OpenDB(conn)
		t.Cleanup(func() { db.Close() })
		dbs = append(dbs, db)
		if i == 0 {
			for _, q := range []string{"CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY 'k1ll-pw'", "GRANT ALL ON *.* TO 'bench'@'127.0.0.1'"} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := db.Exec(fmt.Sprintf("SET GLOBAL sync_binlog = %d", 5+i)); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--dsn", "bench@tcp("+n.Endpoint().Addr+")/")
	}
	global := func(db *sql.DB) string {
		var v string
		_ = db.QueryRow("SELECT @@GLOBAL.sync_binlog").Scan(&v)
		return v
	}
	src := strings.Replace(slowManifest, "[workload]", "[server]\nprovider = \"external\"\n[topology]\nkind = \"replicas\"\n[workload]", 1)
	m := writeManifest(t, src)
	cmd := exec.Command(binary, append([]string{"run", m, "-o", filepath.Join(t.TempDir(), "r")}, args...)...)
	cmd.Env = append(os.Environ(), "BENCHMATRIX_PASSWORD=k1ll-pw")
	var buf syncBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Killed while measuring (its tables made and recorded as its own).
	deadline := time.Now().Add(time.Minute)
	for (global(dbs[1]) != "0" || !strings.Contains(buf.String(), "measure 20s")) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if a, b := global(dbs[0]), global(dbs[1]); a != "0" || b != "0" {
		t.Fatalf("the run did not change sync_binlog on both nodes before it was killed (%s, %s):\n%s", a, b, buf.String())
	}
	// The next run against the same servers puts both back first.
	next := exec.Command(binary, append([]string{"run", m, "-o", filepath.Join(t.TempDir(), "r2"), "--duration", "1s"}, args...)...)
	next.Env = cmd.Env
	out, err := next.CombinedOutput()
	if err != nil {
		t.Fatalf("next run: %v\n%s", err, out)
	}
	for _, want := range []string{"node1: put back sync_binlog=5", "node2: put back sync_binlog=6", "no longer runs"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("the next run does not say %q:\n%s", want, out)
		}
	}
	if a, b := global(dbs[0]), global(dbs[1]); a != "5" || b != "6" {
		t.Fatalf("sync_binlog %s, %s after the next run, want 5, 6", a, b)
	}
	if strings.Contains(string(out)+buf.String(), "k1ll-pw") {
		t.Fatal("password in the output")
	}
}
