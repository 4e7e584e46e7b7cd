package catalog

import (
	"strings"
	"testing"
)

// Every limit key in the table reads back what it prints, refuses zero and
// nonsense naming what it wants, and says what enforces it.
func TestLimitTable(t *testing.T) {
	t.Parallel()
	good := map[string]string{"disk_write_iops": "100", "disk_read_iops": "200", "disk_write_bps": "8M", "disk_read_bps": "16M",
		"cpus": "0.5", "server_cpus": "0", "client_cpus": "0", "memory": "2G"}
	if len(good) != len(LimitTable) {
		t.Fatalf("the test knows %d keys, the table has %d (%v)", len(good), len(LimitTable), LimitKeys)
	}
	var all LimitSet
	for _, k := range LimitTable {
		v, ok := good[k.Name]
		if !ok {
			t.Fatalf("no test value for %s", k.Name)
		}
		var l LimitSet
		if err := l.Set(k.Name, v); err != nil {
			t.Fatalf("%s = %s: %v", k.Name, v, err)
		}
		got := l.Get(k.Name)
		var back LimitSet
		if err := back.Set(k.Name, got); err != nil || back != l {
			t.Errorf("%s: %q prints as %q, which reads back as %+v (%v)", k.Name, v, got, back, err)
		}
		for _, bad := range []string{"", "-1", "x", "0-"} {
			if err := l.Set(k.Name, bad); err == nil {
				t.Errorf("%s = %q accepted", k.Name, bad)
			}
		}
		if m := k.Mechanism; k.Client != (m.V1File == "" && m.V2File == "") || m.Docker == "" {
			t.Errorf("%s: mechanism %+v (client %v)", k.Name, m, k.Client)
		}
		all = all.Merge(l)
	}
	if s := all.String(); strings.Count(s, "=") != len(LimitTable) || !strings.HasPrefix(s, "disk_write_iops=100 ") {
		t.Errorf("String() = %q", s)
	}
	if all.Server().ClientCPUs != "" || all.Server().ServerCPUs != "0" {
		t.Errorf("Server() = %+v", all.Server())
	}
	if err := all.Set("latency", "1ms"); err == nil || !strings.Contains(err.Error(), "not a limit (known: disk_write_iops,") {
		t.Errorf("unknown key: %v", err)
	}
}

// Only a memory limit that shrinks (or appears) restarts the server; every
// changed key is listed, a lifted one as "(none)".
func TestChangedLimits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		prev, next LimitSet
		want       string
		restart    bool
	}{
		{LimitSet{Memory: 2 << 30, CPUs: 1}, LimitSet{Memory: 4 << 30}, "cpus=(none) memory=4294967296", false},
		{LimitSet{Memory: 4 << 30}, LimitSet{Memory: 2 << 30}, "memory=2147483648", true},
		{LimitSet{}, LimitSet{Memory: 4 << 30}, "memory=4294967296", true},
		{LimitSet{ClientCPUs: "0"}, LimitSet{}, "client_cpus=(none)", false},
		{LimitSet{DiskWriteIOPS: 100}, LimitSet{DiskWriteIOPS: 100}, "", false},
	} {
		ch, restart := ChangedLimits(c.prev, c.next)
		var got []string
		for _, x := range ch {
			got = append(got, x.Name+"="+x.Value)
		}
		if strings.Join(got, " ") != c.want || restart != c.restart {
			t.Errorf("%v -> %v: %v restart %v, want %s restart %v", c.prev, c.next, got, restart, c.want, c.restart)
		}
	}
}

// Text prints sizes with a unit and "none" for no limit.
func TestLimitSetText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		l    LimitSet
		want string
	}{
		{LimitSet{}, "none"},
		{LimitSet{DiskWriteIOPS: 100, DiskReadBPS: 8 << 20, CPUs: 0.5, ServerCPUs: "0", ClientCPUs: "1", Memory: 2 << 30},
			"disk_write_iops=100 disk_read_bps=8M/s cpus=0.5 server_cpus=0 client_cpus=1 memory=2G"},
	} {
		if got := c.l.Text(); got != c.want {
			t.Errorf("Text(%+v) = %q, want %q", c.l, got, c.want)
		}
	}
}
