package oltp

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestLegacyMoreParse: the command lines of select_random_points.lua,
// select_random_ranges.lua, bulk_insert.lua and parallel_prepare.lua read
// as sysbench's scripts read them.
func TestLegacyMoreParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		line  string
		check func(t *testing.T, inv Invocation)
	}{
		// --delta is the 1.0 name, which the legacy script does not read;
		// --threads leaves the scripts' num_threads at 1.
		{"--test=/x/oltp_legacy/select_random_points.lua --random-points=3 --delta=9 --threads=4 run", func(t *testing.T, inv Invocation) {
			o := inv.Options
			if inv.Workload != "legacy_select_random_points" || o.RandomPoints != 3 || o.Delta != 5 || o.Threads != 4 || legacyThreads(&o) != 1 {
				t.Errorf("workload %s options %+v num_threads %d", inv.Workload, o, legacyThreads(&o))
			}
		}},
		{"--test=/x/oltp_legacy/select_random_ranges.lua --number-of-ranges=2 --random-ranges-delta=-3 --delta=50 --random-points=7 --num-threads=3 run", func(t *testing.T, inv Invocation) {
			o := inv.Options
			if inv.Workload != "legacy_select_random_ranges" || o.NumberOfRanges != 2 || o.Delta != -3 || o.RandomPoints != 10 ||
				o.Threads != 3 || legacyThreads(&o) != 3 {
				t.Errorf("workload %s options %+v num_threads %d", inv.Workload, o, legacyThreads(&o))
			}
		}},
		{"--test=/x/oltp_legacy/bulk_insert.lua --num-threads=3 cleanup", func(t *testing.T, inv Invocation) {
			if got := TableNames(inv.Options); inv.Workload != "legacy_bulk_insert" || !reflect.DeepEqual(got, []string{"sbtest0", "sbtest1", "sbtest2"}) {
				t.Errorf("workload %s tables %v", inv.Workload, got)
			}
		}},
		// prepare creates num_threads tables whatever --threads says.
		{"--test=/x/oltp_legacy/bulk_insert.lua --threads=3 prepare", func(t *testing.T, inv Invocation) {
			if got := TableNames(inv.Options); !reflect.DeepEqual(got, []string{"sbtest0"}) {
				t.Errorf("tables %v", got)
			}
		}},
		{"--test=../oltp_legacy/parallel_prepare.lua --oltp-tables-count=4 run", func(t *testing.T, inv Invocation) {
			if inv.Workload != "legacy_parallel_prepare" || inv.Options.Tables != 4 {
				t.Errorf("workload %s tables %d", inv.Workload, inv.Options.Tables)
			}
		}},
		// The 1.0 scripts' options are nothing to the legacy scripts;
		// benchmatrix's --reinsert-id still counts.
		{"--test=/x/oltp_legacy/oltp.lua --tables=4 --table-size=7 --point-selects=1 --mysql-storage-engine=myisam --oltp-range-size=9 --reinsert-id=auto run", func(t *testing.T, inv Invocation) {
			o := inv.Options
			if o.Tables != 1 || o.TableSize != 10000 || o.PointSelects != 10 || o.StorageEngine != "innodb" || o.RangeSize != 9 || o.ReinsertID != "auto" {
				t.Errorf("options %+v", o)
			}
		}},
		// Outside a directory named oltp_legacy these are the 1.0 scripts.
		{"--test=/usr/share/sysbench/bulk_insert.lua run", func(t *testing.T, inv Invocation) {
			if inv.Workload != "bulk_insert" || inv.Legacy != nil {
				t.Errorf("workload %s", inv.Workload)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			inv, err := ParseCommandLine(cliFields(c.line))
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, inv)
		})
	}
	bad := []struct{ line, option, msg string }{
		{"--test=/x/oltp_legacy/select_random_points.lua --random-points=abc run", "--random-points", `select_random_points.lua reads --random-points as a number: "abc" is not an integer`},
		{"--test=/x/oltp_legacy/select_random_points.lua --random-points=0 run", "--random-points", "below the minimum 1"},
		{"--test=/x/oltp_legacy/select_random_ranges.lua --random-ranges-delta run", "--random-ranges-delta", "is not an integer"},
		{"--test=/x/oltp_legacy/select_random_ranges.lua --number-of-ranges= run", "--number-of-ranges", "is not an integer"},
	}
	for _, c := range bad {
		t.Run(c.line, func(t *testing.T) {
			_, err := ParseCommandLine(cliFields(c.line))
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v (%T), want *UsageError", err, err)
			}
			if ue.Option != c.option || !strings.Contains(ue.Msg, c.msg) {
				t.Fatalf("got option %q msg %q; want option %q msg containing %q", ue.Option, ue.Msg, c.option, c.msg)
			}
		})
	}
}

