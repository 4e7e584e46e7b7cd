package topology

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"

	"benchmatrix/catalog"
	"benchmatrix/exitcode"
	"benchmatrix/experiment"
	"benchmatrix/server"
)

// Group replication on the docker provider, without MySQL: MySQL's images
// cannot be pulled here. A fake-MySQL image is built in the test from the
// project's MariaDB image: its `mysqld` answers --version as MySQL 8.4.3
// and --verbose --help with a plugin directory (holding an empty
// group_replication.so or not), and its entrypoint hands the container's
// options to MariaDB's entrypoint as loose options (MariaDB ignores the
// MySQL-only ones) without the plugin. So the containers' whole life runs
// for real (the image check, the private network, each member's start
// with its group options, names on the network, stop, start, disconnect,
// removal), while the group itself cannot form: MariaDB has no group
// replication, which the cluster finds on the running members and says.
// The images are tagged benchmatrix-test/fake-mysql-<pid>-... (no user
// has that) and removed when the test ends.

// fakeMySQLImage builds the fake image and returns its tag.
func fakeMySQLImage(t *testing.T, plugin bool) string {
	t.Helper()
	needDocker(t)
	pool, err := dockertest.NewPool("")
	if err != nil {
		t.Fatal(err)
	}
	variant := "noplugin"
	if plugin {
		variant = "plugin"
	}
	tag := fmt.Sprintf("benchmatrix-test/fake-mysql-%d-%s:8.4.3", os.Getpid(), variant)
	files := map[string]string{
		// The image's server binary as the probe asks it.
		"mysqld": `#!/bin/sh
# A fake MySQL 8.4.3 mysqld (benchmatrix's tests): MySQL's answers only.
case " $* " in
*" --version "*) echo "mysqld  Ver 8.4.3 for Linux on x86_64 (MySQL Community Server - GPL)"; exit 0 ;;
*" --help "*) echo "plugin-dir                          /opt/fake-mysql/plugin/"; exit 0 ;;
esac
echo "the fake mysqld only answers --version and --help" >&2
exit 1
`,
		// Every option loose (MariaDB ignores those it lacks), the
		// plugin left out, then MariaDB's own entrypoint.
		"entrypoint.sh": `#!/bin/sh
first=1
for a in "$@"; do
	if [ $first = 1 ]; then set --; first=0; fi
	case "$a" in
	--plugin-load-add=*) continue ;;
	--loose-*) ;;
	--*) a="--loose-${a#--}" ;;
	esac
	set -- "$@" "$a"
done
exec /entrypoint.sh "$@"
`,
		"keyring_file.so": "",
	}
	dockerfile := "FROM " + catalog.DefaultDockerImage + "\n" +
		"COPY mysqld /usr/local/sbin/mysqld\n" +
		"COPY entrypoint.sh /fake-mysql-entrypoint.sh\n" +
		"COPY keyring_file.so /opt/fake-mysql/plugin/keyring_file.so\n"
	if plugin {
		files["group_replication.so"] = ""
		dockerfile += "COPY group_replication.so /opt/fake-mysql/plugin/group_replication.so\n"
	}
	dockerfile += `ENTRYPOINT ["/fake-mysql-entrypoint.sh"]` + "\n"
	files["Dockerfile"] = dockerfile
	var ctxTar bytes.Buffer
	tw := tar.NewWriter(&ctxTar)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		mode := int64(0o644)
		if strings.HasSuffix(n, ".sh") || n == "mysqld" {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: mode, Size: int64(len(files[n])), ModTime: time.Unix(0, 0)}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := pool.Client.BuildImage(dc.BuildImageOptions{Name: tag, InputStream: &ctxTar, OutputStream: &out,
		RmTmpContainer: true, ForceRmTmpContainer: true, Labels: map[string]string{"benchmatrix.test": "fake-mysql"}}); err != nil {
		t.Fatalf("build %s: %v\n%s", tag, err, out.String())
	}
	t.Cleanup(func() {
		if err := pool.Client.RemoveImageExtended(tag, dc.RemoveImageOptions{Force: true}); err != nil {
			t.Errorf("remove the fake image %s: %v", tag, err)
		}
	})
	return tag
}

// leftNothing fails the test if a container or network of this process
// is left.
func leftNothing(t *testing.T) {
	t.Helper()
	if cs, ns := ours(t); len(cs)+len(ns) > 0 {
		t.Errorf("left behind: containers %v, networks %v", cs, ns)
	}
}

