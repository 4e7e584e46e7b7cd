package observe

import (
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// steady returns n intervals around level with ±1 % seeded noise.
func steady(n int, level float64, seed int64) []float64 {
	rng := rand.New(rand.NewSource(seed))
	s := make([]float64, n)
	for i := range s {
		s[i] = level * (1 + 0.01*(rng.Float64()*2-1))
	}
	return s
}

// dip sets the intervals [at, at+length) to v.
func dip(s []float64, v float64, length int, at ...int) []float64 {
	for _, a := range at {
		for i := a; i < a+length && i < len(s); i++ {
			s[i] = v
		}
	}
	return s
}

func TestDetectStalls(t *testing.T) {
	t.Parallel()
	noise := func(n int, seed int64) []float64 {
		rng := rand.New(rand.NewSource(seed))
		s := make([]float64, n)
		for i := range s {
			s[i] = 1000 * (1 + 0.12*rng.NormFloat64())
		}
		return s
	}
	every := func(n, first, period int) []int {
		var at []int
		for i := first; i < n; i += period {
			at = append(at, i)
		}
		return at
	}
	cases := []struct {
		name      string
		tps       []float64
		step      time.Duration
		opt       StallOptions
		count     int
		zeros     int
		period    float64 // seconds; 0 = none
		confirmed bool
		starts    []int
		lead      int
		trail     int
		text      string // substring
	}{
		{
			name:  "periodic zeros every 6 s for 1 s",
			tps:   dip(steady(60, 1000, 1), 0, 1, every(60, 3, 6)...),
			count: 10, zeros: 10, period: 6, confirmed: true,
			starts: every(60, 3, 6),
			text:   "10 stalls to zero, every 6.0 s, longest 1 s, total 10 s",
		},
		{
			name:  "periodic dips to 30 % every 10 s for 2 s",
			tps:   dip(steady(50, 1000, 2), 300, 2, every(50, 4, 10)...),
			count: 5, zeros: 0, period: 10, confirmed: true,
			starts: every(50, 4, 10),
			text:   "5 stalls (dips, none to zero), every 10.0 s, longest 2 s",
		},
		{
			name:  "random noise has no stalls",
			tps:   noise(120, 3),
			count: 0, text: "no stalls",
		},
		{
			name:  "irregular stalls have no period",
			tps:   dip(steady(80, 1000, 4), 0, 1, 5, 9, 30, 33, 70),
			count: 5, zeros: 5, period: 0,
			starts: []int{5, 9, 30, 33, 70},
			text:   "5 stalls to zero, irregular, longest 1 s",
		},
		{
			name:  "trailing drain is ignored",
			tps:   append(steady(30, 1000, 5), 200, 0),
			count: 0, trail: 2, text: "no stalls",
		},
		{
			name:  "a low run to the end longer than a drain is a stall",
			tps:   append(steady(30, 1000, 5), 0, 0, 0, 0),
			count: 1, zeros: 1, starts: []int{30}, text: "1 stall to zero, longest 4 s",
		},
		{
			name:  "frozen for most of the window: the running rate is the baseline",
			tps:   []float64{1000, 980, 0, 0, 0, 0, 0, 0},
			count: 1, zeros: 1, starts: []int{2}, text: "1 stall to zero, longest 6 s",
		},
		{
			name:  "single low first interval is ramp-up",
			tps:   append([]float64{300}, steady(30, 1000, 6)...),
			count: 0, lead: 1, text: "no stalls",
		},
		{
			name:  "a longer low start is a stall",
			tps:   append([]float64{0, 0}, steady(30, 1000, 7)...),
			count: 1, zeros: 1, starts: []int{0},
			text: "1 stall to zero, longest 2 s",
		},
		{
			name:  "single stall has no period",
			tps:   dip(steady(40, 1000, 8), 10, 3, 17),
			count: 1, zeros: 1, starts: []int{17},
			text: "1 stall to zero, longest 3 s",
		},
		{
			name:  "two stalls give a gap, not a confirmed period",
			tps:   dip(steady(40, 1000, 9), 0, 1, 10, 25),
			count: 2, zeros: 2, period: 15, starts: []int{10, 25},
			text: "2 stalls to zero, 15.0 s apart",
		},
		{
			name:  "period with jitter",
			tps:   dip(steady(56, 1000, 10), 0, 1, 5, 11, 16, 23, 29, 34, 41, 47),
			count: 8, zeros: 8, period: 6, confirmed: true,
			starts: []int{5, 11, 16, 23, 29, 34, 41, 47},
			text:   "every 6.0 s",
		},
		{
			name:  "min episode filters one-interval dips",
			tps:   dip(dip(steady(40, 1000, 11), 0, 1, 5, 15), 0, 2, 25),
			opt:   StallOptions{MinEpisode: 2},
			count: 1, zeros: 1, starts: []int{25},
		},
		{
			name:  "sub-second step scales seconds",
			tps:   dip(steady(84, 500, 12), 0, 2, every(84, 6, 8)...),
			step:  250 * time.Millisecond,
			count: 10, zeros: 10, period: 2, confirmed: true,
			starts: every(84, 6, 8),
			text:   "every 2.0 s, longest 0.5 s, total 5 s",
		},
		{
			name:  "mixed dips and zeros",
			tps:   dip(dip(steady(40, 1000, 13), 0, 1, 10), 400, 3, 30),
			count: 2, zeros: 1, period: 20,
			text: "2 stalls (1 to zero)",
		},
		{
			// Brief shallow dips at a steady period are not noise.
			name:  "periodic brief dips are stalls",
			tps:   dip(steady(60, 1000, 17), 400, 1, 5, 20, 35, 50),
			count: 4, period: 15, confirmed: true, starts: []int{5, 20, 35, 50},
			text: "4 stalls (dips, none to zero), every 15.0 s",
		},
		{
			// On a busy host one second at 40 % is noise, not a stall.
			name:  "a brief shallow dip is not a stall",
			tps:   dip(dip(steady(40, 1000, 13), 0, 1, 10), 400, 1, 30),
			count: 1, zeros: 1, starts: []int{10},
			text: "1 stall to zero, longest 1 s; 1 brief shallow dip ignored",
		},
		{
			name:  "brief shallow dips alone",
			tps:   dip(steady(60, 1000, 15), 420, 1, 7, 23, 50),
			count: 0, text: "no stalls (3 brief shallow dips ignored)",
		},
		{
			// The case: stalls to zero at 58, 118 and 178 s over
			// 200 s, and a 3 s shallow dip at 90 s that broke the rule that
			// every gap agree.
			name:  "period over the deep stalls, a shallow dip between",
			tps:   dip(dip(steady(200, 1000, 16), 0, 5, 58, 118, 178), 450, 3, 90),
			count: 4, zeros: 3, period: 60, confirmed: true,
			starts: []int{58, 90, 118, 178},
			text:   "4 stalls (3 to zero), every 60.0 s (the deep ones), longest 5 s",
		},
		{
			name:  "missing intervals are not stalls",
			tps:   dip(steady(30, 1000, 14), math.NaN(), 3, 10),
			count: 0, text: "no stalls",
		},
		{name: "empty", tps: nil, text: "no stalls"},
		{name: "all zero", tps: make([]float64, 10), text: "no throughput"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			step := c.step
			if step == 0 {
				step = time.Second
			}
			r := DetectStalls(c.tps, step, c.opt)
			zeros := 0
			var starts []int
			for _, ep := range r.Episodes {
				if ep.Zero {
					zeros++
				}
				starts = append(starts, ep.Start)
			}
			if r.Count != c.count || len(r.Episodes) != c.count || zeros != c.zeros {
				t.Errorf("count %d (episodes %d), zeros %d; want %d, %d: %+v", r.Count, len(r.Episodes), zeros, c.count, c.zeros, r)
			}
			if c.starts != nil && !equalInts(starts, c.starts) {
				t.Errorf("onsets %v, want %v", starts, c.starts)
			}
			if math.Abs(r.PeriodSeconds-c.period) > 1e-9 || r.PeriodConfirmed != c.confirmed {
				t.Errorf("period %.3f confirmed %v (acf %.2f); want %.3f, %v", r.PeriodSeconds, r.PeriodConfirmed, r.Autocorr, c.period, c.confirmed)
			}
			if r.LeadingIgnored != c.lead || r.TrailingIgnored != c.trail {
				t.Errorf("ignored lead %d trail %d, want %d %d", r.LeadingIgnored, r.TrailingIgnored, c.lead, c.trail)
			}
			if !strings.Contains(r.Text, c.text) {
				t.Errorf("text %q, want it to contain %q", r.Text, c.text)
			}
		})
	}
}

