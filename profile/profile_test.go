package profile

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"benchmatrix/exitcode"
	"benchmatrix/record/parts"
)

func TestParseHeader(t *testing.T) {
	cases := []struct {
		line   string
		ok     bool
		comm   string
		tid    int
		event  string
		period int64
	}{
		{"mariadbd  9696   244.041527:    2004008 cpu-clock: ", true, "mariadbd", 9696, "cpu-clock", 2004008},
		{"mariadbd  9696   239.684961: sched:sched_switch: prev_comm=mariadbd prev_pid=9696 prev_prio=120 prev_state=D ==> next_comm=kworker/1:1H next_pid=44 next_prio=100", true, "mariadbd", 9696, "sched:sched_switch", 0},
		{"mariadbd  9696   239.684743: PERF_RECORD_SWITCH IN         ", true, "mariadbd", 9696, SwitchIn, 0},
		{"mariadbd  9696   239.688248: PERF_RECORD_SWITCH OUT preempt ", true, "mariadbd", 9696, SwitchOut, 0},
		{"ib pg flush  120/100 [001]  5.5: cpu-clock:", true, "ib pg flush", 120, "cpu-clock", 0},
		{"no numbers here", false, "", 0, "", 0},
		{"mariadbd 12 1.0: PERF_RECORD_SWITCH SIDEWAYS", false, "", 0, "", 0},
	}
	for _, c := range cases {
		r, ok := parseHeader(c.line)
		if ok != c.ok {
			t.Errorf("%q: ok = %v, want %v", c.line, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		if r.Comm != c.comm || r.TID != c.tid || r.Event != c.event || r.Period != c.period {
			t.Errorf("%q: got %+v", c.line, r)
		}
	}
}

func TestFrameName(t *testing.T) {
	cases := []struct{ sym, dso, want string }{
		{"MYSQL_BIN_LOG::flush_and_sync+0xab", "/usr/sbin/mariadbd", "MYSQL_BIN_LOG::flush_and_sync"},
		{"[unknown]", "/usr/sbin/mariadbd", "[mariadbd]"},
		{"[unknown]", "[kernel.kallsyms]", "[kernel.kallsyms]"},
		{"", "", "[unknown]"},
		{"fdatasync", "/usr/lib/x86_64-linux-gnu/libc.so.6", "fdatasync"},
	}
	for _, c := range cases {
		if got := frameName(c.sym, c.dso); got != c.want {
			t.Errorf("frameName(%q, %q) = %q, want %q", c.sym, c.dso, got, c.want)
		}
	}
}

func load(t *testing.T, name string) []Record {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(name, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = z
	}
	recs, bad, err := Parse(r)
	if err != nil || bad != 0 {
		t.Fatalf("%s: %d unreadable records, %v", name, bad, err)
	}
	return recs
}

// The recorded samples (testdata/*-b1e1.txt) are perf script output of a
// MariaDB 10.11 sandbox under a 1-thread oltp_insert load, sync_binlog=1
// and innodb_flush_log_at_trx_commit=1.
func TestParseRecordedOffCPU(t *testing.T) {
	recs := load(t, "offcpu-b1e1.txt")
	count := map[string]int{}
	for _, r := range recs {
		count[r.Event]++
	}
	if count["sched:sched_switch"] == 0 || count[SwitchIn] == 0 || count[SwitchOut] == 0 {
		t.Fatalf("events: %v", count)
	}
	// The first sched_switch left on the binlog's fdatasync: its stack,
	// outermost first, runs from the thread's start to the scheduler.
	var first Record
	for _, r := range recs {
		if r.Event == "sched:sched_switch" {
			first = r
			break
		}
	}
	if first.Stack[0] != "start_thread" || first.Stack[len(first.Stack)-1] != "__schedule" {
		t.Errorf("stack order: %v", first.Stack)
	}
	if !slicesContains(first.Stack, "MYSQL_BIN_LOG::flush_and_sync") || !slicesContains(first.Stack, "fdatasync") {
		t.Errorf("first stack lacks the binlog fsync: %v", first.Stack)
	}
	if got := traceField(first.Trace, "prev_state"); got != "D" {
		t.Errorf("prev_state = %q", got)
	}
}

func slicesContains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func TestOffCPUOfRecordedB1E1(t *testing.T) {
	recs := load(t, "offcpu-b1e1.txt")
	p := Build(OffCPU, recs, "mariadbd", 0)
	if p.Empty() {
		t.Fatal("empty")
	}
	conn := p.Only(KindConnection)
	if conn.Empty() {
		t.Fatalf("no connection thread found; kinds %v", p.Kinds())
	}
	// Of the connection's time off CPU, the commit's fsyncs (binlog and
	// redo) hold the largest part.
	fsync := conn.Inclusive("fdatasync", "fsync")
	if fsync < 0.3 {
		t.Errorf("fsync paths hold %.2f of the connection's off-CPU time, want a large share", fsync)
	}
	top := conn.Top(40)
	if !hasFunc(top, "MYSQL_BIN_LOG::flush_and_sync") || !hasFunc(top, "ha_commit_trans") {
		t.Errorf("top functions lack the commit path: %v", top)
	}
	// The total is the time the threads spent off CPU: within the
	// recording's span times the threads.
	span := recs[len(recs)-1].Time - recs[0].Time
	if got := float64(conn.Total()) / 1e9; got <= 0 || got > span*1.001 {
		t.Errorf("connection off-CPU %.4f s over a %.4f s span", got, span)
	}
}

func hasFunc(fs []parts.Func, name string) bool {
	for _, f := range fs {
		if f.Name == name {
			return true
		}
	}
	return false
}

func TestOnCPUOfRecordedB1E1(t *testing.T) {
	recs := load(t, "cpu-b1e1.txt")
	p := Build(OnCPU, recs, "mariadbd", 2004008)
	if p.Records != 150 {
		t.Errorf("records = %d, want the 150 samples of the file", p.Records)
	}
	if got, want := p.Total(), int64(150*2004008); got != want {
		t.Errorf("total = %d, want %d (150 samples of 2,004,008 ns)", got, want)
	}
	if !hasFunc(p.Top(50), "mysql_execute_command") {
		t.Errorf("no named mariadbd function in the top: %v", p.Top(50))
	}
}

func TestBuildOffCPUWeights(t *testing.T) {
	sw := func(tid int, t float64, frames ...string) Record {
		return Record{Comm: "mariadbd", TID: tid, Time: t, Event: "sched:sched_switch", Stack: frames}
	}
	in := func(tid int, t float64) Record { return Record{Comm: "mariadbd", TID: tid, Time: t, Event: SwitchIn} }
	recs := []Record{
		sw(1, 1.0, "start_thread", "handle_one_connection", "fdatasync"),
		{TID: 1, Time: 1.0001, Event: SwitchOut},
		in(2, 1.1), // no open interval: ignored
		in(1, 1.5), // 0.5 s in fdatasync
		sw(1, 2.0, "start_thread", "handle_one_connection", "vio_read"),
		sw(1, 2.1, "start_thread", "handle_one_connection", "fdatasync"), // IN lost: the first ends here (0.1 s)
		in(1, 2.35), // 0.25 s in fdatasync
		sw(2, 3.0, "start_thread", "tpool::worker"),
		// tid 2 never comes back: dropped
	}
	kinds := Classify(recs, "mariadbd")
	p := BuildOffCPU(recs, kinds)
	want := map[string]int64{
		"connection;start_thread;handle_one_connection;fdatasync": 750_000_000,
		"connection;start_thread;handle_one_connection;vio_read":  100_000_000,
	}
	for s, w := range want {
		if got := p.Weight[s]; math.Abs(float64(got-w)) > 1000 {
			t.Errorf("%s = %d ns, want %d", s, got, w)
		}
	}
	if len(p.Weight) != len(want) {
		t.Errorf("stacks: %v", p.Weight)
	}
	if p.Lost != 1 {
		t.Errorf("lost = %d, want 1 (tid 2's open interval)", p.Lost)
	}
	if kinds[2] != "innodb-tpool" {
		t.Errorf("tid 2 kind = %q", kinds[2])
	}
}

func TestClassify(t *testing.T) {
	rec := func(tid int, comm string, frames ...string) Record {
		return Record{TID: tid, Comm: comm, Event: "cpu-clock", Stack: frames}
	}
	var recs []Record
	for i := 0; i < 20; i++ {
		recs = append(recs, rec(1, "mariadbd", "start_thread", "handle_one_connection", "do_command", "buf_flush_page_cleaner"))
	}
	recs = append(recs,
		rec(2, "mariadbd", "start_thread", "handle_one_connection", "vio_read"), // 1 record: idle
		rec(3, "mariadbd", "start_thread", "[mariadbd]"),
		rec(4, "ib_pg_flush_co", "start_thread", "[mysqld]"),
		rec(5, "mariadbd", "start_thread", "buf_flush_page_cleaner"),
		rec(6, "iou-wrk-12616", "ret_from_fork", "io_wq_worker"),
	)
	got := Classify(recs, "mariadbd")
	want := map[int]string{1: KindConnection, 2: KindIdleConnection, 3: KindBackground, 4: "ib_pg_flush_co", 5: "innodb-page-cleaner", 6: "iou-wrk"}
	for tid, k := range want {
		if got[tid] != k {
			t.Errorf("tid %d: %q, want %q", tid, got[tid], k)
		}
	}
}

func profileOf(mode Mode, stacks map[string]int64) *Profile {
	p := newProfile(mode)
	for s, w := range stacks {
		p.Weight[s] = w
		p.Count[s] = 1
		p.Records++
	}
	return p
}

func TestFoldedRoundTrip(t *testing.T) {
	p := profileOf(OffCPU, map[string]int64{"connection;a;b": 3_000_000, "background;c;d e": 5_000})
	var b bytes.Buffer
	if err := p.WriteFolded(&b); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "background;c;d e 5\nconnection;a;b 3000\n" {
		t.Errorf("folded:\n%s", got)
	}
	q, err := ReadFolded(&b, OffCPU, 0)
	if err != nil {
		t.Fatal(err)
	}
	for s, w := range p.Weight {
		if q.Weight[s] != w {
			t.Errorf("%s: %d, want %d", s, q.Weight[s], w)
		}
	}
	if _, err := ReadFolded(strings.NewReader("a;b x\n"), OffCPU, 0); err == nil {
		t.Error("a bad weight was read")
	}
}

func TestTopInclusive(t *testing.T) {
	p := profileOf(OnCPU, map[string]int64{
		"connection;main;f;f;g": 60, // recursion counted once
		"connection;main;h":     40,
	})
	top := p.Top(10)
	want := map[string]float64{"main": 1, "f": 0.6, "g": 0.6, "h": 0.4}
	for _, f := range top {
		if math.Abs(f.Share-want[f.Name]) > 1e-9 {
			t.Errorf("%s: %.2f, want %.2f", f.Name, f.Share, want[f.Name])
		}
		if f.Name == "connection" {
			t.Error("the thread kind is listed as a function")
		}
	}
	if top[0].Name != "main" {
		t.Errorf("first = %s", top[0].Name)
	}
}

func TestPredict(t *testing.T) {
	cases := []struct {
		name       string
		base, scen map[string]int64
		share      float64
		kind       string
		gone       []string
	}{
		{
			name:  "the fsync path is gone",
			base:  map[string]int64{"connection;main;commit;fsync;io": 20, "connection;main;commit;fsync": 10, "connection;main;work": 70},
			scen:  map[string]int64{"connection;main;commit": 10, "connection;main;work": 90},
			share: 0.30, kind: KindConnection, gone: []string{"fsync"},
		},
		{
			name:  "a path that shrank but stayed is not gone",
			base:  map[string]int64{"connection;main;commit;fsync": 30, "connection;main;work": 70},
			scen:  map[string]int64{"connection;main;commit;fsync": 20, "connection;main;work": 80},
			share: 0, kind: KindConnection,
		},
		{
			name:  "paths under 1% are noise",
			base:  map[string]int64{"connection;main;rare": 5, "connection;main;work": 995},
			scen:  map[string]int64{"connection;main;work": 1000},
			share: 0, kind: KindConnection,
		},
		{
			name:  "background threads are left out when both have connections",
			base:  map[string]int64{"connection;main;fsync": 50, "connection;main;work": 50, "background;flush;fsync": 900},
			scen:  map[string]int64{"connection;main;work": 100, "background;idle": 900},
			share: 0.5, kind: KindConnection, gone: []string{"fsync"},
		},
		{
			name:  "without connection threads, all threads",
			base:  map[string]int64{"background;fsync": 25, "background;work": 75},
			scen:  map[string]int64{"background;work": 75},
			share: 0.25, kind: "", gone: []string{"fsync"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Predict(profileOf(OffCPU, c.base), profileOf(OffCPU, c.scen))
			if math.Abs(p.Share-c.share) > 1e-9 {
				t.Errorf("share = %.3f, want %.3f (%+v)", p.Share, c.share, p.Gone)
			}
			if want := 1 / (1 - c.share); math.Abs(p.Ratio-want) > 1e-9 {
				t.Errorf("ratio = %.3f, want %.3f", p.Ratio, want)
			}
			if p.Kind != c.kind {
				t.Errorf("kind = %q, want %q", p.Kind, c.kind)
			}
			var gone []string
			for _, g := range p.Gone {
				gone = append(gone, g.Frame)
			}
			if strings.Join(gone, ",") != strings.Join(c.gone, ",") {
				t.Errorf("gone = %v, want %v", gone, c.gone)
			}
		})
	}
}

// wellFormed decodes the whole SVG as XML and returns the texts of its
// <title> elements.
func wellFormed(t *testing.T, svg []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	var titles []string
	inTitle := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			inTitle = x.Name.Local == "title"
		case xml.CharData:
			if inTitle {
				titles = append(titles, string(x))
			}
		case xml.EndElement:
			inTitle = false
		}
	}
	return titles
}

