package mycnf

import (
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
)

func fakeFS(files map[string]string) FS {
	return FS{
		ReadFile: func(p string) ([]byte, error) {
			if s, ok := files[p]; ok {
				return []byte(s), nil
			}
			return nil, fs.ErrNotExist
		},
		Glob: func(pattern string) ([]string, error) {
			var out []string
			for p := range files {
				if ok, _ := filepath.Match(pattern, p); ok {
					out = append(out, p)
				}
			}
			return out, nil
		},
		Home:   "/home/u",
		Getenv: func(string) string { return "" },
	}
}

func TestLoad(t *testing.T) {
	files := map[string]string{
		"/etc/mysql/my.cnf":       "[client-server]\nsocket = /run/x.sock\n!includedir /etc/mysql/conf.d/\n",
		"/etc/mysql/conf.d/b.cnf": "[mysqlslap]\nconcurrency=4\n[mysqld]\nport=1\n",
		"/etc/mysql/conf.d/a.cnf": "# first by name\n[client]\nuser = \"bob smith\"  # quoted\nhost=db1 # comment\n",
		"/etc/mysql/conf.d/x.txt": "[client]\nport=9\n", // not *.cnf
		"/home/u/.my.cnf":         "[client]\npassword='p\\'w'\n[client_suffix]\nport=3307\n",
		"/tmp/extra.cnf":          "[client]\ncompress\n!include /tmp/inc.cnf\n",
		"/tmp/inc.cnf":            "[client]\nprotocol=TCP\n",
		"/tmp/only.cnf":           "[mariadb-slap]\niterations=2\n",
	}
	f := fakeFS(files)
	groups := []string{"mysqlslap", "mariadb-slap", "client", "client-server", "client-mariadb"}
	cases := []struct {
		name string
		src  Sources
		want []string
	}{
		{"default files", Sources{}, []string{"--socket=/run/x.sock", "--user=bob smith", "--host=db1", "--concurrency=4", "--password=p'w"}},
		{"extra file before ~/.my.cnf", Sources{ExtraFile: "/tmp/extra.cnf"}, []string{"--socket=/run/x.sock", "--user=bob smith", "--host=db1", "--concurrency=4", "--compress", "--protocol=TCP", "--password=p'w"}},
		{"group suffix", Sources{GroupSuffix: "_suffix"}, []string{"--socket=/run/x.sock", "--user=bob smith", "--host=db1", "--concurrency=4", "--password=p'w", "--port=3307"}},
		{"defaults file only", Sources{DefaultsFile: "/tmp/only.cnf"}, []string{"--iterations=2"}},
		{"no defaults", Sources{NoDefaults: true}, nil},
	}
	for _, c := range cases {
		got, err := f.Load(c.src, groups...)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, %v\nwant %q", c.name, got, err, c.want)
		}
	}
	if _, err := f.Load(Sources{DefaultsFile: "/nope.cnf"}, groups...); err == nil || err.Error() != "Could not open required defaults file: /nope.cnf\nFatal error in defaults handling. Program aborted" {
		t.Errorf("missing defaults file: %v", err)
	}
	if _, err := f.Load(Sources{ExtraFile: "/nope.cnf"}, groups...); err == nil {
		t.Errorf("missing extra file: no error")
	}
}

func TestTakeSources(t *testing.T) {
	src, rest := TakeSources([]string{"--defaults-file=/a.cnf", "--defaults_group_suffix=_x", "--print-defaults", "-a", "--no-defaults"})
	if src.DefaultsFile != "/a.cnf" || src.GroupSuffix != "_x" || !src.Print || src.NoDefaults {
		t.Errorf("sources %+v", src)
	}
	if !slices.Equal(rest, []string{"-a", "--no-defaults"}) {
		t.Errorf("rest %q: only leading options are taken", rest)
	}
}

func TestParseValue(t *testing.T) {
	for in, want := range map[string]string{
		" plain ":       "plain",
		"a#b":           "a#b",
		"a #b":          "a",
		`"x # y"  # c`:  "x # y",
		`'it\'s'`:       "it's",
		`a\sb\tc`:       "a b\tc",
		`"unterminated`: `"unterminated`,
		`C:\\path\\to`:  `C:\path\to`,
		`keep\qunknown`: `keep\qunknown`,
	} {
		if got := parseValue(in); got != want {
			t.Errorf("parseValue(%q) = %q, want %q", in, got, want)
		}
	}
}
