package observe

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"benchmatrix/record/parts"
)

// StallOptions tunes DetectStalls. The zero value means the defaults.
type StallOptions struct {
	// Fraction: an interval below Fraction × median is stalled (default 0.5).
	Fraction float64
	// ZeroFraction: an episode whose minimum is at or below
	// ZeroFraction × median is a stall "to zero" (default 0.05).
	ZeroFraction float64
	// MinEpisode is the shortest run of stalled intervals that counts as an
	// episode (default 1).
	MinEpisode int
	// Deep: an episode that falls to Deep × median or lower is a stall
	// however short (default 0.25).
	Deep float64
	// MinShallow is the shortest episode that is a stall without being deep
	// (default 2 intervals): a one-second dip to 40 % on a busy host is
	// noise, two seconds at 40 % or one second at 10 % is a stall. Dips
	// below it are counted in StallReport.Dips, not reported as stalls.
	MinShallow int
	// Window: each interval is judged against the median of the ±Window
	// intervals around it (default 30), not only the whole window's.
	Window int
	// Starved marks the intervals in which the host took the CPUs from the
	// load (rundelay.go: Starved); nil when unknown. An episode whose
	// deepest interval and at least half of whose intervals are starved is
	// the host's, not the server's: it is counted in StallReport.HostDips,
	// not reported as a stall.
	Starved []bool
	// OtherIO marks the intervals in which other processes' IO dominated
	// the datadir's device (otherio.go: OtherIODominated); nil when
	// unknown. An episode not the host's by Starved whose deepest interval
	// and at least half of whose intervals are marked is the host's too:
	// counted in StallReport.HostIODips.
	OtherIO []bool
}

func (o StallOptions) withDefaults() StallOptions {
	if o.Fraction <= 0 {
		o.Fraction = 0.5
	}
	if o.ZeroFraction <= 0 {
		o.ZeroFraction = 0.05
	}
	if o.MinEpisode <= 0 {
		o.MinEpisode = 1
	}
	if o.Deep <= 0 {
		o.Deep = 0.1
	}
	if o.MinShallow <= 0 {
		o.MinShallow = 3
	}
	if o.Window <= 0 {
		o.Window = 30
	}
	return o
}

// Episode is one stall: a maximal run of stalled intervals (parts.Episode).
type Episode = parts.Episode

// StallReport is what DetectStalls found (parts.StallReport, in run.json).
type StallReport = parts.StallReport

// DetectStalls finds stalls in a per-interval throughput series taken every
// step. It is a pure function.
//
// The rules, in order:
//   - the median is taken over all non-NaN intervals; an interval is low
//     when its value is below Fraction × median (NaN is never low);
//   - a low run reaching the last interval is the drain after the end of
//     the window (in-flight work finishing, a partial last interval) and is
//     left out, as anchors.md §3.6 asks;
//   - a low first interval followed by a normal one is ramp-up (a partial
//     first interval, connections warming) and is left out: with nothing
//     before it, a stall cannot be told from a slow start. A longer low run
//     at the start is reported;
//   - episodes are the remaining maximal low runs of at least MinEpisode
//     intervals; dips that never reach zero count too (Zero=false);
//   - with ≥ 2 episodes the period is the median gap between onsets, kept
//     only when every gap is within max(25 %, 1 step) of it; with ≥ 3 it is
//     confirmed when the autocorrelation of the series within one lag of the
//     period is a local peak above the 2/√N white-noise band.
//
// maxDrain is the longest low run at the end of a window that is taken for
// the workers' drain rather than a stall.
const maxDrain = 2

