package topology

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/exitcode"
	"benchmatrix/server"
)

// MySQL group replication on loopback, built from MySQL's documentation
// ("Deploying Group Replication in single-primary mode", "Bootstrapping the
// Group", the group_replication_* system variables): MySQL cannot be
// installed on the machines that build benchmatrix, so this kind has never
// formed a group here; its options and statements are pinned by a test
// against the documentation (group_test.go) and it refuses, before any
// node starts, a server binary that is not MySQL's.
//
// Every node is a sandbox of the user's MySQL binary with the plugin
// loaded at start (plugin_load_add = group_replication.so), GTIDs on, the
// binary log in ROW format with the replica updates logged, its own
// group communication port on 127.0.0.1 (group_replication_local_address)
// and every node's as seeds, and group_replication_start_on_boot = OFF:
// benchmatrix starts the group itself. Node 1 bootstraps it
// (group_replication_bootstrap_group = ON, START GROUP_REPLICATION, OFF
// again: never in an option file, or a restart would bootstrap a second
// group); the others join one at a time, each waited for until
// performance_schema.replication_group_members lists every member ONLINE.
// Distributed recovery logs in to the donor as root@127.0.0.1 with no
// password (the sandbox's account, made by its init file outside the
// binary log on every member, server/mysql.go); each member reports
// 127.0.0.1 as its host (report_host), the address recovery connects to.
// In single-primary mode node 1, the bootstrapper, is the primary the
// workload writes to; in multi-primary mode every member takes writes
// (writers = "all") with group_replication_enforce_update_everywhere_checks.
// The flow-control settings (group_replication_flow_control_mode,
// _applier_threshold, _certifier_threshold) are dynamic server variables:
// axes like any other, set on every node.
//
// On the docker provider (an image the user loaded: mysql:8.4, nothing is
// pulled) the image's own mysqld is asked its version and plugin
// directory before anything starts (server.InspectDockerImage), and every
// member is a container on the cluster's private network with its node's
// name as host name: the members reach each other by name
// (group_replication_local_address node1:33061, the seeds nodeK:33061,
// report_host nodeK, the address distributed recovery connects to on port
// 3306), so a member whose container is replaced (a restart, a start after
// stop) keeps its address; the allowlist is the network's subnet. The
// recovery account is root with the cluster's password (every node has
// it), the official entrypoint's root@'%'. The entrypoint's time zone
// tables are skipped (MYSQL_INITDB_SKIP_TZINFO): loaded through the binary
// log with GTIDs on, they would be transactions of each member's own that
// the group does not have, and a joiner holding such is refused.

// group is the kind (catalog.TopologyGroup).
type group struct{}

func (group) open(ctx context.Context, c *Cluster) error    { return c.openGroup(ctx) }
func (group) restart(ctx context.Context, c *Cluster) error { return c.restartGroup(ctx) }
func (group) checkExisting(ctx context.Context, c *Cluster, log io.Writer) error {
	return c.checkGroup(ctx, log)
}
func (group) refreshJoin(*Cluster, *Node) {}

// check refuses what cannot run a group before the network or any node.
func (group) check(ctx context.Context, c *Cluster) error {
	_, err := c.needsGroup(ctx)
	return err
}

// rejoined: a member started again joins the running group (its recovery
// credentials are in its datadir) and must be ONLINE again.
func (group) rejoined(ctx context.Context, c *Cluster, n *Node) error {
	if err := exec(ctx, n, "START GROUP_REPLICATION"); err != nil {
		return err
	}
	return c.waitOnline(ctx, n, time.Now().Add(c.cfg.ReadyTimeout))
}

// heal: a member paused past group_replication_member_expel_timeout was
// expelled and is in ERROR (or OFFLINE after its auto-rejoin tries): it
// leaves and joins again; one that does not come ONLINE is an error.
func (group) heal(ctx context.Context, c *Cluster) ([]string, error) {
	var did []string
	for _, n := range c.nodes {
		if err := c.waitOnline(ctx, n, time.Now().Add(rejoinWait)); err == nil {
			continue
		}
		if err := exec(ctx, n, "STOP GROUP_REPLICATION", "START GROUP_REPLICATION"); err != nil {
			return did, err
		}
		if err := c.waitOnline(ctx, n, time.Now().Add(c.cfg.ReadyTimeout)); err != nil {
			return did, err
		}
		did = append(did, n.Name+" rejoined the group")
	}
	return did, nil
}

