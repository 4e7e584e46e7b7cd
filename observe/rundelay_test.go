package observe

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func runDelayRows(pairs [][2]float64) []Row {
	rows := make([]Row, len(pairs))
	for i, p := range pairs {
		v := make([]float64, len(columns))
		for j := range v {
			v[j] = math.NaN()
		}
		v[columnIndex["run_delay_server_pct"]] = p[0]
		v[columnIndex["run_delay_client_pct"]] = p[1]
		rows[i] = Row{T: time.Duration(i+1) * time.Second, Dt: time.Second, Values: v}
	}
	return rows
}

func TestStarved(t *testing.T) {
	t.Parallel()
	rows := runDelayRows([][2]float64{{60, 30}, {70, 20}, {160, 220}, {50, 40}, {math.NaN(), 10}, {90, 100}, {30, 20}})
	got := Starved(rows)
	want := []bool{false, false, true, false, false, true, false}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: starved %v, want %v", i, got[i], want[i])
		}
	}
	// An idle host: twice a tiny median is not starvation.
	for i, s := range Starved(runDelayRows([][2]float64{{1, 1}, {1, 1}, {10, 10}})) {
		if s {
			t.Errorf("idle row %d starved", i)
		}
	}
}

// A control cell recorded beside four other jobs (others used 150-199 % of
// the 2 CPUs): tps fell near zero for 3 s while the load's threads waited
// to run; without the run delay that was "1 stall to zero".
func TestDetectStallsHostStarved(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/stalls-control-starved.txt")
	if err != nil {
		t.Fatal(err)
	}
	var tps []float64
	var pairs [][2]float64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		var x [3]float64
		for i := range x {
			x[i], _ = strconv.ParseFloat(f[i], 64)
		}
		tps = append(tps, x[0])
		pairs = append(pairs, [2]float64{x[1], x[2]})
	}
	blind := DetectStalls(tps, time.Second, StallOptions{})
	if blind.Count == 0 {
		t.Fatalf("without run delay: %q, want the dip called a stall (the recording shows one)", blind.Text)
	}
	r := DetectStalls(tps, time.Second, StallOptions{Starved: Starved(runDelayRows(pairs))})
	if r.Count != 0 || r.HostDips == 0 || !strings.Contains(r.Text, "while the host took the CPUs") {
		t.Errorf("with run delay: %q (count %d, host dips %d), want no stalls and the host's dips named", r.Text, r.Count, r.HostDips)
	}
}
