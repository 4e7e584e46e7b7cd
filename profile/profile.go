package profile

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"benchmatrix/record/parts"
)

// Mode is what a profile measures.
type Mode string

// The modes.
const (
	// OnCPU: cpu-clock samples, each weighted by its period.
	OnCPU Mode = "cpu"
	// OffCPU: each thread's time off CPU, from the moment it switched out
	// (sched:sched_switch, with the stack it left on) to the moment it
	// switched in again (PERF_RECORD_SWITCH IN), weighted by that time.
	OffCPU Mode = "offcpu"
	// Both is on-CPU and off-CPU time of the same threads added: where the
	// wall time of a closed-loop connection goes.
	Both Mode = "both"
)

// Unit names a mode's weights in text.
func (m Mode) Unit() string {
	if m == OnCPU {
		return "on-CPU time"
	}
	if m == OffCPU {
		return "off-CPU time"
	}
	return "on+off-CPU time"
}

// The thread kinds. A server's threads are grouped by what they run (the
// frames their stacks show: MariaDB leaves its threads unnamed, so every
// comm is "mariadbd"), or by their name when the server names them
// (MySQL 8: "connection", "ib_pg_flush_co", ...).
const (
	KindConnection = "connection"
	// KindIdleConnection is a connection thread with less than a tenth of
	// the records of the busiest connection: a monitoring session (the 1 Hz
	// sampler's), not the workload's. Its time, almost all waiting for the
	// next statement, would swamp the workload's threads in comparisons.
	KindIdleConnection = "connection-idle"
	KindBackground     = "background"
)

// idleFraction: a connection thread with fewer records than this fraction
// of the busiest connection thread's is idle.
const idleFraction = 0.1

// kindFrames maps frames to the kind of thread that runs them; the first
// match in this order wins, so a connection thread that ran an InnoDB
// function is still a connection.
var kindFrames = []struct{ frame, kind string }{
	{"handle_one_connection", KindConnection},
	{"do_handle_one_connection", KindConnection},
	{"do_command", KindConnection},
	{"tp_callback", KindConnection}, // the thread pool's workers serve connections
	{"binlog_background_thread", "binlog"},
	{"buf_flush_page_cleaner", "innodb-page-cleaner"},
	{"srv_purge_coordinator_thread", "innodb-purge"},
	{"tpool::", "innodb-tpool"}, // MariaDB's InnoDB background tasks (IO, purge, flush)
	{"handle_manager", "manager"},
	{"signal_hand", "signal"},
	{"timer_handler", "timer"},
	{"ma_checkpoint_background", "aria"},
}

// Classify assigns each thread a kind from every record of it: the first
// kindFrames entry any of its stacks shows; else its comm when the server
// names its threads (a comm other than the process's, mainComm); else
// background.
func Classify(recs []Record, mainComm string) map[int]string {
	rank := map[int]int{}
	kinds := map[int]string{}
	records := map[int]int{}
	for _, r := range recs {
		records[r.TID]++
		if _, ok := rank[r.TID]; !ok {
			rank[r.TID] = len(kindFrames)
			if r.Comm != "" && mainComm != "" && r.Comm != mainComm {
				// io_uring workers are "iou-wrk-12616": one kind, not one per thread.
				kinds[r.TID] = strings.TrimRight(r.Comm, "0123456789-_/")
			} else {
				kinds[r.TID] = KindBackground
			}
		}
		for _, f := range r.Stack {
			for i := 0; i < rank[r.TID]; i++ {
				if strings.Contains(f, kindFrames[i].frame) {
					rank[r.TID], kinds[r.TID] = i, kindFrames[i].kind
					break
				}
			}
		}
	}
	busiest := 0
	for tid, k := range kinds {
		if k == KindConnection {
			busiest = max(busiest, records[tid])
		}
	}
	for tid, k := range kinds {
		if k == KindConnection && float64(records[tid]) < idleFraction*float64(busiest) {
			kinds[tid] = KindIdleConnection
		}
	}
	return kinds
}

// Profile is weighted stacks. Each stack is folded into one string, the
// thread kind first, then the frames outermost first, joined by ';'.
type Profile struct {
	Mode Mode `json:"mode"`
	// Weight per folded stack, nanoseconds.
	Weight map[string]int64 `json:"-"`
	// Count per folded stack: samples (on-CPU) or off-CPU intervals.
	Count map[string]int64 `json:"-"`
	// Threads maps each thread id seen to its kind.
	Threads map[int]string `json:"threads,omitempty"`
	// Records is how many records the profile was built from; Lost how
	// many off-CPU intervals had no end in the window (left out).
	Records int `json:"records"`
	Lost    int `json:"lost,omitempty"`
	// Runqueue is the time threads spent runnable but off CPU (switched
	// out preempted, prev_state R: waiting for a CPU, not for the server),
	// per folded stack, nanoseconds. It is not off-CPU time: not in
	// Weight, shares, graphs or predictions, only stated beside them.
	Runqueue map[string]int64 `json:"-"`
}