// checkTarget is node 1's executed GTID set.
func (group) checkTarget(ctx context.Context, c *Cluster) (string, error) {
	db, err := open(c.nodes[0])
	if err != nil {
		return "", err
	}
	defer db.Close()
	var target string
	if err := db.QueryRowContext(ctx, "SELECT @@global.gtid_executed").Scan(&target); err != nil {
		return "", fmt.Errorf("node1: read gtid_executed: %w", err)
	}
	return target, nil
}

// caughtUp waits until the member executed node 1's GTID set
// (WAIT_FOR_EXECUTED_GTID_SET: 0 when done, 1 on timeout).
func (group) caughtUp(ctx context.Context, _ *Cluster, n *Node, db *sql.DB, target string, timeout time.Duration) error {
	var res sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT WAIT_FOR_EXECUTED_GTID_SET(?, ?)", target, int(timeout.Seconds())).Scan(&res); err != nil {
		return fmt.Errorf("%s: wait for GTID set %s: %w", n.Name, target, err)
	}
	if !res.Valid || res.Int64 != 0 {
		return fmt.Errorf("%s did not apply node 1's transactions (GTID set %s) within %s", n.Name, target, timeout)
	}
	return nil
}

// groupMember is the MySQL version the group runs and its mode, for the
// options and statements.
type groupMember struct {
	version catalog.MySQLVersion
	mode    string // catalog.GroupSinglePrimary or GroupMultiPrimary
	name    string // group_replication_group_name, a UUID
	// password is the recovery account's (docker: the cluster's root
	// password; sandbox: none). Never print it.
	password string
}

// groupAddress is where a member is reached by the others.
type groupAddress struct {
	local  string   // group_replication_local_address, host:port
	seeds  []string // every member's local address
	allow  string   // group_replication_ip_allowlist
	report string   // report_host: where distributed recovery reaches its SQL port
}

// groupPort is the group communication port inside a member's container
// (MySQL's documentation's own choice, 33061): each container has its own
// address, so every member uses the same port.
const groupPort = 33061

// groupAddresses are the members' addresses: loopback ports on sandboxes
// (found free once; the field Galera's gcomm port uses, the same role),
// node names on a private network in containers.
func (c *Cluster) groupAddresses() ([]groupAddress, error) {
	var seeds []string
	for _, n := range c.nodes {
		if c.isDocker() {
			seeds = append(seeds, n.Name+":"+strconv.Itoa(groupPort))
			continue
		}
		if n.galera.gcomm == 0 {
			p, err := server.FreePort()
			if err != nil {
				return nil, fmt.Errorf("find a free port: %w", err)
			}
			n.galera.gcomm = p
		}
		seeds = append(seeds, "127.0.0.1:"+strconv.Itoa(n.galera.gcomm))
	}
	out := make([]groupAddress, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = groupAddress{local: seeds[i], seeds: seeds, allow: "127.0.0.1", report: "127.0.0.1"}
		if c.isDocker() {
			// The network's subnet; AUTOMATIC (the private ranges, MySQL's
			// default) if the engine did not say.
			out[i].allow, out[i].report = "AUTOMATIC", n.Name
			if s := c.docker.net.Subnet; s != "" {
				out[i].allow = s
			}
		}
	}
	return out, nil
}

// needsGroup refuses what cannot run a group, before any node starts: a
// server binary or docker image that is not MySQL's, a version before
// group replication, a server without the plugin. The version found is
// kept for the cluster's restarts.
func (c *Cluster) needsGroup(ctx context.Context) (catalog.MySQLVersion, error) {
	if c.groupVersion != nil {
		return *c.groupVersion, nil
	}
	check := c.needsGroupBinary
	if c.isDocker() {
		check = c.needsGroupImage
	}
	v, err := check(ctx)
	if err == nil {
		c.groupVersion = &v
	}
	return v, err
}