// Random stalls at random gaps must not produce a confirmed period, over
// many seeds.
func TestDetectStallsRandomOnsetsNoConfirmedPeriod(t *testing.T) {
	t.Parallel()
	confirmed := 0
	for seed := int64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewSource(seed))
		s := steady(120, 1000, seed)
		for i := 2 + rng.Intn(5); i < 115; i += 2 + rng.Intn(25) {
			s[i] = 0
		}
		if r := DetectStalls(s, time.Second, StallOptions{}); r.PeriodConfirmed {
			confirmed++
		}
	}
	// A random sequence of gaps can look regular by chance; it must be rare.
	if confirmed > 10 {
		t.Fatalf("%d of 200 random-onset series got a confirmed period", confirmed)
	}
}

func TestDetectStallsEpisodeFields(t *testing.T) {
	t.Parallel()
	s := dip(steady(30, 1000, 1), 0, 2, 10)
	s[11] = 30
	r := DetectStalls(s, time.Second, StallOptions{})
	if len(r.Episodes) != 1 {
		t.Fatalf("episodes %+v", r.Episodes)
	}
	ep := r.Episodes[0]
	if ep.Start != 10 || ep.End != 12 || ep.Min != 0 || !ep.Zero {
		t.Fatalf("episode %+v", ep)
	}
	if r.TotalSeconds != 2 || r.LongestSeconds != 2 || math.Abs(r.Median-1000) > 10 {
		t.Fatalf("report %+v", r)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestMovedAtOnsets(t *testing.T) {
	t.Parallel()
	idx := func(name string) int {
		for i, c := range Columns() {
			if c == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	rows := make([]Row, 20)
	for i := range rows {
		v := make([]float64, len(Columns()))
		for j := range v {
			v[j] = math.NaN()
		}
		v[idx("handler_commits_s")] = 1000
		v[idx("data_fsyncs_s")] = 100
		v[idx("threads_running")] = 2
		v[idx("row_lock_current_waits")] = 0
		v[idx("disk_util_pct")] = 40
		v[idx("cpu_server_pct")] = 30
		rows[i] = Row{T: time.Duration(i+1) * time.Second, Values: v}
	}
	eps := []Episode{{Start: 5, End: 6}, {Start: 11, End: 13}, {Start: 17, End: 18}}
	for _, ep := range eps {
		v := rows[ep.Start].Values
		v[idx("handler_commits_s")] = 0
		v[idx("data_fsyncs_s")] = 310
		v[idx("threads_running")] = 9
		v[idx("row_lock_current_waits")] = 4
		v[idx("disk_util_pct")] = 55 // ×1.4: not marked
		v[idx("cpu_server_pct")] = 1
	}
	rows[11].Values[idx("data_fsyncs_s")] = math.NaN() // a gap at one onset
	rows[12].Values[idx("data_fsyncs_s")] = 5000       // inside an episode, not an onset: ignored
	got := MovedAtOnsets(rows, eps)
	want := []string{
		"row_lock_current_waits ↑ (0 → 4)",
		"threads_running ×4.5 (2 → 9)",
		"data_fsyncs_s ×3.1 (100 → 310)",
		"cpu_server_pct ×0.03 (30 → 1)",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if MovedAtOnsets(rows, nil) != nil || MovedAtOnsets(nil, eps) != nil {
		t.Fatal("moves without episodes or rows")
	}
}