func DetectStalls(tps []float64, step time.Duration, opt StallOptions) StallReport {
	opt = opt.withDefaults()
	if step <= 0 {
		step = time.Second
	}
	sec := step.Seconds()
	var r StallReport
	r.Median = median(finite(tps))
	if !(r.Median > 0) {
		// More than half the window at zero (a server frozen for most of
		// it): the throughput it had while it ran is the baseline.
		r.Median = median(positive(tps))
	}
	n := len(tps)
	if n == 0 || !(r.Median > 0) {
		r.Median = 0 // not NaN: no interval had throughput (a server frozen throughout)
		r.Text = "no stalls"
		if n > 0 {
			r.Text = "no throughput"
		}
		return r
	}
	// The level each interval is judged against: the median of the ±Window
	// intervals around it (a busy host shifts the level for minutes; a
	// stall of a few seconds does not move a minute's median), never above
	// the whole window's median, and the whole window's where the local one
	// is zero (a server frozen for most of it).
	level := localLevels(tps, opt.Window, r.Median)
	low := make([]bool, n)
	for i, v := range tps {
		low[i] = v < opt.Fraction*level[i] // false for NaN
	}
	end := n
	for end > 0 && low[end-1] {
		end--
	}
	if n-end > maxDrain {
		end = n // longer than a drain: a stall that lasts to the end
	}
	r.TrailingIgnored = n - end
	begin := 0
	if end >= 2 && low[0] && !low[1] {
		begin = 1
		r.LeadingIgnored = 1
	}
	var dips []Episode
	for i := begin; i < end; {
		if !low[i] {
			i++
			continue
		}
		j := i
		ep := Episode{Start: i, Min: math.Inf(1)}
		depth := math.Inf(1) // lowest value / level
		for j < end && low[j] {
			ep.Min = math.Min(ep.Min, tps[j])
			depth = math.Min(depth, tps[j]/level[j])
			ep.Deficit += math.Max(0, 1-tps[j]/level[j])
			j++
		}
		ep.End = j
		ep.Zero = ep.Min <= opt.ZeroFraction*r.Median
		ep.Deep = depth <= opt.Deep
		switch {
		case j-i < opt.MinEpisode:
		case hostsDip(opt.Starved, tps, i, j):
			r.HostDips++
		case hostsDip(opt.OtherIO, tps, i, j):
			r.HostIODips++
		case !ep.Deep && j-i < opt.MinShallow:
			dips = append(dips, ep)
		default:
			r.Episodes = append(r.Episodes, ep)
		}
		i = j
	}
	// Brief shallow dips are noise unless they recur at a steady period
	// (noise does not).
	if len(dips) >= 3 && periodOf(dips) > 0 {
		r.Episodes = append(r.Episodes, dips...)
		sort.Slice(r.Episodes, func(a, b int) bool { return r.Episodes[a].Start < r.Episodes[b].Start })
		dips = nil
	}
	r.Dips = len(dips)
	r.Count = len(r.Episodes)
	for _, ep := range r.Episodes {
		d := float64(ep.End-ep.Start) * sec
		r.TotalSeconds += d
		r.LongestSeconds = math.Max(r.LongestSeconds, d)
	}
	lag := periodOf(r.Episodes)
	periodic := r.Count
	// Noise between periodic stalls (a busy host's dips, even deep ones)
	// must not hide the period: try the deep stalls alone, then the
	// strongest ones (by the throughput they lost), as many as still keep
	// a period, at least 3.
	if lag == 0 {
		var deep []Episode
		for _, ep := range r.Episodes {
			if ep.Deep {
				deep = append(deep, ep)
			}
		}
		if len(deep) >= 3 && len(deep) < r.Count {
			if lag = periodOf(deep); lag > 0 {
				r.PeriodDeep, periodic = true, len(deep)
			}
		}
	}
	if lag == 0 && r.Count > 3 {
		if k, l := strongestPeriod(r.Episodes); k > 0 {
			lag, periodic, r.PeriodStrongest = l, k, k
		}
	}
	r.PeriodSeconds = lag * sec
	if periodic >= 3 && lag > 0 {
		r.PeriodConfirmed, r.Autocorr = acfPeak(tps[begin:end], r.Median, int(math.Round(lag)))
	}
	r.Text = stallText(r)
	return r
}

// strongestPeriod finds the largest k (3 ≤ k < len(eps)) such that the k
// episodes that lost the most throughput stand apart from the rest (each
// lost at least 1.25 times what the strongest of the others did: a class of
// their own, not a subset picked to fit) and, in time order, have a
// period; it returns k and the period, or 0, 0.
func strongestPeriod(eps []Episode) (int, float64) {
	const strongestGap = 1.25
	order := make([]int, len(eps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return eps[order[a]].Deficit > eps[order[b]].Deficit })
	for k := len(eps) - 1; k >= 3; k-- {
		if eps[order[k-1]].Deficit < strongestGap*eps[order[k]].Deficit {
			continue
		}
		top := append([]int(nil), order[:k]...)
		sort.Ints(top)
		sub := make([]Episode, k)
		for i, idx := range top {
			sub[i] = eps[idx]
		}
		if lag := periodOf(sub); lag > 0 {
			return k, lag
		}
	}
	return 0, 0
}

// localLevels is, per interval, the median of the finite values within
// ±w of it, capped at global; global where that is not positive.
func localLevels(x []float64, w int, global float64) []float64 {
	out := make([]float64, len(x))
	for i := range x {
		lo, hi := max(i-w, 0), min(i+w+1, len(x))
		m := median(finite(x[lo:hi]))
		if !(m > 0) || m > global {
			m = global
		}
		out[i] = m
	}
	return out
}