// needsGroupBinary checks a sandbox's [server] binary.
func (c *Cluster) needsGroupBinary(ctx context.Context) (catalog.MySQLVersion, error) {
	k := c.cfg.Topology.Describe()
	bin, v, layout, err := server.InspectMySQL(ctx, c.cfg.Binary)
	if err != nil {
		return v, fmt.Errorf("[topology] kind = %q: %w", k.Name, err)
	}
	if bin.Flavor != catalog.MySQL {
		return v, exitcode.UsageError(fmt.Errorf("[topology] kind = %q needs %s; the server binary is %s (%s %s): give [server] binary = \"/path/to/mysql-8.4/bin/mysqld\" (an unpacked MySQL tarball)",
			k.Name, k.Needs, bin.Path, bin.Flavor, bin.Version))
	}
	if !v.AtLeast("5.7.17") {
		return v, exitcode.UsageError(fmt.Errorf("[topology] kind = %q: MySQL %s has no group replication (5.7.17 and later)", k.Name, v))
	}
	if layout.PluginDir != "" {
		if _, err := os.Stat(filepath.Join(layout.PluginDir, groupPlugin)); err != nil {
			return v, exitcode.UsageError(fmt.Errorf("[topology] kind = %q: the MySQL binary %s has no group replication plugin: %w", k.Name, bin.Path, err))
		}
	}
	return v, nil
}

// needsGroupImage checks the docker provider's [server] image: its own
// mysqld, asked in a throwaway container.
func (c *Cluster) needsGroupImage(ctx context.Context) (catalog.MySQLVersion, error) {
	k := c.cfg.Topology.Describe()
	image := c.cfg.Image
	if image == "" {
		image = catalog.DefaultDockerImage
	}
	img, err := server.InspectDockerImage(ctx, image)
	if err != nil {
		return catalog.MySQLVersion{}, fmt.Errorf("[topology] kind = %q: [server] image = %q: %w", k.Name, image, err)
	}
	bin := img.Server
	if bin.Flavor != catalog.MySQL {
		return catalog.MySQLVersion{}, exitcode.UsageError(fmt.Errorf("[topology] kind = %q needs %s; [server] image = %q runs %s (%s %s): give [server] image = \"mysql:8.4\" or another MySQL image you have loaded (benchmatrix never pulls)",
			k.Name, k.Needs, image, bin.Path, bin.Flavor, bin.Version))
	}
	v, err := catalog.CheckMySQLVersion(bin.Version)
	if err != nil {
		return v, exitcode.UsageError(fmt.Errorf("[topology] kind = %q: [server] image = %q: %s: %w", k.Name, image, bin.Path, err))
	}
	if !v.AtLeast("5.7.17") {
		return v, exitcode.UsageError(fmt.Errorf("[topology] kind = %q: [server] image = %q: MySQL %s has no group replication (5.7.17 and later)", k.Name, image, v))
	}
	if !img.HasPlugin(groupPlugin) {
		where := "its server's --verbose --help names no plugin directory, and it has neither /usr/lib64/mysql/plugin nor /usr/lib/mysql/plugin"
		switch {
		case img.PluginDirGuessed:
			where = fmt.Sprintf("its server's --verbose --help names no plugin directory, and %s has no %s", img.PluginDir, groupPlugin)
		case img.PluginDir != "":
			where = fmt.Sprintf("its plugin directory %s has no %s", img.PluginDir, groupPlugin)
		}
		return v, exitcode.UsageError(fmt.Errorf("[topology] kind = %q: [server] image = %q (%s %s) has no group replication plugin: %s", k.Name, image, bin.Flavor, bin.Version, where))
	}
	c.docker.mysqlVersion = v.String()
	c.docker.env = []string{"MYSQL_INITDB_SKIP_TZINFO=1"} // see the top of this file
	return v, nil
}

// groupPlugin is the group replication plugin's library.
const groupPlugin = "group_replication.so"