// TestLegacyMoreWorkloads: the four scripts' workloads as the manifest
// language sees them. parallel_prepare's run creates the tables a cell
// has prepared, so it is refused there, naming the command line.
func TestLegacyMoreWorkloads(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"legacy_select_random_points", "legacy_select_random_ranges", "legacy_bulk_insert"} {
		if !slices.Contains(Workloads(), name) {
			t.Errorf("%s is not a workload", name)
		}
		o := DefaultOptions()
		if err := o.Set("workload", name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	o := DefaultOptions()
	o.Threads = 2
	o.Workload = "legacy_bulk_insert"
	if got := TableNames(o); !reflect.DeepEqual(got, []string{"sbtest0", "sbtest1"}) {
		t.Errorf("legacy_bulk_insert at threads=2 defines %v", got)
	}
	if !strings.HasPrefix(DataShape(o), "legacy_bulk/2 ") || !EmptyTables(o) || !ChangesData(o) {
		t.Errorf("legacy_bulk_insert shape %q empty %v changes %v", DataShape(o), EmptyTables(o), ChangesData(o))
	}
	if slices.Contains(Workloads(), "legacy_parallel_prepare") {
		t.Errorf("legacy_parallel_prepare is listed as a manifest workload")
	}
	o = DefaultOptions()
	err := o.Set("workload", "legacy_parallel_prepare")
	if err == nil || !strings.Contains(err.Error(), "parallel_prepare.lua run") {
		t.Errorf("workload legacy_parallel_prepare: %v", err)
	}
}

// TestLegacySliceBoundsMatchSysbench: the k slice of every worker, for
// table sizes and thread counts whose Lua quotients land near integers,
// as the real sysbench computes it: a probe script (written here) prints
// sb_rand(x, x) of the legacy scripts' two expressions, which is x as
// sb_rand's uint32_t arguments truncate it.
func TestLegacySliceBoundsMatchSysbench(t *testing.T) {
	bin := needSysbench(t)
	sizes := []int{1, 7, 100, 999, 1000, 5000, 9999, 10000, 12345, 100000, 1000000, 4294967}
	threads := []int{1, 2, 3, 6, 7, 9, 11, 12, 13, 49, 100}
	var lua strings.Builder
	lua.WriteString("function prepare()\n")
	var want strings.Builder
	for _, size := range sizes {
		for _, n := range threads {
			fmt.Fprintf(&lua, "  for tid = 0, %d do\n", n-1)
			fmt.Fprintf(&lua, "    print(%d .. ' ' .. %d .. ' ' .. tid .. ' ' .. sb_rand(%d / %d * tid, %d / %d * tid) .. ' ' .. sb_rand(%d / %d * (tid + 1), %d / %d * (tid + 1)))\n",
				size, n, size, n, size, n, size, n, size, n)
			lua.WriteString("  end\n")
			for tid := range n {
				lo, hi := legacySliceBounds(size, n, tid)
				fmt.Fprintf(&want, "%d %d %d %d %d\n", size, n, tid, lo, hi)
			}
		}
	}
	lua.WriteString("end\n")
	script := filepath.Join(t.TempDir(), "slices.lua")
	if err := os.WriteFile(script, []byte(lua.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "--rand-type=uniform", "--verbosity=0", script, "prepare")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("sysbench: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if got := stdout.String(); got != want.String() {
		gl, wl := strings.Split(got, "\n"), strings.Split(want.String(), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Errorf("size threads tid lo hi: sysbench %q, ours %q", gl[i], wl[i])
			}
		}
		if len(gl) != len(wl) {
			t.Errorf("sysbench printed %d lines, we expect %d", len(gl), len(wl))
		}
	}
}
