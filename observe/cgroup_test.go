package observe

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"benchmatrix/server"
)

// fakeTree writes files under a temporary root.
func fakeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Two readings of a fake cgroup, one second apart, through Rates: every
// cg_* column, for v1 and v2, and the device filter.
func TestCgroupColumnsFakeSys(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		v2      bool
		dev     string
		before  map[string]string
		after   map[string]string
		want    map[string]float64
		missing []string // columns that must be empty
	}{
		{
			name: "v1 on the datadir's device",
			dev:  "254:0",
			before: map[string]string{
				"blkio/blkio.throttle.io_serviced":      "254:0 Read 10\n254:0 Write 100\n254:0 Sync 90\n254:0 Async 20\n254:0 Discard 0\n254:0 Total 110\n8:0 Read 1000\n8:0 Write 1000\nTotal 2110\n",
				"blkio/blkio.throttle.io_service_bytes": "254:0 Read 40960\n254:0 Write 409600\n254:0 Total 450560\n8:0 Write 99999999\nTotal 100450559\n",
				"memory/memory.usage_in_bytes":          "1073741824\n",
				"memory/memory.failcnt":                 "3\n",
				"cpu/cpu.stat":                          "nr_periods 100\nnr_throttled 4\nthrottled_time 2000000000\nnr_bursts 0\nburst_time 0\n",
			},
			after: map[string]string{
				"blkio/blkio.throttle.io_serviced":      "254:0 Read 30\n254:0 Write 200\n254:0 Sync 200\n254:0 Total 230\n8:0 Read 5000\n8:0 Write 5000\nTotal 10230\n",
				"blkio/blkio.throttle.io_service_bytes": "254:0 Read 122880\n254:0 Write 1228800\n8:0 Write 199999999\n",
				"memory/memory.usage_in_bytes":          "1610612736\n",
				"memory/memory.failcnt":                 "7\n",
				"cpu/cpu.stat":                          "nr_periods 110\nnr_throttled 10\nthrottled_time 2450000000\n",
			},
			want: map[string]float64{
				"cg_reads_s": 20, "cg_writes_s": 100, "cg_read_kb_s": 80, "cg_write_kb_s": 800,
				"cg_memory_mb": 1536, "cg_memory_limit_hits_s": 4, "cg_cpu_throttled_periods_s": 6, "cg_cpu_throttled_ms_s": 450,
			},
			missing: []string{"cg_io_stall_pct"},
		},
		{
			name: "v1, device unknown: every device",
			before: map[string]string{
				"blkio/blkio.throttle.io_serviced":      "254:0 Read 10\n254:0 Write 100\n8:0 Read 0\n8:0 Write 0\nTotal 110\n",
				"blkio/blkio.throttle.io_service_bytes": "",
			},
			after: map[string]string{
				"blkio/blkio.throttle.io_serviced":      "254:0 Read 10\n254:0 Write 150\n8:0 Read 5\n8:0 Write 50\nTotal 215\n",
				"blkio/blkio.throttle.io_service_bytes": "8:0 Write 4096\n",
			},
			want:    map[string]float64{"cg_reads_s": 5, "cg_writes_s": 100, "cg_write_kb_s": 4},
			missing: []string{"cg_memory_mb", "cg_memory_limit_hits_s", "cg_cpu_throttled_periods_s", "cg_io_stall_pct"},
		},
		{
			name: "v2",
			v2:   true,
			dev:  "254:0",
			before: map[string]string{
				"g/io.stat":        "8:0 rbytes=1 wbytes=1 rios=1 wios=1 dbytes=0 dios=0\n", // no IO on 254:0 yet
				"g/io.pressure":    "some avg10=0.00 avg60=0.00 avg300=0.00 total=1000000\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=500000\n",
				"g/memory.current": "268435456\n",
				"g/memory.events":  "low 0\nhigh 0\nmax 2\noom 0\noom_kill 0\n",
				"g/cpu.stat":       "usage_usec 5000000\nuser_usec 4000000\nsystem_usec 1000000\nnr_periods 50\nnr_throttled 0\nthrottled_usec 0\n",
			},
			after: map[string]string{
				"g/io.stat":        "8:0 rbytes=1 wbytes=1 rios=1 wios=1 dbytes=0 dios=0\n254:0 rbytes=8192 wbytes=1048576 rios=2 wios=256 dbytes=0 dios=0\n",
				"g/io.pressure":    "some avg10=30.00 avg60=5.00 avg300=1.00 total=1250000\nfull avg10=20.00 avg60=3.00 avg300=0.50 total=600000\n",
				"g/memory.current": "536870912\n",
				"g/memory.events":  "low 0\nhigh 4\nmax 5\noom 0\noom_kill 0\n",
				"g/cpu.stat":       "usage_usec 6000000\nnr_periods 60\nnr_throttled 8\nthrottled_usec 300000\n",
			},
			want: map[string]float64{
				"cg_reads_s": 2, "cg_writes_s": 256, "cg_read_kb_s": 8, "cg_write_kb_s": 1024,
				"cg_io_stall_pct": 25, "cg_memory_mb": 512, "cg_memory_limit_hits_s": 3, "cg_cpu_throttled_periods_s": 8, "cg_cpu_throttled_ms_s": 300,
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			paths := server.CgroupPaths{V2: c.v2, Device: c.dev, Dirs: map[string]string{}}
			if c.v2 {
				paths.Dirs[""] = filepath.Join(root, "g")
			} else {
				for _, ctrl := range []string{"blkio", "cpu", "memory"} {
					paths.Dirs[ctrl] = filepath.Join(root, ctrl)
				}
			}
			r := cgroupReader{paths: paths}
			var samples []Sample
			for i, files := range []map[string]string{c.before, c.after} {
				fakeTree(t, root, files)
				vals := map[string]float64{}
				r.read(vals)
				samples = append(samples, Sample{T: time.Duration(i) * time.Second, Values: vals})
			}
			rows := Rates(samples)
			if len(rows) != 1 {
				t.Fatalf("%d rows", len(rows))
			}
			for col, want := range c.want {
				if got := rows[0].Get(col); math.Abs(got-want) > 1e-9 {
					t.Errorf("%s = %v, want %v", col, got, want)
				}
			}
			for _, col := range c.missing {
				if got := rows[0].Get(col); !math.IsNaN(got) {
					t.Errorf("%s = %v, want empty", col, got)
				}
			}
			if note := r.note(); !strings.Contains(note, map[bool]string{false: "cgroup: v1", true: "cgroup: v2"}[c.v2]) {
				t.Errorf("note %q", note)
			}
		})
	}

	// No cgroup: nothing read, every cg_* column empty, a note why.
	var none cgroupReader
	vals := map[string]float64{}
	none.read(vals)
	if len(vals) != 0 {
		t.Errorf("read without a cgroup stored %v", vals)
	}
	if !strings.Contains(none.note(), "no cgroup of its own") {
		t.Errorf("note %q", none.note())
	}
	// A group whose files vanished (the container was removed) leaves gaps.
	gone := cgroupReader{paths: server.CgroupPaths{Dirs: map[string]string{"blkio": "/nonexistent/blkio", "cpu": "/nonexistent/cpu"}}}
	gone.read(vals)
	if len(vals) != 0 {
		t.Errorf("read of a removed group stored %v", vals)
	}
}