// pluginActive checks that a started member loaded the plugin (its
// options are unknown to a server without it, so a MySQL whose plugin
// failed to load does not start at all; a server that started anyway is
// not the MySQL the check before the start found).
func pluginActive(ctx context.Context, n *Node) error {
	db, err := open(n)
	if err != nil {
		return err
	}
	defer db.Close()
	var status string
	err = db.QueryRowContext(ctx, "SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'group_replication'").Scan(&status)
	info := n.srv.Info()
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return exitcode.UsageError(fmt.Errorf("%s (%s %s): the group_replication plugin is not loaded (information_schema.PLUGINS has no group_replication), so the group cannot form\nlast lines of its error log:\n%s",
			n.Name, info.Flavor, info.Version, n.srv.LogTail(20)))
	case err != nil:
		return fmt.Errorf("%s: read the group_replication plugin's status: %w", n.Name, err)
	case status != "ACTIVE":
		return exitcode.UsageError(fmt.Errorf("%s (%s %s): the group_replication plugin is %s, not ACTIVE\nlast lines of its error log:\n%s",
			n.Name, info.Flavor, info.Version, status, n.srv.LogTail(20)))
	}
	return nil
}

// newGroupName is a random UUID (version 4), the group's name.
func newGroupName() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

func (c *Cluster) openGroup(ctx context.Context) error {
	m, err := c.groupMember(ctx)
	if err != nil {
		return err
	}
	if err := c.startGroupNodes(ctx, m); err != nil {
		return err
	}
	return c.formGroup(ctx, m)
}

// groupMember checks what the group runs on and names a new group.
func (c *Cluster) groupMember(ctx context.Context) (groupMember, error) {
	v, err := c.needsGroup(ctx)
	if err != nil {
		return groupMember{}, err
	}
	if c.name == "" {
		if c.name, err = newGroupName(); err != nil {
			return groupMember{}, err
		}
	}
	return groupMember{version: v, mode: c.cfg.Topology.Mode, name: c.name, password: c.docker.password}, nil
}

// startGroupNodes starts every member with its options; none has started
// group replication yet.
func (c *Cluster) startGroupNodes(ctx context.Context, m groupMember) error {
	for i := 1; i <= c.cfg.Topology.Nodes; i++ {
		c.nodes = append(c.nodes, c.newNode(i))
	}
	addrs, err := c.groupAddresses()
	if err != nil {
		return err
	}
	for i, n := range c.nodes {
		n.opts = m.options(i+1, addrs[i])
		n.join = n.opts
		fmt.Fprintf(c.cfg.Log, "  starting %s (%s)\n", n.Name, map[bool]string{true: "bootstraps the group", false: "joins"}[i == 0])
		if err := c.startNode(ctx, n, ""); err != nil {
			return err
		}
	}
	return nil
}

// formGroup bootstraps the group on node 1 and joins the others, one at a
// time, each ONLINE before the next.
func (c *Cluster) formGroup(ctx context.Context, m groupMember) error {
	for _, n := range c.nodes {
		if err := pluginActive(ctx, n); err != nil {
			return err
		}
	}
	for i, n := range c.nodes {
		if err := exec(ctx, n, m.statements(i == 0)...); err != nil {
			return fmt.Errorf("%w\nlast lines of its error log:\n%s", server.HidePassword(err, m.password), n.srv.LogTail(20))
		}
		if err := c.waitOnline(ctx, n, time.Now().Add(c.cfg.ReadyTimeout)); err != nil {
			return err
		}
	}
	return nil
}

