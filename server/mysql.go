package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"benchmatrix/catalog"
	"benchmatrix/exitcode"
)

// MySQL's own servers in a sandbox, from MySQL's documentation (MySQL
// cannot be installed on the machines that build benchmatrix; the tests
// run this path through a fake mysqld that answers --version and
// --initialize-insecure as MySQL does and then runs MariaDB's server, so
// the protocol is real). What differs from MariaDB:
//   - the binary is usually an unpacked tarball (bin/mysqld, lib/plugin,
//     share/): the basedir is the binary's directory's parent, given as
//     --basedir (error messages, character sets) and --plugin-dir
//     (group_replication.so);
//   - the datadir is initialised by the server itself, mysqld
//     --initialize-insecure (5.7+), which creates root@localhost with no
//     password: with --skip-name-resolve that account does not match a
//     TCP connection from 127.0.0.1, so every start runs an init file
//     that makes root@127.0.0.1 (kept out of the binary log, so that a
//     group member has no transaction of its own before it joins);
//   - a datadir copied from the golden one keeps its auto.cnf, and with it
//     the server_uuid: removed, so that each sandbox gets its own (a
//     replication group refuses two members with one UUID);
//   - the X plugin is turned off (--mysqlx=OFF) on 8.0+, where it is on
//     by default (5.7 does not load it);
//   - variables are given under the name the version has (the replica
//     renames of 8.0.26, catalog.MySQLLookup), and one the version does not
//     have is refused naming what to set instead; the plan refuses it
//     already, from the binary's --version (catalog.MySQLLookup too).

// mysqlInitFile is the init file's name in the sandbox's directory.
const mysqlInitFile = "mysql-init.sql"

// mysqlInitSQL makes the account benchmatrix connects as over loopback.
const mysqlInitSQL = `SET SESSION sql_log_bin = 0;
CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
`

// systemPrefixes are directories whose bin/ is a package's, not a
// tarball's: the server finds its files by its compiled-in paths there.
var systemPrefixes = map[string]bool{"/": true, "/usr": true, "/usr/local": true}

// MySQLLayout is where a MySQL binary's files are.
type MySQLLayout struct {
	// Basedir is the unpacked tarball (its bin/, lib/, share/); "" for a
	// package's server, which knows its own paths.
	Basedir string
	// PluginDir is Basedir's lib/plugin, when it exists.
	PluginDir string
}

// mysqlLayout finds a MySQL binary's basedir: the parent of its bin/, when
// that parent has share/ (a tarball's layout); a binary under a system
// prefix is a package's. Anything else is refused: a server started
// without its share/ cannot find its error messages.
func mysqlLayout(path string) (MySQLLayout, error) {
	dir := filepath.Dir(path)
	base := filepath.Dir(dir)
	if filepath.Base(dir) != "bin" {
		if systemPrefixes[base] || strings.HasSuffix(dir, "/sbin") || strings.HasSuffix(dir, "/libexec") {
			return MySQLLayout{}, nil
		}
		return MySQLLayout{}, exitcode.UsageError(fmt.Errorf("[server] binary %s: not in a tarball's layout (want <basedir>/bin/mysqld beside <basedir>/share and <basedir>/lib/plugin)", path))
	}
	if systemPrefixes[base] {
		return MySQLLayout{}, nil
	}
	if st, err := os.Stat(filepath.Join(base, "share")); err != nil || !st.IsDir() {
		return MySQLLayout{}, exitcode.UsageError(fmt.Errorf("[server] binary %s: %s has no share/ directory, so this is not an unpacked MySQL tarball (bin/, lib/, share/); the server could not find its error messages", path, base))
	}
	l := MySQLLayout{Basedir: base}
	if st, err := os.Stat(filepath.Join(base, "lib", "plugin")); err == nil && st.IsDir() {
		l.PluginDir = filepath.Join(base, "lib", "plugin")
	}
	return l, nil
}

// explicitBinaryProblem says what is wrong with a [server] binary that
// names a directory (a tarball's top, most likely).
func explicitBinaryProblem(path string) error {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return nil
	}
	for _, n := range []string{"mysqld", "mariadbd"} {
		p := filepath.Join(path, "bin", n)
		if _, err := os.Stat(p); err == nil {
			return exitcode.UsageError(fmt.Errorf("[server] binary %q is a directory: give the server in it, binary = %q", path, p))
		}
	}
	return exitcode.UsageError(fmt.Errorf("[server] binary %q is a directory with no bin/mysqld: give the path of the server binary (a MySQL tarball's <basedir>/bin/mysqld)", path))
}

// checkMySQL checks a MySQL binary once its version is known: a series
// with a catalogue and a layout benchmatrix can start.
func checkMySQL(bin Binary) (catalog.MySQLVersion, MySQLLayout, error) {
	v, err := catalog.CheckMySQLVersion(bin.Version)
	if err != nil {
		return v, MySQLLayout{}, exitcode.UsageError(fmt.Errorf("%s: %w", bin.Path, err))
	}
	l, err := mysqlLayout(bin.Path)
	return v, l, err
}

