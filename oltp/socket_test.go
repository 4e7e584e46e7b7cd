package oltp

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestResolveSocket: localhost's socket in libmysqlclient's order:
// MYSQL_UNIX_PORT, the client groups of the option files (following
// !include and !includedir, a later file winning), the distribution's
// default; other groups' sockets (the server's [mysqld]) are not read.
func TestResolveSocket(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"/etc/mysql/my.cnf":               "[client-server]\nsocket = /run/a.sock\n!includedir /etc/mysql/conf.d/\n",
		"/etc/mysql/conf.d/50-client.cnf": "[mysqld]\nsocket=/run/server-only.sock\n[client]\n# comment\nsocket = \"/run/b.sock\"\n",
		"/home/u/.my.cnf":                 "[client]\nsocket=/home/u/c.sock\n",
	}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, errors.New("no such file")
	}
	glob := func(pattern string) ([]string, error) {
		var out []string
		for p := range files {
			if ok, _ := filepath.Match(pattern, p); ok {
				out = append(out, p)
			}
		}
		return out, nil
	}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "MYSQL_UNIX_PORT" {
				return v
			}
			return ""
		}
	}
	cases := []struct {
		name, env, home, want string
		files                 map[string]string
	}{
		{"env first", "/env.sock", "/home/u", "/env.sock", files},
		{"user file last wins", "", "/home/u", "/home/u/c.sock", files},
		{"includedir after the file's own", "", "", "/run/b.sock", files},
		{"default", "", "", DefaultSocketPath, map[string]string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files = c.files
			rd := func(p string) ([]byte, error) { return read(p) }
			if got := resolveSocket(env(c.env), rd, glob, c.home); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}