// options are member id's startup options (reference: MySQL's "Group
// Replication Requirements" and "Configuring an Instance for Group
// Replication", per version).
func (m groupMember) options(id int, a groupAddress) []server.Setting {
	v := m.version
	replicaUpdates := "log_slave_updates"
	if v.AtLeast("8.0.26") {
		replicaUpdates = "log_replica_updates"
	}
	allowlist := "group_replication_ip_whitelist"
	if v.AtLeast("8.0.22") {
		allowlist = "group_replication_ip_allowlist"
	}
	opts := []server.Setting{
		{Name: "server_id", Value: strconv.Itoa(id)},
		{Name: "gtid_mode", Value: "ON"},
		{Name: "enforce_gtid_consistency", Value: "ON"},
		{Name: "log_bin", Value: "binlog"},
		{Name: "binlog_format", Value: "ROW"},
		{Name: replicaUpdates, Value: "ON"},
		{Name: "report_host", Value: a.report},
	}
	if !v.AtLeast("8.0.21") {
		// Group replication cannot use binary log checksums before 8.0.21.
		opts = append(opts, server.Setting{Name: "binlog_checksum", Value: "NONE"})
	}
	if v.Series() == "5.7" {
		// 8.0's defaults; 5.7 must be told.
		opts = append(opts,
			server.Setting{Name: "master_info_repository", Value: "TABLE"},
			server.Setting{Name: "relay_log_info_repository", Value: "TABLE"},
			server.Setting{Name: "transaction_write_set_extraction", Value: "XXHASH64"})
	}
	single := "ON"
	if m.mode == catalog.GroupMultiPrimary {
		single = "OFF"
	}
	opts = append(opts,
		server.Setting{Name: "plugin_load_add", Value: "group_replication.so"},
		server.Setting{Name: "group_replication_group_name", Value: m.name},
		server.Setting{Name: "group_replication_start_on_boot", Value: "OFF"},
		server.Setting{Name: "group_replication_bootstrap_group", Value: "OFF"},
		server.Setting{Name: "group_replication_local_address", Value: a.local},
		server.Setting{Name: "group_replication_group_seeds", Value: strings.Join(a.seeds, ",")},
		server.Setting{Name: allowlist, Value: a.allow},
		server.Setting{Name: "group_replication_single_primary_mode", Value: single},
		server.Setting{Name: "group_replication_enforce_update_everywhere_checks", Value: map[bool]string{true: "ON", false: "OFF"}[single == "OFF"]},
	)
	if v.Major >= 8 {
		// caching_sha2_password: recovery asks the donor for its RSA key
		// rather than failing without TLS.
		opts = append(opts, server.Setting{Name: "group_replication_recovery_get_public_key", Value: "ON"})
	}
	return opts
}

// statements start group replication on a member: the recovery account,
// then a bootstrap (the first member) or a join.
func (m groupMember) statements(first bool) []string {
	// The password is hex (never a quote); it stays out of every error
	// (formGroup) and is stored, as any replica's, in the member's
	// replication metadata inside its datadir, removed with the node.
	creds := "CHANGE MASTER TO MASTER_USER = 'root', MASTER_PASSWORD = '" + m.password + "' FOR CHANNEL 'group_replication_recovery'"
	if m.version.AtLeast("8.0.23") {
		creds = "CHANGE REPLICATION SOURCE TO SOURCE_USER = 'root', SOURCE_PASSWORD = '" + m.password + "' FOR CHANNEL 'group_replication_recovery'"
	}
	if first {
		return []string{creds,
			"SET GLOBAL group_replication_bootstrap_group = ON",
			"START GROUP_REPLICATION",
			"SET GLOBAL group_replication_bootstrap_group = OFF"}
	}
	return []string{creds, "START GROUP_REPLICATION"}
}

// groupMembersQuery lists the members as node n sees them.
const groupMembersQuery = "SELECT MEMBER_ID, MEMBER_HOST, MEMBER_PORT, MEMBER_STATE FROM performance_schema.replication_group_members"

// GroupMember is one row of performance_schema.replication_group_members.
type GroupMember struct {
	ID, Host, State string
	Port            int
}

// groupMembers reads the members node n sees.
func groupMembers(ctx context.Context, db *sql.DB) ([]GroupMember, error) {
	rows, err := db.QueryContext(ctx, groupMembersQuery)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []GroupMember
	for rows.Next() {
		var g GroupMember
		var port sql.NullInt64
		var id, host, state sql.NullString
		if err := rows.Scan(&id, &host, &port, &state); err != nil {
			return nil, err
		}
		g.ID, g.Host, g.Port, g.State = id.String, host.String, int(port.Int64), state.String
		out = append(out, g)
	}
	return out, rows.Err()
}

