package observe

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A 6.x kernel (20 fields), with a partition, device-mapper and zram.
const diskstatsNew = `   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 254       0 vda 36409 6479 1544346 8228 20088 10791 2056872 10308 0 8692 19265 4278 0 773688 443 3925 284
 254       1 vda1 36000 6400 1500000 8000 20000 10700 2050000 10200 0 8600 19000 4278 0 773688 443 0 0
 253       0 dm-0 100 0 800 5 200 0 1600 40 2 60 45 0 0 0 0 7 1
 259       3 nvme0n1p3 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17
`

// A 4.x kernel: 14 fields, no discard or flush counters.
const diskstatsOld = `   8       0 sda 500 10 4000 300 700 20 9000 800 1 900 1100
   8       1 sda1 400 10 3000 250 600 20 8000 700 0 850 950
`

func TestParseDiskstats(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text         string
		major, minor uint32
		ok           bool
		want         diskStat
	}{
		{diskstatsNew, 254, 0, true, diskStat{Name: "vda", Reads: 36409, ReadSectors: 1544346, ReadMs: 8228,
			Writes: 20088, WriteSectors: 2056872, WriteMs: 10308, IOMs: 8692, Flushes: 3925, HasFlushes: true}},
		{diskstatsNew, 254, 1, true, diskStat{Name: "vda1", Reads: 36000, ReadSectors: 1500000, ReadMs: 8000,
			Writes: 20000, WriteSectors: 2050000, WriteMs: 10200, IOMs: 8600, Flushes: 0, HasFlushes: true}},
		{diskstatsNew, 253, 0, true, diskStat{Name: "dm-0", Reads: 100, ReadSectors: 800, ReadMs: 5,
			Writes: 200, WriteSectors: 1600, WriteMs: 40, IOMs: 60, Flushes: 7, HasFlushes: true}},
		{diskstatsNew, 259, 3, true, diskStat{Name: "nvme0n1p3", Reads: 1, ReadSectors: 3, ReadMs: 4,
			Writes: 5, WriteSectors: 7, WriteMs: 8, IOMs: 10, Flushes: 16, HasFlushes: true}},
		{diskstatsOld, 8, 1, true, diskStat{Name: "sda1", Reads: 400, ReadSectors: 3000, ReadMs: 250,
			Writes: 600, WriteSectors: 8000, WriteMs: 700, IOMs: 850}},
		{diskstatsNew, 0, 45, false, diskStat{}},       // overlay: anonymous device
		{diskstatsNew, 25, 40, false, diskStat{}},      // 2540 must not match 254:0
		{"254 0 vda x y z", 254, 0, false, diskStat{}}, // short and garbled
	}
	for _, c := range cases {
		got, ok := parseDiskstats(c.text, c.major, c.minor)
		if ok != c.ok || got != c.want {
			t.Errorf("%d:%d: got %+v %v, want %+v %v", c.major, c.minor, got, ok, c.want, c.ok)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	t.Parallel()
	text := "cpu  4705 150 1120 16250 520 30 25 7 0 0\ncpu0 2000 75 560 8125 260 15 12 3 0 0\nintr 123\n"
	c, err := parseProcStat(text)
	if err != nil {
		t.Fatal(err)
	}
	want := cpuTimes{User: 4705, Nice: 150, System: 1120, Idle: 16250, IOWait: 520, IRQ: 30, SoftIRQ: 25, Steal: 7}
	if c != want || c.Total() != 4705+150+1120+16250+520+30+25+7 {
		t.Fatalf("got %+v", c)
	}
	// An old kernel without steal and later fields.
	if c, err := parseProcStat("cpu 1 2 3 4 5 6 7\n"); err != nil || c.Steal != 0 || c.SoftIRQ != 7 {
		t.Fatalf("short line: %+v %v", c, err)
	}
	for _, bad := range []string{"", "intr 1\n", "cpu 1 x 3 4 5\n", "cpu 1 2\n"} {
		if _, err := parseProcStat(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParsePidStat(t *testing.T) {
	t.Parallel()
	tail := " S 1 123 123 0 -1 4194560 1000 0 0 0 250 75 0 0 20 0 30 0 100 1000000 5000"
	cases := []struct {
		text string
		want uint64
		ok   bool
	}{
		{"4242 (mariadbd)" + tail, 325, true},
		{"4242 (my (odd) name)" + tail, 325, true},
		{"4242 (a b c)" + tail, 325, true},
		{"4242 mariadbd S 1", 0, false},
		{"4242 (x) S 1 2 3", 0, false},
	}
	for _, c := range cases {
		got, err := parsePidStat(c.text)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("%q: got %d, %v", c.text, got, err)
		}
	}
}

func TestMountFor(t *testing.T) {
	t.Parallel()
	text := `22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
35 22 0:45 / /var/lib/docker/overlay2/x/merged rw,relatime - overlay overlay rw,lowerdir=a
36 22 0:46 / /tmp/tmpfs rw - tmpfs tmpfs rw
`
	for _, c := range []struct {
		major, minor   uint32
		fs, src, point string
		ok             bool
	}{
		{254, 0, "ext4", "/dev/vda", "/", true},
		{0, 45, "overlay", "overlay", "/var/lib/docker/overlay2/x/merged", true},
		{0, 46, "tmpfs", "tmpfs", "/tmp/tmpfs", true},
		{8, 1, "", "", "", false},
	} {
		fs, src, pt, ok := mountFor(text, c.major, c.minor)
		if fs != c.fs || src != c.src || pt != c.point || ok != c.ok {
			t.Errorf("%d:%d: %q %q %q %v", c.major, c.minor, fs, src, pt, ok)
		}
	}
}

func TestDevNumbers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		dev          uint64
		major, minor uint32
	}{
		{0xfe00, 254, 0},
		{0x0801, 8, 1},
		{0x10303, 259, 3}, // nvme partition
		{0x2d, 0, 45},     // overlay
	} {
		if ma, mi := devNumbers(c.dev); ma != c.major || mi != c.minor {
			t.Errorf("%#x: %d:%d, want %d:%d", c.dev, ma, mi, c.major, c.minor)
		}
	}
	// Round trip against the kernel's makedev encoding for large numbers.
	makedev := func(ma, mi uint64) uint64 {
		return (ma&0xfff)<<8 | (ma&^0xfff)<<32 | (mi & 0xff) | (mi&^0xff)<<12
	}
	for _, c := range [][2]uint32{{4095, 255}, {4096, 256}, {70000, 1 << 19}} {
		if ma, mi := devNumbers(makedev(uint64(c[0]), uint64(c[1]))); ma != c[0] || mi != c[1] {
			t.Errorf("makedev(%d,%d) → %d:%d", c[0], c[1], ma, mi)
		}
	}
}

// fakeProc builds a /proc tree with the given files.
func fakeProc(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestOSReaderResolveAndRead(t *testing.T) {
	t.Parallel()
	datadir := t.TempDir()
	st, err := os.Stat(datadir)
	if err != nil {
		t.Fatal(err)
	}
	ma, mi := devNumbers(uint64(st.Sys().(*syscall.Stat_t).Dev))
	line := fmt.Sprintf("%d %d testdisk 10 0 80 5 20 0 160 30 0 40 50 0 0 0 0 6 2\n", ma, mi)
	pidTail := " S 1 1 1 0 -1 0 0 0 0 0 %d %d 0 0 20 0 1 0 1 1 1"
	proc := fakeProc(t, map[string]string{
		"diskstats":      diskstatsOld + line,
		"stat":           "cpu  100 10 50 800 20 5 5 10 0 0\n",
		"77/stat":        "77 (mariadbd)" + fmt.Sprintf(pidTail, 300, 100),
		"self/stat":      "1 (observe.test)" + fmt.Sprintf(pidTail, 40, 2),
		"self/mountinfo": fmt.Sprintf("1 0 %d:%d / / rw - ext4 /dev/testdisk rw\n", ma, mi),
	})
	r := &osReader{proc: proc, serverPID: 77}
	note := r.resolveDisk(datadir)
	if !r.hasDisk || !strings.Contains(note, "testdisk") || !strings.Contains(note, "ext4 /dev/testdisk") {
		t.Fatalf("note %q, hasDisk %v", note, r.hasDisk)
	}
	vals := map[string]float64{}
	r.read(vals)
	want := map[string]float64{
		"os.disk.reads": 10, "os.disk.read_sectors": 80, "os.disk.read_ms": 5,
		"os.disk.writes": 20, "os.disk.write_sectors": 160, "os.disk.write_ms": 30,
		"os.disk.io_ms": 40, "os.disk.flushes": 6,
		"os.cpu.user": 110, "os.cpu.system": 60, "os.cpu.iowait": 20, "os.cpu.steal": 10, "os.cpu.total": 1000,
		"os.server.ticks": 400, "os.server.pid": 77, "os.client.ticks": 42,
	}
	for k, v := range want {
		if vals[k] != v {
			t.Errorf("%s = %v, want %v", k, vals[k], v)
		}
	}
	if len(vals) != len(want) {
		t.Errorf("extra keys: %v", vals)
	}

	// No diskstats line for the device: empty disk columns and a note why.
	proc2 := fakeProc(t, map[string]string{"diskstats": diskstatsOld, "stat": "cpu 1 1 1 1 1 1 1 1\n"})
	r2 := &osReader{proc: proc2}
	note = r2.resolveDisk(datadir)
	if r2.hasDisk || !strings.Contains(note, "no /proc/diskstats line") {
		t.Fatalf("note %q", note)
	}
	vals = map[string]float64{}
	r2.read(vals)
	if _, ok := vals["os.disk.reads"]; ok {
		t.Fatal("disk values without a disk")
	}
	if note := (&osReader{proc: proc2}).resolveDisk(""); !strings.Contains(note, "no datadir") {
		t.Fatalf("note %q", note)
	}
}

// The real /proc on this host: the datadir under the temp dir resolves to a
// device (unless the temp dir is virtual), and CPU values are read.
func TestOSReaderRealProc(t *testing.T) {
	t.Parallel()
	r := &osReader{proc: "/proc", serverPID: os.Getpid()}
	note := r.resolveDisk(t.TempDir())
	t.Log(note)
	vals := map[string]float64{}
	r.read(vals)
	for _, k := range []string{"os.cpu.total", "os.server.ticks", "os.client.ticks"} {
		if _, ok := vals[k]; !ok {
			t.Errorf("%s missing: %v", k, vals)
		}
	}
	if r.hasDisk {
		if _, ok := vals["os.disk.reads"]; !ok {
			t.Errorf("disk resolved but not read: %v", vals)
		}
	}
}

// A topology's other nodes (PeerPIDs) are the server's own load: their CPU
// and IO leave cpu_other_pct and disk_other_kb_s, which replication.toml's
// cells counted as contention (69% of a CPU in every cell); a node that
// cannot be read, or a node set that changed, leaves the interval empty.
func TestPeersAreNotOtherLoad(t *testing.T) {
	t.Parallel()
	pidTail := " S 1 1 1 0 -1 0 0 0 0 0 %d %d 0 0 20 0 1 0 1 1 1"
	io := "rchar: 0\nwchar: 0\nsyscr: 0\nsyscw: 0\nread_bytes: %d\nwrite_bytes: %d\ncancelled_write_bytes: 0\n"
	sample := func(cpuUser, node2, node3, nodeIO int, peers []int) map[string]float64 {
		proc := fakeProc(t, map[string]string{
			"stat":      fmt.Sprintf("cpu  %d 0 0 800 0 0 0 0 0 0\n", cpuUser),
			"77/stat":   "77 (mariadbd)" + fmt.Sprintf(pidTail, 100, 0),
			"77/io":     fmt.Sprintf(io, 0, 0),
			"78/stat":   "78 (mariadbd)" + fmt.Sprintf(pidTail, node2, 0),
			"78/io":     fmt.Sprintf(io, 0, nodeIO),
			"79/stat":   "79 (mariadbd)" + fmt.Sprintf(pidTail, node3, 0),
			"79/io":     fmt.Sprintf(io, nodeIO, 0),
			"self/stat": "1 (observe.test)" + fmt.Sprintf(pidTail, 10, 0),
		})
		r := &osReader{proc: proc, serverPID: 77, peerPIDs: peers}
		vals := map[string]float64{}
		r.read(vals)
		r.readServerIO(vals)
		return vals
	}
	// One second: the host's busy CPU grows by 150 ticks (150% of a CPU),
	// of which the two other nodes took 70 and 50, the server none: 30%
	// is other load, not 150%.
	prev := sample(1000, 100, 100, 0, []int{78, 79})
	cur := sample(1150, 170, 150, 1<<20, []int{78, 79})
	if got := otherCPU(prev, cur, 1); math.Abs(got-30) > 1e-9 {
		t.Errorf("other CPU with peers = %v, want 30", got)
	}
	if got := peers(prev, cur, 1, "os.peers.io_bytes"); got != 2048 {
		t.Errorf("peers' IO = %v KiB/s, want 2048", got)
	}
	// Without peers the same seconds are 150% other load (what the
	// sampler said before).
	if got := otherCPU(sample(1000, 100, 100, 0, nil), sample(1150, 170, 150, 0, nil), 1); math.Abs(got-150) > 1e-9 {
		t.Errorf("other CPU without peers = %v, want 150", got)
	}
	// A node that cannot be read (it died) or a changed node set: no value.
	if got := otherCPU(prev, sample(1150, 170, 150, 0, []int{78, 80}), 1); !math.IsNaN(got) {
		t.Errorf("other CPU with a node gone = %v, want NaN", got)
	}
	if got := otherCPU(prev, sample(1150, 170, 150, 0, []int{78}), 1); !math.IsNaN(got) {
		t.Errorf("other CPU with a changed node set = %v, want NaN", got)
	}
}
