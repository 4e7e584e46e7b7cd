package tpcc

import (
	"errors"
	"strings"
	"testing"

	"benchmatrix/oltp"
)

func TestLastName(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "BARBARBAR"}, {371, "PRICALLYOUGHT"}, {999, "EINGEINGEING"}, {40, "BARPRESBAR"}} {
		if got := lastName(c.n); got != c.want {
			t.Errorf("lastName(%d) = %s, want %s", c.n, got, c.want)
		}
	}
}

func TestNURandRangeAndSkew(t *testing.T) {
	g := newRng(7, 1)
	nc := newNuConst(g, -1)
	hits := make([]int, CustPerDist+1)
	for range 200000 {
		v := g.nurand(&nc, 1023, 1, CustPerDist)
		if v < 1 || v > CustPerDist {
			t.Fatalf("NURand(1023, 1, 3000) = %d", v)
		}
		hits[v]++
	}
	// Non-uniform: the most drawn customer is drawn far more often than
	// a uniform draw's 67 times.
	top := 0
	for _, h := range hits {
		top = max(top, h)
	}
	if top < 200 {
		t.Errorf("NURand looks uniform: the most drawn customer came %d times in 200,000", top)
	}
}

func TestRunConstantDiffersFromLoad(t *testing.T) {
	for seed := int64(1); seed < 200; seed++ {
		load := newNuConst(newRng(seed, 0), -1)
		run := newNuConst(newRng(seed, -1), load.c255)
		d := run.c255 - load.c255
		if d < 0 {
			d = -d
		}
		if d < 65 || d > 119 || d == 96 || d == 112 {
			t.Fatalf("seed %d: C_LOAD %d, C_RUN %d (delta %d breaks clause 2.1.6.1)", seed, load.c255, run.c255, d)
		}
	}
}

func TestMix(t *testing.T) {
	g := newRng(3, 2)
	var n [numTypes]int
	const total = 230000
	for range total {
		n[pick(g, false, nil)]++
	}
	if n[Purge] != 0 {
		t.Errorf("purge drawn without enable_purge: %d", n[Purge])
	}
	// 10/23, 10/23, 1/23, 1/23, 1/23; 230,000 draws: 5 standard
	// deviations of the rarest share is 0.2 points.
	want := [numTypes]float64{10.0 / 23, 10.0 / 23, 1.0 / 23, 1.0 / 23, 1.0 / 23, 0}
	for typ := range NewOrder + 5 {
		got := float64(n[typ]) / total
		if d := got - want[typ]; d > 0.005 || d < -0.005 {
			t.Errorf("%s: share %.4f, want %.4f", typ, got, want[typ])
		}
	}
	for range total {
		n[pick(g, true, nil)]++
	}
	if n[Purge] == 0 {
		t.Error("purge never drawn with enable_purge")
	}
	var only [numTypes]int
	for range 1000 {
		only[pick(g, false, []int{0, 1, 0, 0, 0})]++
	}
	if only[Payment] != 1000 {
		t.Errorf("mix 0,1,0,0,0 drew %v", only)
	}
}

func TestRowsPerSpecification(t *testing.T) {
	o := DefaultOptions()
	o.Scale, o.Tables = 3, 2
	r := o.Rows()
	want := map[string]int64{"warehouse": 6, "district": 60, "customer": 180000, "history": 180000, "orders": 180000,
		"new_orders": 54000, "stock": 600000, "item": 200000}
	for k, v := range want {
		if r[k] != v {
			t.Errorf("%s: %d rows, want %d", k, r[k], v)
		}
	}
}

func TestParseCommandLine(t *testing.T) {
	inv, err := ParseCommandLine([]string{"/opt/sysbench-tpcc/tpcc.lua", "--mysql-host=127.0.0.1", "--mysql-port=3307", "--tables=3", "--scale=5",
		"--threads=4", "--time=30", "--report-interval=2", "--use_fk=0", "--trx_level=RC", "--force_pk=1", "--mysql_storage_engine=innodb", "run"})
	if err != nil {
		t.Fatal(err)
	}
	o := inv.TPCC
	if o.Tables != 3 || o.Scale != 5 || o.Threads != 4 || o.Time.Seconds() != 30 || o.Interval.Seconds() != 2 || o.UseFK || !o.ForcePK || o.TrxLevel != "RC" {
		t.Errorf("options: %+v", o)
	}
	if inv.Command != "run" || inv.Config == nil || inv.Config.Addr != "127.0.0.1:3307" {
		t.Errorf("command %q, config %+v", inv.Command, inv.Config)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tpcc.lua", "--scale=0", "prepare"}, "scale = 0: from 1 to 32767 warehouses"},
		{[]string{"tpcc.lua", "--tables=0", "run"}, "tables = 0"},
		{[]string{"tpcc.lua", "--table-size=10", "run"}, "invalid option: --table-size=10"},
		{[]string{"tpcc.lua", "--trx_level=XX", "run"}, "not an isolation level"},
		{[]string{"tpcc.lua", "--scale=two", "run"}, "not a whole number"},
		{[]string{"tpcc.lua", "--bogus=1", "run"}, "bogus"},
		{[]string{"tpcc.lua", "frobnicate"}, "Unknown command: frobnicate"},
		{[]string{"tpcc.lua"}, "Command is required"},
	} {
		_, err := ParseCommandLine(c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.args, err, c.want)
		}
		var ue *oltp.UsageError
		if err != nil && !errors.As(err, &ue) {
			t.Errorf("%v: %T is not a usage error", c.args, err)
		}
	}
}

func TestIsScript(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"/x/sysbench-tpcc/tpcc.lua", "run"}, true},
		{[]string{"--threads=2", "tpcc.lua", "prepare"}, true},
		{[]string{"tpcc", "run"}, true},
		{[]string{"--test=/x/tpcc.lua", "run"}, true},
		{[]string{"oltp_read_write", "run"}, false},
		{[]string{"--tables=2", "oltp_read_write", "tpcc.lua"}, false},
	} {
		if got := IsScript(c.args); got != c.want {
			t.Errorf("IsScript(%v) = %v", c.args, got)
		}
	}
}