var groupTop = experiment.Topology{Kind: catalog.TopologyGroup, Nodes: 3, Mode: catalog.GroupSinglePrimary}

// The project's MariaDB image, a MySQL image without the plugin and an
// image not loaded are refused before the network or any member is
// created (exit 2), naming [server] image and what is missing; the
// probe's container is gone.
func TestGroupDockerRefusesImages(t *testing.T) {
	needDocker(t)
	noPlugin := fakeMySQLImage(t, false)
	for _, c := range []struct{ image, want string }{
		{catalog.DefaultDockerImage, `[topology] kind = "group" needs MySQL's own mysqld (5.7.17+, 8.0 or 8.4) with its group_replication plugin: MariaDB has no group replication; [server] image = "benchmatrix/mariadb:10.11" runs mysqld in benchmatrix/mariadb:10.11 (mariadb 10.11.`},
		{noPlugin, `[topology] kind = "group": [server] image = "` + noPlugin + `" (mysql 8.4.3) has no group replication plugin: its plugin directory /opt/fake-mysql/plugin/ has no group_replication.so`},
		{"benchmatrix-test/no-such-image:1", `[server] image = "benchmatrix-test/no-such-image:1": docker image benchmatrix-test/no-such-image:1 is not present and benchmatrix never pulls; load it first`},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		var log bytes.Buffer
		_, err := Open(ctx, Config{Topology: groupTop, Provider: catalog.Docker, Image: c.image, Log: &log})
		cancel()
		if strings.Contains(log.String(), "private network") {
			t.Errorf("%s: a network was created before the refusal: %s", c.image, log.String())
		}
		if err == nil {
			t.Fatalf("%s: a group was opened", c.image)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v\nwant it to say %q", c.image, err, c.want)
		}
		if exitcode.Of(err) != exitcode.Usage {
			t.Errorf("%s: exit code %d, want 2", c.image, exitcode.Of(err))
		}
		leftNothing(t)
	}
}