// mysqlArgs are the options a MySQL server of this layout and version
// needs besides the sandbox's own.
func (s *Sandbox) mysqlArgs() []string {
	var a []string
	if s.layout.Basedir != "" {
		a = append(a, "--basedir="+s.layout.Basedir)
	}
	if s.layout.PluginDir != "" {
		a = append(a, "--plugin-dir="+s.layout.PluginDir)
	}
	a = append(a, "--init-file="+filepath.Join(s.dir, mysqlInitFile))
	if s.version.Major >= 8 {
		a = append(a, "--mysqlx=OFF")
	}
	return a
}

// mysqlPrepare readies a MySQL datadir for its first start: its own
// server_uuid (a copy of the golden datadir has the golden one's) and the
// init file.
func (s *Sandbox) mysqlPrepare() error {
	if s.bin.Flavor != catalog.MySQL {
		return nil
	}
	if err := os.Remove(filepath.Join(s.datadir(), "auto.cnf")); err != nil && !os.IsNotExist(err) {
		return err
	}
	return os.WriteFile(filepath.Join(s.dir, mysqlInitFile), []byte(mysqlInitSQL), 0o644)
}

// MySQLStartup renames the settings for a MySQL version
// (catalog.MySQLLookup, the table the plan decided with) and refuses those
// it does not have or whose value it does not accept, naming each; other
// flavors' settings are returned as they are.
func MySQLStartup(f catalog.Flavor, version string, settings []Setting) ([]Setting, error) {
	if f != catalog.MySQL {
		return settings, nil
	}
	v, err := catalog.ParseMySQLVersion(version)
	if err != nil {
		return nil, err
	}
	out := make([]Setting, 0, len(settings))
	var problems []string
	for _, st := range settings {
		loose := strings.HasPrefix(st.Name, "loose_") || strings.HasPrefix(st.Name, "loose-")
		name := st.Name
		if loose {
			name = name[len("loose_"):]
		}
		ms, err := catalog.MySQLLookup(v, name, st.Value)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		n := ms.Name
		if loose {
			n = "loose_" + n
		}
		out = append(out, Setting{Name: n, Value: st.Value})
	}
	if len(problems) > 0 {
		return nil, exitcode.UsageError(fmt.Errorf("%s", strings.Join(problems, "; ")))
	}
	return out, nil
}

// InspectMySQL finds the server binary (explicit, or on PATH) and tells
// what it is: a MySQL binary comes with its version from the catalogue
// and its layout; any other flavor with a zero version and layout, for
// the caller to refuse in its own words.
func InspectMySQL(ctx context.Context, explicit string) (Binary, catalog.MySQLVersion, MySQLLayout, error) {
	path, err := FindBinary(explicit)
	if err != nil {
		return Binary{}, catalog.MySQLVersion{}, MySQLLayout{}, err
	}
	bin, err := DetectBinary(ctx, path)
	if err != nil || bin.Flavor != catalog.MySQL {
		return bin, catalog.MySQLVersion{}, MySQLLayout{}, err
	}
	v, l, err := checkMySQL(bin)
	return bin, v, l, err
}

// A MySQL image on the docker provider (an image the user loaded, e.g.
// mysql:8.4; nothing is pulled): the official entrypoint initialises an
// empty datadir itself (mysqld --initialize-insecure, then root's
// password from MYSQL_ROOT_PASSWORD, which the provider generates) and
// passes the container's arguments beginning with "-" to mysqld. The
// version's variable names apply as on a sandbox: from the server's own
// @@version once it has run, before that from an official image's tag.

// imageMySQLVersion guesses the MySQL version of an official image from
// its name: mysql:8.4 is 8.4.0, mysql:8.0.36 is 8.0.36, mysql/mysql-server
// likewise; false for any other image or a tag without a version
// (latest, lts).
func imageMySQLVersion(image string) (string, bool) {
	repo, tag := splitImage(image)
	if base := repo[strings.LastIndex(repo, "/")+1:]; base != "mysql" && base != "mysql-server" {
		return "", false
	}
	tag, _, _ = strings.Cut(tag, "-") // 8.4-oracle, 8.0.36-debian
	parts := strings.Split(tag, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return "", false
	}
	for len(parts) < 3 {
		parts = append(parts, "0")
	}
	v := strings.Join(parts, ".")
	if _, err := catalog.ParseMySQLVersion(v); err != nil {
		return "", false
	}
	return v, true
}

// mysqlFlags are a docker server's settings under its MySQL version's
// names (the server's own version once known, else the image's tag).
func (d *Docker) mysqlFlags(startup []Setting) ([]Setting, error) {
	d.mu.Lock()
	f, v := d.flavor, d.version
	d.mu.Unlock()
	if f == "" {
		if iv, ok := imageMySQLVersion(d.cfg.Image); ok {
			f, v = catalog.MySQL, iv
		}
	}
	return MySQLStartup(f, v, startup)
}

// checkServerVersion refuses a running MySQL server of a series with no
// catalogue (the docker provider learns the version only then).
func checkServerVersion(f catalog.Flavor, version string) error {
	if f != catalog.MySQL {
		return nil
	}
	if _, err := catalog.CheckMySQLVersion(version); err != nil {
		return exitcode.UsageError(err)
	}
	return nil
}
