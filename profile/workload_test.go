package profile

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// testdata/offcpu-idle-threads.txt.gz is `perf script -F
// comm,tid,time,event,ip,sym,dso,trace --show-switch-events` of a 2 s
// recording (perf record -g -e sched:sched_switch --switch-events -p PID)
// of a MariaDB 10.11 sandbox (log_bin, sync_binlog=1,
// innodb_flush_log_at_trx_commit=1) serving `benchmatrix oltp oltp_insert
// --threads=1 --rate=250` and one session that asks SHOW GLOBAL STATUS
// once a second (as the sampler does), on a 2-core host shared with other
// builds: InnoDB's idle pool threads and the idle session wait most of the
// time, and some of the connection's switches are preemptions.

// titleShare sums the shares of a frame's boxes in a flame graph's titles
// ("name\n1.2 ms, 34.56% of ..."); -1 when there is no such box.
func titleShare(titles []string, name string) float64 {
	sum, found := 0.0, false
	for _, ti := range titles {
		first, rest, _ := strings.Cut(ti, "\n")
		if first != name {
			continue
		}
		_, pct, ok := strings.Cut(rest, ", ")
		if !ok {
			continue
		}
		pct, _, _ = strings.Cut(pct, "%")
		if v, err := strconv.ParseFloat(pct, 64); err == nil {
			sum, found = sum+v/100, true
		}
	}
	if !found {
		return -1
	}
	return sum
}

// The off-CPU graph of a cell shows the workload's threads: the recorded
// idle pool threads and idle session, over half of all the off-CPU time,
// are not drawn, and the share they held is stated.
func TestOffCPUGraphShowsTheWorkload(t *testing.T) {
	recs := load(t, "offcpu-idle-threads.txt.gz")
	p := Build(OffCPU, recs, "mariadbd", 0)
	conn := p.Only(KindConnection)
	if conn.Empty() || 2*conn.Total() > p.Total() {
		t.Fatalf("the recording should have the connection under half of the off-CPU time: %v", p.Kinds())
	}
	var b bytes.Buffer
	if err := WriteFlameGraph(&b, p, "b1e1"); err != nil {
		t.Fatal(err)
	}
	titles := wellFormed(t, b.Bytes())
	for _, k := range p.Kinds() {
		drawn := titleShare(titles, k.Kind) >= 0
		if k.Kind == KindConnection && !drawn {
			t.Errorf("the connection threads are not drawn")
		}
		if k.Kind != KindConnection && drawn {
			t.Errorf("%s threads (%.1f%% of the off-CPU time) are drawn", k.Kind, 100*k.Share)
		}
		if k.Kind != KindConnection && !strings.Contains(b.String(), fmt.Sprintf("%s %.1f%%", k.Kind, 100*k.Share)) {
			t.Errorf("the graph does not state the share of the %s threads it leaves out", k.Kind)
		}
	}
	// The commit's fsync tower is as wide as its share of the connection's
	// time, not of every thread's.
	want := conn.Inclusive("fdatasync")
	if got := titleShare(titles, "fdatasync"); want < 0.05 || got < want-0.001 || got > want+0.001 {
		t.Errorf("fdatasync drawn at %.4f of the width, want its share of the connection's time %.4f", got, want)
	}
}

// WriteFlameGraphAll draws every thread; an on-CPU graph draws every
// thread too (background threads' CPU is the server's cost).
func TestFlameGraphAllThreads(t *testing.T) {
	p := Build(OffCPU, load(t, "offcpu-idle-threads.txt.gz"), "mariadbd", 0)
	var b bytes.Buffer
	if err := WriteFlameGraphAll(&b, p, "all"); err != nil {
		t.Fatal(err)
	}
	titles := wellFormed(t, b.Bytes())
	for _, k := range p.Kinds() {
		if k.Share > 0.01 && titleShare(titles, k.Kind) < 0 {
			t.Errorf("%s (%.1f%%) not drawn", k.Kind, 100*k.Share)
		}
	}
	on := profileOf(OnCPU, map[string]int64{"connection;a": 3, "innodb-tpool;b": 1})
	b.Reset()
	if err := WriteFlameGraph(&b, on, "cpu"); err != nil {
		t.Fatal(err)
	}
	if titleShare(wellFormed(t, b.Bytes()), "innodb-tpool") < 0 {
		t.Error("an on-CPU graph leaves background threads out")
	}
}

