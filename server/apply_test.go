package server

import (
	"testing"

	"benchmatrix/catalog"
)

func TestSQLValueAndSameValue(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"1", "1"}, {"1G", "1073741824"}, {"512M", "536870912"}, {"ON", "ON"}, {"off", "OFF"},
		{"ROW", "'ROW'"}, {"it's", `'it\'s'`}, {"0.5", "0.5"},
	} {
		if got := SQLValue(c.in); got != c.want {
			t.Errorf("SQLValue(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct {
		w, a string
		same bool
	}{
		{"1", "1", true}, {"ON", "1", true}, {"true", "ON", true}, {"1G", "1073741824", true},
		{"1", "0", false}, {"ROW", "row", true}, {"ROW", "MIXED", false}, {"128M", "134217728", true},
		{"0", "OFF", true}, {"2", "ON", false},
	} {
		if got := SameValue("x", c.w, c.a); got != c.same {
			t.Errorf("SameValue(%q, %q) = %v", c.w, c.a, got)
		}
	}
}

func TestStartupFlag(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    Setting
		want string
	}{
		{Setting{"log_bin", "binlog"}, "--log-bin=binlog"},
		{Setting{"log_bin", "true"}, "--log-bin"},
		{Setting{"performance_schema", "false"}, "--skip-performance-schema"},
		{Setting{"innodb_buffer_pool_size", "1G"}, "--innodb-buffer-pool-size=1G"},
	} {
		if got := StartupFlag(c.s); got != c.want {
			t.Errorf("StartupFlag(%v) = %q, want %q", c.s, got, c.want)
		}
	}
}

func TestParseVersionLine(t *testing.T) {
	t.Parallel()
	b, err := parseVersionLine("/usr/sbin/mariadbd", "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n")
	if err != nil || b.Flavor != catalog.MariaDB || b.Version != "10.11.19-MariaDB-0+deb12u1" {
		t.Fatalf("%+v %v", b, err)
	}
	b, err = parseVersionLine("/usr/sbin/mysqld", "/usr/sbin/mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)\n")
	if err != nil || b.Flavor != catalog.MySQL || b.Version != "8.0.36" {
		t.Fatalf("%+v %v", b, err)
	}
}