// execIn runs a command in a running container and returns its output.
func execIn(t *testing.T, id string, cmd ...string) string {
	t.Helper()
	pool, err := dockertest.NewPool("")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := pool.Client.CreateExec(dc.CreateExecOptions{Container: id, Cmd: cmd, AttachStdout: true, AttachStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := pool.Client.StartExec(ex.ID, dc.StartExecOptions{OutputStream: &out, ErrorStream: &out}); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// resolves checks that on node from's container every name resolves to
// that node's current address on the private network.
func resolves(t *testing.T, c *Cluster, from *Node, when string) {
	t.Helper()
	for _, n := range c.nodes {
		ip := n.srv.(*server.Docker).PrivateIP()
		got := strings.Fields(execIn(t, from.srv.(*server.Docker).ContainerID(), "getent", "hosts", n.Name))
		if ip == "" || len(got) == 0 || got[0] != ip {
			t.Errorf("%s: on %s, %s resolves to %v, want its address %q", when, from.Name, n.Name, got, ip)
		}
	}
}

// Three members of the fake MySQL image on a private network: each gets
// its group options under the image's version's names (the user's
// log_slave_updates as 8.4's log_replica_updates before any server ran),
// its node's name as host name and group address, the network's subnet as
// allowlist, the entrypoint told to skip the time zone tables, and no
// password in its command line; every member finds the others by name,
// also after a member is disconnected and reconnected, and after a member
// is stopped and started as a new container. Forming the group fails
// clearly (no plugin on the running server, exit 2, no password in the
// error), Open's own path removes everything, and so does Stop.
func TestGroupDockerMembersOfAFakeMySQL(t *testing.T) {
	image := fakeMySQLImage(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cfg := Config{Topology: groupTop, Provider: catalog.Docker, Image: image, ReadyTimeout: 3 * time.Minute, Log: io.Discard,
		Startup: []server.Setting{{Name: "innodb_buffer_pool_size", Value: "32M"}, {Name: "log_slave_updates", Value: "ON"}}}

	// The steps of Open, one at a time.
	c := &Cluster{cfg: cfg, kind: group{}, startup: cfg.Startup}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Error(err)
		}
		leftNothing(t)
	})
	if err := c.openDocker(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := c.groupMember(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.version.String() != "8.4.3" || m.password == "" || m.password != c.docker.password {
		t.Fatalf("member: version %s, a password %v", m.version, m.password != "")
	}
	if err := c.startGroupNodes(ctx, m); err != nil {
		t.Fatal(err)
	}
	pool, err := dockertest.NewPool("")
	if err != nil {
		t.Fatal(err)
	}
	subnet := c.docker.net.Subnet
	if subnet == "" {
		t.Fatal("the network's subnet is not known")
	}
	for i, n := range c.nodes {
		d := n.srv.(*server.Docker)
		ct, err := pool.Client.InspectContainer(d.ContainerID())
		if err != nil {
			t.Fatal(err)
		}
		if ct.Config.Hostname != n.Name {
			t.Errorf("%s: host name %q", n.Name, ct.Config.Hostname)
		}
		if !slices.Contains(ct.Config.Env, "MYSQL_INITDB_SKIP_TZINFO=1") {
			t.Errorf("%s: the entrypoint is not told to skip the time zone tables: %v", n.Name, ct.Config.Env)
		}
		args := strings.Join(ct.Config.Cmd, " ")
		for _, want := range []string{
			fmt.Sprintf("--server-id=%d", i+1),
			"--log-replica-updates=ON", // the user's log_slave_updates, 8.4's name
			"--gtid-mode=ON", "--enforce-gtid-consistency=ON", "--plugin-load-add=group_replication.so",
			"--group-replication-group-name=" + c.name,
			"--group-replication-local-address=" + n.Name + ":33061",
			"--group-replication-group-seeds=node1:33061,node2:33061,node3:33061",
			"--group-replication-ip-allowlist=" + subnet,
			"--report-host=" + n.Name,
			"--group-replication-start-on-boot=OFF",
			"--group-replication-single-primary-mode=ON",
		} {
			if !strings.Contains(args, want) {
				t.Errorf("%s: its command lacks %s:\n%s", n.Name, want, args)
			}
		}
		if strings.Contains(args, "--log-slave-updates") || strings.Contains(args, c.docker.password) {
			t.Errorf("%s: a 5.7 name or the password in its command:\n%s", n.Name, args)
		}
	}
	resolves(t, c, c.nodes[1], "after the start")

	n3 := c.nodes[2]
	if err := c.network(n3, experiment.ActionDisconnect); err != nil {
		t.Fatal(err)
	}
	if err := c.network(n3, experiment.ActionReconnect); err != nil {
		t.Fatal(err)
	}
	resolves(t, c, c.nodes[0], "after node3 was disconnected and reconnected")

	n2 := c.nodes[1]
	old := n2.srv.(*server.Docker).ContainerID()
	if err := n2.srv.Halt(time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := n2.srv.Restart(ctx, append(c.Startup(), n2.join...)); err != nil {
		t.Fatal(err)
	}
	if n2.srv.(*server.Docker).ContainerID() == old {
		t.Fatal("node2 was not started as a new container")
	}
	resolves(t, c, c.nodes[0], "after node2 was stopped and started again")

	err = c.formGroup(ctx, m)
	if err == nil {
		t.Fatal("a group formed on MariaDB")
	}
	if !strings.Contains(err.Error(), "node1 (mariadb 10.11.") || !strings.Contains(err.Error(), "the group_replication plugin is not loaded (information_schema.PLUGINS has no group_replication), so the group cannot form") {
		t.Errorf("forming: %v", err)
	}
	if exitcode.Of(err) != exitcode.Usage || strings.Contains(err.Error(), c.docker.password) {
		t.Errorf("forming: exit code %d, password shown %v", exitcode.Of(err), strings.Contains(err.Error(), c.docker.password))
	}

	// Open itself: the same failure, and nothing left.
	_, err = Open(ctx, cfg)
	if err == nil || !strings.Contains(err.Error(), "the group_replication plugin is not loaded") {
		t.Errorf("Open: %v", err)
	}
	if cs, ns := ours(t); len(cs) != 3 || len(ns) != 1 {
		t.Errorf("after Open failed, only the first cluster's 3 containers and network should be left: %v %v", cs, ns)
	}
}

// A password in a statement never reaches an error: a server's syntax
// error echoes the statement.
func TestGroupErrorHidesPassword(t *testing.T) {
	t.Parallel()
	err := server.HidePassword(fmt.Errorf("node1: CHANGE REPLICATION SOURCE TO: Error 1064: near 'SOURCE_PASSWORD = 's3cr3t' FOR CHANNEL"), "s3cr3t")
	if strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "********") {
		t.Fatal(err)
	}
}