func switchRec(tid int, t float64, state string, frames ...string) Record {
	return Record{Comm: "mariadbd", TID: tid, Time: t, Event: "sched:sched_switch", Stack: frames,
		Trace: "prev_comm=mariadbd prev_pid=" + strconv.Itoa(tid) + " prev_prio=120 prev_state=" + state + " ==> next_comm=x next_pid=1 next_prio=120"}
}

func switchIn(tid int, t float64) Record {
	return Record{Comm: "mariadbd", TID: tid, Time: t, Event: SwitchIn}
}

// A thread switched out runnable (preempted: prev_state R) waits for a
// CPU: that time is not charged to the stack it was running.
func TestRunqueueIsNotOffCPUTime(t *testing.T) {
	conn := []string{"start_thread", "handle_one_connection", "do_command"}
	recs := []Record{
		switchRec(1, 1.0, "D", append(conn, "fdatasync")...),
		switchIn(1, 1.2), // 0.2 s in fdatasync
		switchRec(1, 1.3, "R", append(conn, "row_ins")...),
		switchIn(1, 1.8), // 0.5 s preempted in row_ins
		switchRec(1, 2.0, "R+", append(conn, "row_ins")...),
		switchRec(1, 2.1, "S", append(conn, "vio_read")...), // IN lost: 0.1 s preempted
		switchIn(1, 2.4), // 0.3 s waiting for the client
	}
	p := BuildOffCPU(recs, Classify(recs, "mariadbd"))
	want := map[string]int64{
		"connection;start_thread;handle_one_connection;do_command;fdatasync": 200_000_000,
		"connection;start_thread;handle_one_connection;do_command;vio_read":  300_000_000,
	}
	if len(p.Weight) != len(want) {
		t.Errorf("off-CPU stacks %v, want %v", p.Weight, want)
	}
	for s, w := range want {
		if got := p.Weight[s]; got < w-1000 || got > w+1000 {
			t.Errorf("%s = %d ns, want %d", s, got, w)
		}
	}
}

// The time preempted is kept apart and stated.
func TestRunqueueStated(t *testing.T) {
	conn := []string{"start_thread", "handle_one_connection"}
	recs := []Record{
		switchRec(1, 1.0, "R", append(conn, "row_ins")...),
		switchIn(1, 1.5),
		switchRec(1, 2.0, "D", append(conn, "fdatasync")...),
		switchIn(1, 2.25),
	}
	p := BuildOffCPU(recs, Classify(recs, "mariadbd"))
	if got := p.Runqueue["connection;start_thread;handle_one_connection;row_ins"]; got != 500_000_000 {
		t.Errorf("runqueue %v", p.Runqueue)
	}
	if got := p.Only(KindConnection).RunqueueTotal(); got != 500_000_000 {
		t.Errorf("connection runqueue %d", got)
	}
	var b bytes.Buffer
	if err := WriteFlameGraph(&b, p, "x"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "left out: 500.0 ms runnable but preempted") {
		t.Errorf("the graph does not state the runqueue time:\n%s", b.String()[:min(b.Len(), 1200)])
	}
	// The recording: preemptions of the connection on a busy host.
	rec := Build(OffCPU, load(t, "offcpu-idle-threads.txt.gz"), "mariadbd", 0)
	if rec.Only(KindConnection).RunqueueTotal() <= 0 {
		t.Error("no runqueue time found in the recording's prev_state=R switches")
	}
	for s := range rec.Runqueue {
		if _, ok := rec.Weight[s]; ok && rec.Count[s] == 0 {
			t.Errorf("%s counted in both", s)
		}
	}
}

// A scenario that was preempted more (a busier host) is not predicted
// faster or slower for it: the prediction compares off-CPU waits only.
func TestPredictIgnoresRunqueue(t *testing.T) {
	conn := []string{"start_thread", "handle_one_connection"}
	build := func(preempted float64) *Profile {
		recs := []Record{
			switchRec(1, 1.0, "D", append(conn, "fdatasync")...),
			switchIn(1, 1.5),
			switchRec(1, 2.0, "S", append(conn, "vio_read")...),
			switchIn(1, 2.5),
			switchRec(1, 3.0, "R", append(conn, "vio_read")...),
			switchIn(1, 3.0+preempted),
		}
		return BuildOffCPU(recs, Classify(recs, "mariadbd"))
	}
	pr := Predict(build(0.001), build(20))
	if len(pr.Gone) != 0 || pr.Ratio < 0.999 || pr.Ratio > 1.001 {
		t.Errorf("the same waits predicted %.3fx (gone %v): the runqueue time counted", pr.Ratio, pr.Gone)
	}
}