// sar's avgqu-sz and areq-sz from two fake /proc/diskstats readings.
func TestDiskQueueColumns(t *testing.T) {
	t.Parallel()
	datadir := t.TempDir()
	st, err := os.Stat(datadir)
	if err != nil {
		t.Fatal(err)
	}
	ma, mi := devNumbers(uint64(st.Sys().(*syscall.Stat_t).Dev))
	// Fields: reads merged sectors ms writes merged sectors ms inflight io_ms weighted_ms ...
	line := func(reads, rsec, writes, wsec, weighted int) string {
		return fmt.Sprintf("%d %d testdisk %d 0 %d 5 %d 0 %d 30 0 40 %d 0 0 0 0 6 2\n", ma, mi, reads, rsec, writes, wsec, weighted)
	}
	proc := t.TempDir()
	r := &osReader{proc: proc}
	fakeTree(t, proc, map[string]string{"diskstats": diskstatsOld + line(10, 80, 20, 160, 1000), "stat": "cpu 1 1 1 1 1 1 1 1\n"})
	if note := r.resolveDisk(datadir); !r.hasDisk {
		t.Fatalf("no disk: %s", note)
	}
	var samples []Sample
	for i, l := range []string{line(10, 80, 20, 160, 1000), line(30, 240, 220, 1760, 4000), line(30, 240, 220, 1760, 4000)} {
		fakeTree(t, proc, map[string]string{"diskstats": diskstatsOld + l})
		vals := map[string]float64{}
		r.read(vals)
		r.readDiskQueue(vals)
		samples = append(samples, Sample{T: time.Duration(i) * 2 * time.Second, Values: vals})
	}
	rows := Rates(samples)
	// 3000 ms of weighted time in 2 s: 1.5 requests in the queue on average;
	// 1760 sectors over 220 IOs: 880 KiB / 220 = 4 KiB per request.
	for _, c := range []struct {
		row  int
		col  string
		want float64
	}{{0, "disk_avgqu_sz", 1.5}, {0, "disk_avg_req_kb", 4}, {1, "disk_avgqu_sz", 0}, {1, "disk_avg_req_kb", 0}} {
		if got := rows[c.row].Get(c.col); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("row %d %s = %v, want %v", c.row, c.col, got, c.want)
		}
	}
	// A 4.x kernel's 14-field line still has the weighted time.
	if w, ok := diskWeightedMs(diskstatsOld, 8, 1); !ok || w != 950 {
		t.Errorf("old kernel weighted ms = %v %v, want 950", w, ok)
	}
	if _, ok := diskWeightedMs("254 0 vda 1 2 3", 254, 0); ok {
		t.Error("a short line gave a value")
	}
}