// periodOf is the median gap between the episodes' onsets, in steps, when
// every gap is within max(25 %, 1 step) of it; 0 otherwise.
func periodOf(eps []Episode) float64 {
	if len(eps) < 2 {
		return 0
	}
	gaps := make([]float64, 0, len(eps)-1)
	for i := 1; i < len(eps); i++ {
		gaps = append(gaps, float64(eps[i].Start-eps[i-1].Start))
	}
	med := median(gaps)
	tol := math.Max(0.25*med, 1)
	for _, g := range gaps {
		if math.Abs(g-med) > tol {
			return 0
		}
	}
	return med
}

// acfPeak reports whether the autocorrelation of x has a local peak within
// one lag of want, above the white-noise band, and the value there. NaN
// values are replaced by fill.
func acfPeak(x []float64, fill float64, want int) (bool, float64) {
	n := len(x)
	if want < 1 || want+2 >= n {
		return false, 0
	}
	acf := autocorr(x, fill, want+2)
	best := -1
	for m := max(want-1, 1); m <= want+1; m++ {
		if best < 0 || acf[m] > acf[best] {
			best = m
		}
	}
	band := 2 / math.Sqrt(float64(n))
	peak := acf[best] > acf[best-1] && acf[best] > acf[best+1] && acf[best] > band
	return peak, acf[best]
}

// autocorr returns the sample autocorrelation of x for lags 0..maxLag.
// NaN values are replaced by fill.
func autocorr(x []float64, fill float64, maxLag int) []float64 {
	n := len(x)
	y := make([]float64, n)
	mean := 0.0
	for i, v := range x {
		if math.IsNaN(v) {
			v = fill
		}
		y[i] = v
		mean += v
	}
	mean /= float64(n)
	den := 0.0
	for i := range y {
		y[i] -= mean
		den += y[i] * y[i]
	}
	out := make([]float64, maxLag+1)
	if den == 0 {
		return out
	}
	for k := 0; k <= maxLag && k < n; k++ {
		s := 0.0
		for i := 0; i+k < n; i++ {
			s += y[i] * y[i+k]
		}
		// Normalised per pair (the "unbiased" estimator): the usual
		// biased one shrinks lag k by (N-k)/N, which on a short window
		// (14 s with a 4 s period) hides a perfectly regular pattern.
		out[k] = s / float64(n-k) / (den / float64(n))
	}
	return out
}

// hostsDip reports whether the episode [i, j) is the host's: its deepest
// interval is starved, and at least half of its intervals are.
func hostsDip(starved []bool, tps []float64, i, j int) bool {
	if j > len(starved) {
		return false
	}
	n, deepest := 0, i
	for k := i; k < j; k++ {
		if starved[k] {
			n++
		}
		if tps[k] < tps[deepest] {
			deepest = k
		}
	}
	return starved[deepest] && 2*n >= j-i
}

