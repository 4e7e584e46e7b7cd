package observe

import (
	"math"
	"strings"
	"testing"
	"time"
)

// ioRows are rows of other IO and the server's own (cgroup KiB/s read and
// written, or NaN: then server_io_kb_s carries it).
func ioRows(other, cgRead, cgWrite, procIO []float64) []Row {
	rows := make([]Row, len(other))
	for i := range other {
		v := make([]float64, len(columns))
		for j := range v {
			v[j] = math.NaN()
		}
		v[columnIndex["disk_other_kb_s"]] = other[i]
		if cgRead != nil {
			v[columnIndex["cg_read_kb_s"]], v[columnIndex["cg_write_kb_s"]] = cgRead[i], cgWrite[i]
		}
		if procIO != nil {
			v[columnIndex["server_io_kb_s"]] = procIO[i]
		}
		rows[i] = Row{T: time.Duration(i+1) * time.Second, Dt: time.Second, Values: v}
	}
	return rows
}

func TestOtherIODominated(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	cases := []struct {
		name                    string
		other, cgR, cgW, procIO []float64
		want                    []bool
	}{
		// The stall: other IO rising 21x (4198 -> 86066 KiB/s).
		{"a burst beside a quiet server", []float64{4198, 4000, 86066, 90000, 4100, 4300},
			[]float64{0, 0, 0, 0, 0, 0}, []float64{400, 420, 100, 90, 410, 400}, nil,
			[]bool{false, false, true, true, false, false}},
		{"the server's own IO larger than the burst", []float64{100, 100, 5000, 100, 120},
			[]float64{0, 0, 0, 0, 0}, []float64{300, 300, 20000, 300, 300}, nil,
			[]bool{false, false, false, false, false}},
		{"below 1 MiB/s is never the host's", []float64{10, 10, 900, 10, 10},
			nil, nil, []float64{0, 0, 0, 0, 0},
			[]bool{false, false, false, false, false}},
		{"steady neighbours are not a burst", []float64{5000, 5200, 5100, 4900, 5000},
			nil, nil, []float64{100, 100, 100, 100, 100},
			[]bool{false, false, false, false, false}},
		{"no cgroup: the process's IO counts", []float64{200, 200, 30000, 200, 200},
			nil, nil, []float64{500, 500, 20000, 500, 500},
			[]bool{false, false, false, false, false}},
		{"no column", []float64{nan, nan, nan},
			nil, nil, nil,
			[]bool{false, false, false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := OtherIODominated(ioRows(tc.other, tc.cgR, tc.cgW, tc.procIO))
			for i := range tc.want {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// A stall in the seconds other IO dominated is the host's; the same stall
// without that evidence is the server's.
func TestDetectStallsOtherIO(t *testing.T) {
	t.Parallel()
	tps := []float64{100, 98, 102, 99, 101, 100, 5, 3, 4, 100, 99, 101, 100, 98, 102, 100}
	io := make([]bool, len(tps))
	io[6], io[7], io[8] = true, true, true
	without := DetectStalls(tps, time.Second, StallOptions{})
	with := DetectStalls(tps, time.Second, StallOptions{OtherIO: io})
	if without.Count != 1 || without.HostIODips != 0 {
		t.Fatalf("without other IO: %s", without.Text)
	}
	if with.Count != 0 || with.HostIODips != 1 {
		t.Fatalf("with other IO: %s", with.Text)
	}
	if !strings.Contains(with.Text, "1 dip while other processes' IO took the disk not counted") {
		t.Errorf("text %q", with.Text)
	}
	// Other IO in only one of three stalled seconds, not the deepest: the
	// server's.
	part := make([]bool, len(tps))
	part[6] = true
	if r := DetectStalls(tps, time.Second, StallOptions{OtherIO: part}); r.Count != 1 {
		t.Errorf("other IO in 1 of 3 seconds made it the host's: %s", r.Text)
	}
}