func TestFlameGraph(t *testing.T) {
	p := profileOf(OffCPU, map[string]int64{
		"connection;start_thread;ha_commit_trans;MYSQL_BIN_LOG::flush_and_sync;fdatasync": 600_000_000,
		"connection;start_thread;vio_read<&\"x\">":                                        400_000_000,
	})
	var b bytes.Buffer
	if err := WriteFlameGraph(&b, p, "b1e1 & friends"); err != nil {
		t.Fatal(err)
	}
	titles := wellFormed(t, b.Bytes())
	joined := strings.Join(titles, "\n")
	for _, want := range []string{"MYSQL_BIN_LOG::flush_and_sync\n600.0 ms, 60.00%", "vio_read<&\"x\">", "connection\n1.00 s, 100.00%"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no title with %q in:\n%s", want, joined)
		}
	}
	if !strings.Contains(b.String(), ">fdatasync</text>") {
		t.Error("the fdatasync frame has no readable label")
	}
	if err := WriteFlameGraph(&b, newProfile(OnCPU), "x"); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty profile: %v, want ErrEmpty", err)
	}
}

func TestDiffFlameGraph(t *testing.T) {
	base := profileOf(OffCPU, map[string]int64{"connection;main;fsync": 50, "connection;main;work": 50})
	scen := profileOf(OffCPU, map[string]int64{"connection;main;work": 100})
	var b bytes.Buffer
	if err := WriteDiffFlameGraph(&b, base, scen, "b0e1 against b1e1"); err != nil {
		t.Fatal(err)
	}
	titles := strings.Join(wellFormed(t, b.Bytes()), "\n")
	for _, want := range []string{"fsync\nbaseline 50.00%, scenario 0.00% (-50.00 points)", "work\nbaseline 50.00%, scenario 100.00% (+50.00 points)"} {
		if !strings.Contains(titles, want) {
			t.Errorf("no title %q in:\n%s", want, titles)
		}
	}
	// Gone is blue, grown is red.
	if !strings.Contains(b.String(), `fill="rgb(55,55,255)"`) || !strings.Contains(b.String(), `fill="rgb(255,55,55)"`) {
		t.Error("the shrunk and grown frames are not coloured blue and red")
	}
}

