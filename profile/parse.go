// Package profile is where a server's time goes: perf recordings of its
// on-CPU stacks (cpu-clock samples) and off-CPU time (sched_switch, each
// thread's time off CPU weighted by its length and charged to the stack it
// left on), folded stacks, flame graphs (plain and differential), pprof
// protobufs, top functions and the prediction a profile makes of a
// scenario's rate against a baseline's.
//
// The parsing, weighting, folding, drawing and prediction are pure
// functions of their inputs; perf.go is the shell that runs perf.
package profile

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Record is one record of `perf script` output: a sample with its call
// chain (cpu-clock or sched:sched_switch), or a context-switch record
// (--switch-events: PERF_RECORD_SWITCH IN/OUT of a profiled thread).
type Record struct {
	Comm  string
	TID   int
	Time  float64 // seconds, perf's clock
	Event string  // "cpu-clock", "sched:sched_switch", "switch-in", "switch-out"
	// Period is the sample's period (cpu-clock: nanoseconds), 0 if absent.
	Period int64
	// Trace is the tracepoint's text (prev_comm=... prev_state=D ==> ...).
	Trace string
	// Stack is the call chain, outermost frame first (start_thread ...
	// fdatasync ... __schedule).
	Stack []string
}

// The switch records' events.
const (
	SwitchIn  = "switch-in"
	SwitchOut = "switch-out"
)

// headerRE reads a record's first line as `perf script -F
// comm,tid,time,event,ip,sym,dso[,period][,trace]` prints it:
// "mariadbd  9696   239.684961: sched:sched_switch: prev_comm=..." or
// "mariadbd  9696   244.041527:    2004008 cpu-clock: ". The comm may hold
// spaces, so it is everything before the last "TID TIME:".
var headerRE = regexp.MustCompile(`^(.*?)\s+(\d+)(?:/\d+)?\s+(?:\[\d+\]\s+)?(\d+\.\d+):\s*(.*)$`)

// parseFrame reads a call-chain line, "\t  b7a75b MYSQL_BIN_LOG::flush_and_sync
// (/usr/sbin/mariadbd)", without a regular expression: a recording holds
// millions of them.
func parseFrame(line string) (sym, dso string, ok bool) {
	s := strings.TrimSpace(line)
	addr, rest, found := strings.Cut(s, " ")
	if !found || addr == "" || strings.Trim(addr, "0123456789abcdef") != "" {
		return "", "", false
	}
	rest = strings.TrimSpace(rest)
	i := strings.LastIndex(rest, " (")
	if i < 0 || !strings.HasSuffix(rest, ")") {
		return "", "", false
	}
	return strings.TrimSpace(rest[:i]), rest[i+2 : len(rest)-1], true
}

// Parse reads `perf script` output. Records it cannot read are skipped
// and counted in bad (a truncated last record after a kill, say); a read
// error is returned.
func Parse(r io.Reader) (recs []Record, bad int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur *Record
	var frames []string // innermost first, as perf prints them
	flush := func() {
		if cur == nil {
			return
		}
		cur.Stack = make([]string, len(frames))
		for i, f := range frames {
			cur.Stack[len(frames)-1-i] = f
		}
		recs = append(recs, *cur)
		cur, frames = nil, frames[:0]
	}
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if cur == nil {
				continue
			}
			sym, dso, ok := parseFrame(line)
			if !ok {
				bad++
				continue
			}
			frames = append(frames, frameName(sym, dso))
			continue
		}
		flush()
		rec, ok := parseHeader(line)
		if !ok {
			bad++
			continue
		}
		cur = &rec
	}
	flush()
	return recs, bad, sc.Err()
}

func parseHeader(line string) (Record, bool) {
	m := headerRE.FindStringSubmatch(line)
	if m == nil {
		return Record{}, false
	}
	tid, err1 := strconv.Atoi(m[2])
	t, err2 := strconv.ParseFloat(m[3], 64)
	if err1 != nil || err2 != nil {
		return Record{}, false
	}
	rec := Record{Comm: strings.TrimSpace(m[1]), TID: tid, Time: t}
	rest := strings.TrimSpace(m[4])
	if s, ok := strings.CutPrefix(rest, "PERF_RECORD_SWITCH"); ok {
		// "PERF_RECORD_SWITCH IN" / "OUT" (and "OUT preempt" on newer perf);
		// PERF_RECORD_SWITCH_CPU_WIDE is not asked for.
		switch f := strings.Fields(s); {
		case len(f) > 0 && f[0] == "IN":
			rec.Event = SwitchIn
		case len(f) > 0 && f[0] == "OUT":
			rec.Event = SwitchOut
		default:
			return Record{}, false
		}
		return rec, true
	}
	// An optional period, then "event:" and the trace text.
	if f := strings.Fields(rest); len(f) > 1 {
		if p, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			rec.Period = p
			rest = strings.TrimSpace(strings.TrimPrefix(rest, f[0]))
		}
	}
	ev, trace, ok := cutEvent(rest)
	if !ok {
		return Record{}, false
	}
	rec.Event, rec.Trace = ev, trace
	return rec, true
}

// cutEvent splits "sched:sched_switch: prev_comm=..." into the event name
// and the trace: the name ends at the first ": " (or the last ':').
func cutEvent(s string) (string, string, bool) {
	if i := strings.Index(s, ": "); i > 0 {
		return s[:i], strings.TrimSpace(s[i+2:]), true
	}
	if strings.HasSuffix(s, ":") && len(s) > 1 {
		return s[:len(s)-1], "", true
	}
	return "", "", false
}

// frameName names a frame: perf's symbol (already demangled by perf
// script), "+0x..." offsets dropped; an unresolved frame (a static function
// of a stripped binary) is its object in brackets, "[mariadbd]", so that
// the frames of one unknown function do not fan out by address.
func frameName(sym, dso string) string {
	if i := strings.LastIndex(sym, "+0x"); i > 0 {
		sym = sym[:i]
	}
	if sym == "" || sym == "[unknown]" {
		base := filepath.Base(dso)
		if dso == "" || base == "." || base == "unknown" {
			return "[unknown]"
		}
		return "[" + strings.Trim(base, "[]") + "]"
	}
	return sym
}

// traceField reads one field of a tracepoint's text: prev_state=D.
func traceField(trace, name string) string {
	for _, f := range strings.Fields(trace) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			return v
		}
	}
	return ""
}

// String renders a record for test failures.
func (r Record) String() string {
	return fmt.Sprintf("%s/%d %.6f %s (%d frames)", r.Comm, r.TID, r.Time, r.Event, len(r.Stack))
}
