package slap

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The option files are read as mariadb-slap reads them: the same groups,
// order, includes, quoting and suffixes give the same --print-defaults
// line as Debian's mariadb-slap (passwords masked here), and options from
// a file act like the same options given first on the command line.
func TestOptionFilesMatchMariadbSlap(t *testing.T) {
	bin := slapBinary(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("inc.cnf", "[client]\nprotocol=TCP\n[mysqlslap]\niterations = 3\n")
	main := write("main.cnf", "# main\n[client]\nuser = \"bob smith\"  # a comment\nhost=127.0.0.1\n[mysqld]\nport=1\n"+
		"[mysqlslap]\nconcurrency=2,4\n[mariadb-slap]\nnumber-of-queries=7\n[client_x]\nport=3307\n!include "+filepath.Join(dir, "inc.cnf")+"\n")
	extra := write("extra.cnf", "[client-server]\nsocket=/tmp/x.sock\n[client-mariadb]\ncompress\n")
	for _, lead := range [][]string{
		{"--defaults-file=" + main},
		{"--defaults-file=" + main, "--defaults-group-suffix=_x"},
		{"--defaults-extra-file=" + extra},
	} {
		args := append(append([]string{}, lead...), "--print-defaults")
		want, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("%s %q: %v", bin, args, err)
		}
		var out bytes.Buffer
		if code := Main(context.Background(), args, nil, &out, &out); code != 0 {
			t.Fatalf("benchmatrix slap %q: exit %d: %s", args, code, out.String())
		}
		w := strings.Replace(string(want), bin, "benchmatrix slap", 1)
		if out.String() != w {
			t.Errorf("%q:\nours   %q\ntheirs %q", args, out.String(), w)
		}
	}
	// The files' options are used: user, host, iterations from the include.
	c, err := Parse([]string{"--defaults-file=" + main, "-a"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.User != "bob smith" || c.Host != "127.0.0.1" || c.Iterations != 3 || c.NumberOfQueries != 7 || len(c.Concurrency) != 2 || c.Protocol != "tcp" {
		t.Errorf("config from the file: %+v", c)
	}
	// A socket or port from a file does not choose the protocol; one on
	// the command line does.
	c, err = Parse([]string{"--defaults-file=" + extra, "-a"}, &bytes.Buffer{})
	if err != nil || c.Socket != "/tmp/x.sock" || c.Protocol != "" {
		t.Errorf("socket from a file: %+v, %v", c, err)
	}
	// Unknown options in a file, and the file options after another
	// argument, fail as in mariadb-slap.
	bad := write("bad.cnf", "[client]\nfoo=bar\n")
	for _, args := range [][]string{{"--defaults-file=" + bad, "-a"}, {"-a", "--defaults-file=" + main}, {"--defaults-file=" + filepath.Join(dir, "none.cnf"), "-a"}} {
		wantErr, _ := exec.Command(bin, append(args, "--only-print")...).CombinedOutput()
		_, err := Parse(args, &bytes.Buffer{})
		if err == nil {
			t.Errorf("%q: no error; mariadb-slap says %q", args, wantErr)
			continue
		}
		first := strings.SplitN(string(wantErr), "\n", 2)[0]
		if !strings.Contains(first, err.Error()) && !strings.Contains(err.Error(), first) {
			t.Errorf("%q: %q; mariadb-slap says %q", args, err, first)
		}
	}
	// A password in a file is never printed.
	pw := write("pw.cnf", "[client]\npassword=hunter2\n")
	var out bytes.Buffer
	Main(context.Background(), []string{"--defaults-file=" + pw, "--print-defaults"}, nil, &out, &out)
	if strings.Contains(out.String(), "hunter2") || !strings.Contains(out.String(), "--password=*****") {
		t.Errorf("print-defaults shows %q", out.String())
	}
}