func TestPprof(t *testing.T) {
	p := profileOf(OnCPU, map[string]int64{"connection;main;f": 4_000_000, "background;g": 2_000_000})
	var b bytes.Buffer
	if err := WritePprof(&b, p, 5); err != nil {
		t.Fatal(err)
	}
	q, err := pprofile.Parse(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Sample) != 2 || q.SampleType[1].Type != "cpu" || q.SampleType[1].Unit != "nanoseconds" {
		t.Fatalf("samples %d, types %v", len(q.Sample), q.SampleType)
	}
	var total int64
	leaves := map[string]bool{}
	for _, s := range q.Sample {
		total += s.Value[1]
		leaves[s.Location[0].Line[0].Function.Name] = true
		if root := s.Location[len(s.Location)-1].Line[0].Function.Name; root != s.Label["thread_kind"][0] {
			t.Errorf("root %q, kind label %v", root, s.Label)
		}
	}
	if total != 6_000_000 || !leaves["f"] || !leaves["g"] {
		t.Errorf("total %d, leaves %v", total, leaves)
	}
}

func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	// pid 1 never exits; 2^22+1 is above Linux's pid_max default and
	// cannot be running.
	for _, name := range []string{DirPrefix + "1-a", DirPrefix + "4194305-b", "benchmatrix-sandbox-4194305-c", DirPrefix + "x-d"} {
		if err := os.Mkdir(dir+"/"+name, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var said []string
	removed := RemoveStale(dir, func(p string) { said = append(said, p) })
	if len(removed) != 1 || !strings.HasSuffix(removed[0], DirPrefix+"4194305-b") || len(said) != 1 {
		t.Errorf("removed %v, said %v", removed, said)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 3 {
		t.Errorf("left %d entries, want 3", len(left))
	}
}

func TestParseFrame(t *testing.T) {
	cases := []struct {
		line, sym, dso string
		ok             bool
	}{
		{"\t          b7a75b MYSQL_BIN_LOG::flush_and_sync (/usr/sbin/mariadbd)", "MYSQL_BIN_LOG::flush_and_sync", "/usr/sbin/mariadbd", true},
		{"\tffffffff82265908 __schedule+0x628 ([kernel.kallsyms])", "__schedule+0x628", "[kernel.kallsyms]", true},
		{"\t  b8c468 [unknown] (/usr/sbin/mariadbd)", "[unknown]", "/usr/sbin/mariadbd", true},
		{"\t  a7af7d std::vector<int, std::allocator<int> >::push_back(int const&) (/usr/sbin/mysqld)", "std::vector<int, std::allocator<int> >::push_back(int const&)", "/usr/sbin/mysqld", true},
		{"\t  zz12 foo (bar)", "", "", false},
		{"\t  b8c468 no-dso", "", "", false},
	}
	for _, c := range cases {
		sym, dso, ok := parseFrame(c.line)
		if ok != c.ok || sym != c.sym || dso != c.dso {
			t.Errorf("%q: %q %q %v", c.line, sym, dso, ok)
		}
	}
}

// Not root: the setting decides, and the error names it (exit code 2).
func TestCheckPermission(t *testing.T) {
	if _, err := exec.LookPath(Perf); err != nil {
		t.Skip("perf is not installed")
	}
	defer func(f string, e func() int) { paranoidFile, euid = f, e }(paranoidFile, euid)
	euid = func() int { return 1000 }
	cases := []struct {
		level string
		modes []Mode
		want  string // "" = permitted
	}{
		{"2", []Mode{OnCPU}, "kernel.perf_event_paranoid is 2"},
		{"1", []Mode{OnCPU}, ""},
		{"1", []Mode{OnCPU, OffCPU}, "need it at -1 or lower"},
		{"-1", []Mode{OffCPU}, ""},
	}
	for _, c := range cases {
		paranoidFile = filepath.Join(t.TempDir(), "paranoid")
		if err := os.WriteFile(paranoidFile, []byte(c.level+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := Check(c.modes...)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("level %s %v: %v", c.level, c.modes, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || exitcode.Of(err) != exitcode.Usage):
			t.Errorf("level %s %v: %v, want %q with exit code 2", c.level, c.modes, err, c.want)
		}
	}
}
