package oltp

// Where "localhost" connects when no --mysql-socket is given, in
// libmysqlclient's order (and so sysbench's): MYSQL_UNIX_PORT, then the
// "socket" of the client configuration's groups ([client],
// [client-server], [client-mariadb], read from the system and user
// option files with their !include and !includedir lines), then the
// distribution's compiled-in default (Debian and Ubuntu, Fedora and
// MariaDB's packages: /run/mysqld/mysqld.sock).

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// DefaultSocketPath is the distribution's default, libmariadb's on Debian.
const DefaultSocketPath = "/run/mysqld/mysqld.sock"

// optionFiles are the client option files libmysqlclient reads, in order
// (a later file's value wins).
var optionFiles = []string{"/etc/my.cnf", "/etc/mysql/my.cnf", "~/.my.cnf"}

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
	sock := ""
	seen := map[string]bool{}
	var readFile func(path string, depth int)
	readFile = func(path string, depth int) {
		if depth > 10 || seen[path] {
			return
		}
		seen[path] = true
		data, err := read(path)
		if err != nil {
			return
		}
		group := ""
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			switch {
			case line == "" || line[0] == '#' || line[0] == ';':
			case strings.HasPrefix(line, "!includedir"):
				dir := strings.TrimSpace(strings.TrimPrefix(line, "!includedir"))
				files, _ := glob(filepath.Join(dir, "*.cnf"))
				sort.Strings(files)
				for _, f := range files {
					readFile(f, depth+1)
				}
			case strings.HasPrefix(line, "!include"):
				readFile(strings.TrimSpace(strings.TrimPrefix(line, "!include")), depth+1)
			case line[0] == '[':
				group = strings.ToLower(strings.Trim(line, "[] \t"))
			default:
				key, value, ok := strings.Cut(line, "=")
				key = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(key)), "_", "-")
				if !ok || key != "socket" {
					continue
				}
				switch group {
				case "client", "client-server", "client-mariadb":
					if v := strings.Trim(strings.TrimSpace(value), `"'`); v != "" {
						sock = v
					}
				}
			}
		}
	}
	for _, f := range optionFiles {
		if strings.HasPrefix(f, "~/") {
			if home == "" {
				continue
			}
			f = filepath.Join(home, f[2:])
		}
		readFile(f, 0)
	}
	if sock != "" {
		return sock
	}
	return DefaultSocketPath
}