func newProfile(m Mode) *Profile {
	return &Profile{Mode: m, Weight: map[string]int64{}, Count: map[string]int64{}, Threads: map[int]string{}, Runqueue: map[string]int64{}}
}

func (p *Profile) add(stack string, w int64) {
	p.Weight[stack] += w
	p.Count[stack]++
}

// fold joins a kind and a stack: frame names lose any ';' (the folded
// format's separator) and surrounding space.
func fold(kind string, stack []string) string {
	var b strings.Builder
	b.WriteString(kind)
	for _, f := range stack {
		b.WriteByte(';')
		b.WriteString(strings.ReplaceAll(strings.TrimSpace(f), ";", ":"))
	}
	return b.String()
}

// BuildOnCPU weights every cpu-clock sample by its period (the sampling
// interval in nanoseconds; defaultPeriod when perf did not print one).
func BuildOnCPU(recs []Record, kinds map[int]string, defaultPeriod int64) *Profile {
	p := newProfile(OnCPU)
	for _, r := range recs {
		if r.Event != "cpu-clock" && r.Event != "task-clock" {
			continue
		}
		p.Records++
		w := r.Period
		if w <= 0 {
			w = defaultPeriod
		}
		k := kindOf(kinds, r.TID)
		p.Threads[r.TID] = k
		p.add(fold(k, r.Stack), w)
	}
	return p
}

// BuildOffCPU charges each thread's time off CPU to the stack it switched
// out on: from a sched:sched_switch record (made in the thread's context,
// so its stack is the thread's) to the thread's next PERF_RECORD_SWITCH IN.
// A missing IN (lost records) ends the interval at the thread's next
// sched_switch; an interval still open when the recording ends is dropped
// (counted in Lost): its length is not known. Records must be in time
// order, as perf script prints them.
//
// A thread switched out runnable (prev_state R or R+: preempted, or
// yielding) waits for a CPU, not for anything of the server's: that
// interval goes to Runqueue, not to the off-CPU weight.
func BuildOffCPU(recs []Record, kinds map[int]string) *Profile {
	p := newProfile(OffCPU)
	type out struct {
		t        float64
		stack    string
		runnable bool
	}
	open := map[int]out{}
	end := func(o out, t float64) {
		if o.runnable {
			p.Runqueue[o.stack] += nanos(t - o.t)
			return
		}
		p.add(o.stack, nanos(t-o.t))
	}
	for _, r := range recs {
		switch r.Event {
		case "sched:sched_switch":
			k := kindOf(kinds, r.TID)
			p.Threads[r.TID] = k
			if o, ok := open[r.TID]; ok {
				end(o, r.Time)
			}
			p.Records++
			open[r.TID] = out{r.Time, fold(k, r.Stack), strings.HasPrefix(traceField(r.Trace, "prev_state"), "R")}
		case SwitchIn:
			if o, ok := open[r.TID]; ok {
				end(o, r.Time)
				delete(open, r.TID)
			}
		}
	}
	p.Lost = len(open)
	return p
}

// RunqueueTotal is the time threads spent runnable but preempted,
// nanoseconds (see Runqueue).
func (p *Profile) RunqueueTotal() int64 {
	var t int64
	for _, w := range p.Runqueue {
		t += w
	}
	return t
}

// View is the part of a profile that one kind of thread holds.
type View struct {
	*Profile
	Kind string
}

// Workload is the part of the profile the workload's threads hold (the
// connection threads, when it has any; else all of it, kind "all"), and
// the share of the whole that each other kind held, heaviest first.
func (p *Profile) Workload() (View, []KindShare) {
	if !p.Has(KindConnection) {
		return View{p, "all"}, nil
	}
	var hidden []KindShare
	for _, k := range p.Kinds() {
		if k.Kind != KindConnection {
			hidden = append(hidden, k)
		}
	}
	return View{p.Only(KindConnection), KindConnection}, hidden
}

func nanos(sec float64) int64 {
	if sec <= 0 {
		return 0
	}
	return int64(sec*1e9 + 0.5)
}

func kindOf(kinds map[int]string, tid int) string {
	if k, ok := kinds[tid]; ok {
		return k
	}
	return KindBackground
}

// Total is the profile's weight, nanoseconds.
func (p *Profile) Total() int64 {
	var t int64
	for _, w := range p.Weight {
		t += w
	}
	return t
}

// Empty reports a profile with no weight: perf captured nothing.
func (p *Profile) Empty() bool { return p == nil || p.Total() == 0 }