func stallText(r StallReport) string {
	host := ""
	if r.HostDips > 0 {
		host = fmt.Sprintf("%d dip%s while the host took the CPUs (the load waited to run) not counted", r.HostDips, plural(r.HostDips))
	}
	if r.HostIODips > 0 {
		io := fmt.Sprintf("%d dip%s while other processes' IO took the disk not counted", r.HostIODips, plural(r.HostIODips))
		if host != "" {
			host += "; " + io
		} else {
			host = io
		}
	}
	if r.Count == 0 {
		var notes []string
		if r.Dips > 0 {
			notes = append(notes, fmt.Sprintf("%d brief shallow dip%s ignored", r.Dips, plural(r.Dips)))
		}
		if host != "" {
			notes = append(notes, host)
		}
		if len(notes) > 0 {
			return "no stalls (" + strings.Join(notes, "; ") + ")"
		}
		return "no stalls"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d stall", r.Count)
	if r.Count > 1 {
		b.WriteString("s")
	}
	zeros := 0
	for _, ep := range r.Episodes {
		if ep.Zero {
			zeros++
		}
	}
	switch {
	case zeros == r.Count:
		b.WriteString(" to zero")
	case zeros > 0:
		fmt.Fprintf(&b, " (%d to zero)", zeros)
	default:
		b.WriteString(" (dips, none to zero)")
	}
	deep := ""
	switch {
	case r.PeriodDeep:
		deep = " (the deep ones)"
	case r.PeriodStrongest > 0:
		deep = fmt.Sprintf(" (the %d strongest)", r.PeriodStrongest)
	}
	switch {
	case r.Count == 2 && r.PeriodSeconds > 0:
		fmt.Fprintf(&b, ", %.1f s apart", r.PeriodSeconds)
	case r.PeriodConfirmed:
		fmt.Fprintf(&b, ", every %.1f s%s", r.PeriodSeconds, deep)
	case r.PeriodSeconds > 0 && deep != "":
		fmt.Fprintf(&b, ", every ~%.1f s (%s, unconfirmed)", r.PeriodSeconds, strings.Trim(deep, " ()"))
	case r.PeriodSeconds > 0:
		fmt.Fprintf(&b, ", every ~%.1f s (unconfirmed)", r.PeriodSeconds)
	case r.Count >= 3:
		b.WriteString(", irregular")
	}
	fmt.Fprintf(&b, ", longest %s s", secText(r.LongestSeconds))
	if r.Count > 1 {
		fmt.Fprintf(&b, ", total %s s", secText(r.TotalSeconds))
	}
	if r.Dips > 0 {
		fmt.Fprintf(&b, "; %d brief shallow dip%s ignored", r.Dips, plural(r.Dips))
	}
	if host != "" {
		b.WriteString("; " + host)
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func secText(s float64) string {
	return strconv.FormatFloat(math.Round(s*10)/10, 'f', -1, 64)
}

func finite(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, v := range xs {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	return out
}

// median of xs (which it does not modify); NaN when empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// symptomColumns are throughput itself: they always fall at a stall, so
// they explain nothing.
var symptomColumns = map[string]bool{"handler_commits_s": true, "com_commit_s": true}

// MovedAtOnsets names the sampled metrics that changed markedly in the
// stall onset intervals, compared with the normal intervals, for the
// summary: e.g. "data_fsyncs_s ×3.1 (120 → 372)" or
// "row_lock_current_waits ↑ (0 → 4)". rows[i] must cover the same interval
// as the series entry i given to DetectStalls. A metric moved when the
// median of its onset values is at least twice, or at most half, the median
// of the intervals outside every episode (from zero: up to at least 1).
// The commit columns are left out (they are the symptom). Rises come first
// (candidate causes), strongest first, then falls (mostly consequences).
func MovedAtOnsets(rows []Row, episodes []Episode) []string {
	names := make([]string, len(columns))
	for j, col := range columns {
		if !symptomColumns[col.Name] {
			names[j] = col.Name
		}
	}
	moves := MovedAtOnsetsIn(names, rows, episodes)
	if len(moves) == 0 {
		return nil
	}
	out := make([]string, len(moves))
	for i, m := range moves {
		out[i] = m.Text
	}
	return out
}

// Move is one metric that moved at the stall onsets, with its strength
// (rises score above every fall).
type Move struct {
	Text  string
	Score float64
}

// inEpisodes marks the rows, of n, that some episode covers.
func inEpisodes(n int, episodes []Episode) []bool {
	in := make([]bool, n)
	for _, ep := range episodes {
		for i := max(ep.Start, 0); i < ep.End && i < n; i++ {
			in[i] = true
		}
	}
	return in
}

// MovedAtOnsetsIn is MovedAtOnsets over any columns: names[j] names
// rows' column j ("" leaves it out), strongest first.
func MovedAtOnsetsIn(names []string, rows []Row, episodes []Episode) []Move {
	if len(rows) == 0 || len(episodes) == 0 {
		return nil
	}
	inEpisode := inEpisodes(len(rows), episodes)
	var moves []Move
	for j, name := range names {
		if name == "" {
			continue
		}
		var normal, onset []float64
		for i, r := range rows {
			if j < len(r.Values) && !inEpisode[i] {
				normal = append(normal, r.Values[j])
			}
		}
		for _, ep := range episodes {
			if ep.Start >= 0 && ep.Start < len(rows) && j < len(rows[ep.Start].Values) {
				onset = append(onset, rows[ep.Start].Values[j])
			}
		}
		normal, onset = finite(normal), finite(onset)
		if len(normal) == 0 || 2*len(onset) < len(episodes) || len(onset) == 0 {
			continue
		}
		base, at := median(normal), median(onset)
		switch {
		case base == 0 && at >= 1:
			moves = append(moves, Move{fmt.Sprintf("%s ↑ (0 → %s)", name, num(at)), math.Inf(1)})
		case base > 0 && (at >= 2*base || at <= base/2):
			ratio := at / base
			r := strconv.FormatFloat(ratio, 'f', 1, 64)
			if ratio < 0.1 {
				r = strconv.FormatFloat(ratio, 'g', 1, 64)
			} else if ratio >= 10 {
				r = strconv.FormatFloat(ratio, 'f', 0, 64)
			}
			// Rises first: they are candidate causes; falls mostly follow
			// the throughput down.
			score := math.Log(ratio)
			if ratio < 1 {
				score = -math.Log(math.Max(ratio, 1e-9)) - 1e6
			}
			moves = append(moves, Move{fmt.Sprintf("%s ×%s (%s → %s)", name, r, num(base), num(at)), score})
		}
	}
	sort.SliceStable(moves, func(a, b int) bool { return moves[a].Score > moves[b].Score })
	return moves
}

// num prints a metric value briefly: 372, 12.5, 0.031.
func num(v float64) string {
	if math.Abs(v) >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func positive(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		if x > 0 && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}
