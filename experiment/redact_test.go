package experiment

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{`dsn = "bench:s3cr3t!@tcp(db.example:3306)/sbtest"`, `dsn = "bench@tcp(db.example:3306)/sbtest"`},
		{`dsn = "root:p@ss:w0rd@unix(/run/mysqld/mysqld.sock)/x"`, `dsn = "root@unix(/run/mysqld/mysqld.sock)/x"`},
		{`# was admin:hunter2@tcp(10.0.0.1)/shop`, `# was admin@tcp(10.0.0.1)/shop`},
		{`dsn = "bench:pw@/sbtest"`, `dsn = "bench@/sbtest"`},
		{`dsn = "bench@tcp(h:1)/s"`, `dsn = "bench@tcp(h:1)/s"`},
		{`sql = "SELECT 'a:b@c'"`, `sql = "SELECT 'a:b@c'"`},
		{`innodb_buffer_pool_size = "1G"`, `innodb_buffer_pool_size = "1G"`},
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	m, err := Parse("m.toml", "[server]\nprovider = \"external\"\ndsn = \"u:topsecret@tcp(127.0.0.1:3306)/s\"\n[workload]\nname = \"oltp_read_only\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(m.Stored(), "topsecret") || !strings.Contains(m.Source, "topsecret") {
		t.Fatalf("stored text %q", m.Stored())
	}
}
