package oltp

// Where "localhost" connects when no --mysql-socket is given, in
// libmysqlclient's order (and so sysbench's): MYSQL_UNIX_PORT, then the
// "socket" of the client configuration's groups ([client],
// [client-server], [client-mariadb], read from the system and user
// option files with their !include and !includedir lines), then the
// distribution's compiled-in default (Debian and Ubuntu, Fedora and
// MariaDB's packages: /run/mysqld/mysqld.sock).

import (
	"os"
	"path/filepath"
	"strings"

	"benchmatrix/mycnf"
)

// DefaultSocketPath is the distribution's default, libmariadb's on Debian.
const DefaultSocketPath = "/run/mysqld/mysqld.sock"

// systemSocket resolves the socket from this process's environment and
// files.
func systemSocket() string {
	home, _ := os.UserHomeDir()
	return resolveSocket(os.Getenv, os.ReadFile, filepath.Glob, home)
}

// resolveSocket is the resolution with its inputs given: getenv, a file
// reader, a glob (for !includedir) and the home directory.
func resolveSocket(getenv func(string) string, read func(string) ([]byte, error), glob func(string) ([]string, error), home string) string {
	if s := getenv("MYSQL_UNIX_PORT"); s != "" {
		return s
	}
	files := mycnf.FS{ReadFile: read, Glob: glob, Home: home, Getenv: getenv}
	args, _ := files.Load(mycnf.Sources{}, "client", "client-server", "client-mariadb")
	sock := ""
	for _, a := range args {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if strings.ReplaceAll(strings.ToLower(name), "_", "-") == "socket" && value != "" {
			sock = value // a later file's value wins
		}
	}
	if sock != "" {
		return sock
	}
	return DefaultSocketPath
}