// onlineIn says whether the member self (its MEMBER_ID, the server's
// server_uuid) is ONLINE and every one of want members is, as a member's
// view lists them; else what is not, for an error.
func onlineIn(members []GroupMember, self string, want int) (bool, string) {
	online, state := 0, ""
	var states []string
	for _, g := range members {
		states = append(states, fmt.Sprintf("%s:%d %s", g.Host, g.Port, g.State))
		if g.State == "ONLINE" {
			online++
		}
		if g.ID == self {
			state = g.State
		}
	}
	if state == "ONLINE" && online == want {
		return true, ""
	}
	if len(states) == 0 {
		return false, "no member listed (group replication not started)"
	}
	return false, fmt.Sprintf("%d of %d members ONLINE (%s)", online, want, strings.Join(states, ", "))
}

// waitOnline waits until node n lists itself and every node ONLINE.
func (c *Cluster) waitOnline(ctx context.Context, n *Node, deadline time.Time) error {
	db, err := open(n)
	if err != nil {
		return err
	}
	defer db.Close()
	// The member is itself by its server_uuid: in containers every member
	// reports port 3306, and the host reaches it on another.
	var self string
	want := len(c.nodes)
	if c.existing && c.size > 0 {
		want = c.size
	}
	for {
		var members []GroupMember
		var err error
		if self == "" {
			err = db.QueryRowContext(ctx, "SELECT @@global.server_uuid").Scan(&self)
		}
		if err == nil {
			members, err = groupMembers(ctx, db)
		}
		why := ""
		if err == nil {
			var ok bool
			if ok, why = onlineIn(members, self, want); ok {
				return nil
			}
		} else {
			why = err.Error()
		}
		if !n.srv.Alive() {
			return fmt.Errorf("%s left the group (its process exited)\nlast lines of its error log:\n%s", n.Name, n.srv.LogTail(20))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is not ONLINE in the group within %s: %s\nlast lines of its error log:\n%s", n.Name, c.cfg.ReadyTimeout, why, n.srv.LogTail(20))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// restartGroup starts every member again (all stopped) and forms the
// group as at the start: bootstrapped from node 1, the others joining.
func (c *Cluster) restartGroup(ctx context.Context) error {
	m, err := c.groupMember(ctx)
	if err != nil {
		return err
	}
	for _, n := range c.nodes {
		if err := n.srv.Restart(ctx, append(c.Startup(), n.opts...)); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	return c.formGroup(ctx, m)
}

// checkGroup checks existing members (provider external): each lists
// itself and every node ONLINE in one group of the manifest's mode.
func (c *Cluster) checkGroup(ctx context.Context, log io.Writer) error {
	name := ""
	for _, n := range c.nodes {
		vars, err := nodeVariables(ctx, n, "group_replication_group_name", "group_replication_single_primary_mode")
		if err != nil {
			return fmt.Errorf("%s: %w", where(n), err)
		}
		if vars["group_replication_group_name"] == "" {
			return fmt.Errorf("%s: not a group replication member (group_replication_group_name is empty)", where(n))
		}
		if name == "" {
			name = vars["group_replication_group_name"]
		} else if vars["group_replication_group_name"] != name {
			return fmt.Errorf("%s is in group %s, node1 in %s", where(n), vars["group_replication_group_name"], name)
		}
		wantSingle := c.cfg.Topology.Mode != catalog.GroupMultiPrimary
		if single := vars["group_replication_single_primary_mode"] == "ON" || vars["group_replication_single_primary_mode"] == "1"; single != wantSingle {
			return fmt.Errorf("%s: group_replication_single_primary_mode is %s, and the manifest says mode = %q", where(n), vars["group_replication_single_primary_mode"], c.cfg.Topology.Mode)
		}
		db, err := open(n)
		if err != nil {
			return err
		}
		members, err := groupMembers(ctx, db)
		db.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", where(n), err)
		}
		if len(members) > c.size {
			c.size = len(members)
		}
	}
	if c.size > len(c.nodes) {
		fmt.Fprintf(log, "  the group has %d members, %d given: the others are not sampled\n", c.size, len(c.nodes))
	}
	for _, n := range c.nodes {
		if err := c.waitOnline(ctx, n, time.Now()); err != nil {
			return fmt.Errorf("%s: %w", where(n), err)
		}
	}
	return nil
}