// Kinds lists the thread kinds present with their weight, heaviest first.
func (p *Profile) Kinds() []KindShare {
	by := map[string]int64{}
	for s, w := range p.Weight {
		k, _, _ := strings.Cut(s, ";")
		by[k] += w
	}
	threads := map[string]int{}
	for _, k := range p.Threads {
		threads[k]++
	}
	total := p.Total()
	var out []KindShare
	for k, w := range by {
		out = append(out, KindShare{Kind: k, Weight: w, Share: share(w, total), Threads: threads[k]})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Weight != out[j].Weight {
			return out[i].Weight > out[j].Weight
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// KindShare is one kind of thread's part of a profile (parts.KindShare).
type KindShare = parts.KindShare

func share(w, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return float64(w) / float64(total)
}

// Only is the part of the profile that threads of the given kind hold
// (all of it for kind "").
func (p *Profile) Only(kind string) *Profile {
	if kind == "" {
		return p
	}
	q := newProfile(p.Mode)
	q.Records, q.Lost = p.Records, p.Lost
	for s, w := range p.Weight {
		if k, _, _ := strings.Cut(s, ";"); k == kind || s == kind {
			q.Weight[s] = w
			q.Count[s] = p.Count[s]
		}
	}
	for s, w := range p.Runqueue {
		if k, _, _ := strings.Cut(s, ";"); k == kind || s == kind {
			q.Runqueue[s] = w
		}
	}
	for t, k := range p.Threads {
		if k == kind {
			q.Threads[t] = k
		}
	}
	return q
}

// Has reports whether threads of the kind hold any weight.
func (p *Profile) Has(kind string) bool { return !p.Only(kind).Empty() }

// Add is the sum of two profiles of the same threads (on-CPU and off-CPU
// time): mode Both.
func Add(a, b *Profile) *Profile {
	q := newProfile(Both)
	for _, p := range []*Profile{a, b} {
		if p == nil {
			continue
		}
		q.Records += p.Records
		for s, w := range p.Weight {
			q.Weight[s] += w
			q.Count[s] += p.Count[s]
		}
		for s, w := range p.Runqueue {
			q.Runqueue[s] += w
		}
		for t, k := range p.Threads {
			q.Threads[t] = k
		}
	}
	return q
}

// WriteFolded writes the profile as folded stacks, one line per stack:
// "kind;frame;frame weight", sorted, the format FlameGraph's
// flamegraph.pl and difffolded.pl read. On-CPU weights are samples;
// off-CPU (and on+off) weights are microseconds.
func (p *Profile) WriteFolded(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, s := range slices.Sorted(maps.Keys(p.Weight)) {
		v := p.Weight[s] / 1000
		if p.Mode == OnCPU {
			v = p.Count[s]
		}
		if v <= 0 {
			continue
		}
		fmt.Fprintf(bw, "%s %d\n", s, v)
	}
	return bw.Flush()
}

// ReadFolded reads folded stacks back (WriteFolded's output): weights in
// the units WriteFolded wrote, as nanoseconds for off-CPU and counts times
// period for on-CPU.
func ReadFolded(r io.Reader, mode Mode, period int64) (*Profile, error) {
	p := newProfile(mode)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i <= 0 {
			return nil, fmt.Errorf("folded line %d: no weight", n)
		}
		v, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("folded line %d: weight %q", n, line[i+1:])
		}
		s := line[:i]
		if mode == OnCPU {
			p.Weight[s] += v * period
			p.Count[s] += v
		} else {
			p.Weight[s] += v * 1000
			p.Count[s]++
		}
		p.Records++
	}
	return p, sc.Err()
}

// Top lists the n functions with the largest inclusive share; thread
// kinds (the first frame) and the frames every stack shares trivially
// (the share of a root like start_thread is shown too: it says how much of
// the time is in threads perf could unwind to their start).
func (p *Profile) Top(n int) []parts.Func {
	total := p.Total()
	incl := map[string]int64{}
	for s, w := range p.Weight {
		frames := strings.Split(s, ";")[1:]
		seen := map[string]bool{}
		for _, f := range frames {
			if !seen[f] {
				seen[f] = true
				incl[f] += w
			}
		}
	}
	out := make([]parts.Func, 0, len(incl))
	for f, w := range incl {
		out = append(out, parts.Func{Name: f, Share: share(w, total)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Share != out[j].Share {
			return out[i].Share > out[j].Share
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// Inclusive is the share of the profile's weight in stacks passing
// through any frame whose name contains one of the given texts.
func (p *Profile) Inclusive(frames ...string) float64 {
	var in int64
	for s, w := range p.Weight {
		for _, f := range strings.Split(s, ";")[1:] {
			if containsAny(f, frames) {
				in += w
				break
			}
		}
	}
	return share(in, p.Total())
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}
