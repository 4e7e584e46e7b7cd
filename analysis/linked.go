package analysis

import (
	"math"
	"sort"

	"benchmatrix/record"
)

// The mechanism linked to the outcome (issue 27, item 4), decided here and
// worded by results (linked.go). For each cell against its baseline, and
// each adjacent pair of an expected ordering, the per-transaction figures
// that differ most, and whether they account for the throughput
// difference, with a stated model:
//
//	time per transaction of one thread ≈ fsyncs per transaction × device
//	await + server CPU per transaction
//
// (fsyncs: InnoDB's, the redo log's included, plus the binary log's; the
// redo counter only where InnoDB's is missing, not to count them twice). Its
// difference between the two cells is set against the measured one,
// threads / tps. The model leaves out group commit (one fsync serving
// several threads), CPU running in parallel on several cores, lock and
// network waits: "accounts for about X%" is that share, not a proof.
//
// A cell whose table grew is judged against the growth: a table a few
// percent larger is too little to explain a change of throughput or of
// stalls (the data's working set and the B-tree depth barely move).

// Thresholds of the linked judgements.
const (
	// LinkedMinDiff is the smallest relative difference of a
	// per-transaction figure that is named (10 %).
	LinkedMinDiff = 0.10
	// linkedTop is how many differing figures a line names.
	linkedTop = 3
	// LinkedSmallGrowth: a table that grew less than this share of its
	// rows and of its bytes grew too little to explain a difference.
	LinkedSmallGrowth = 0.05
	// linkedSameGrowthPerTrx, linkedSameBytesPerTrx: how close two cells'
	// growth per transaction must be for the growth to count as following
	// the throughput: rows within 25%; allocated bytes, which move by whole
	// pages and extents (measured: one row per transaction of oltp_insert
	// allocated 0.3 to 1.2 KiB per transaction over 11 repeats of one
	// cell), within 50%.
	linkedSameGrowthPerTrx, linkedSameBytesPerTrx = 0.25, 0.5
)

// linkedFigures are the per-transaction figures compared, with their words.
var linkedFigures = []struct{ key, words string }{
	{"data_fsyncs_trx", "InnoDB fsyncs/trx"},
	{"redo_fsyncs_trx", "redo fsyncs/trx"},
	{"binlog_fsyncs_trx", "binlog fsyncs/trx"},
	{"cg_writes_trx", "server writes/trx"},
	{"cg_reads_trx", "server reads/trx"},
	{"cg_kb_trx", "server KiB written/trx"},
	{"disk_writes_trx", "device writes/trx"},
	{"disk_kb_trx", "device KiB written/trx"},
	{"disk_flushes_trx", "device flushes/trx"},
	{"server_cpu_us_trx", "server CPU µs/trx"},
	{"disk_await_ms", "device await ms"},
}

// MechanismMedians is, per cell name, the median of each mechanism figure
// over the successful repeats, and how many repeats were contended (of how
// many judged).
func MechanismMedians(r *record.Run) (map[string]map[string]float64, map[string][2]int) {
	vals := map[string]map[string][]float64{}
	cont := map[string][2]int{}
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Status != record.CellOK {
			continue
		}
		if vals[c.Name] == nil {
			vals[c.Name] = map[string][]float64{}
		}
		for k, v := range c.Mechanism {
			vals[c.Name][k] = append(vals[c.Name][k], v)
		}
		n := cont[c.Name]
		if c.Contention != nil {
			n[1]++
			if c.Contention.Contended {
				n[0]++
			}
		}
		cont[c.Name] = n
	}
	out := map[string]map[string]float64{}
	for name, byCol := range vals {
		out[name] = map[string]float64{}
		for k, xs := range byCol {
			out[name][k] = record.Median(xs)
		}
	}
	return out, cont
}

// LinkedCell is what the judgements need of one cell: medians over its
// successful repeats.
type LinkedCell struct {
	TPS     float64
	Threads int
	Mech    map[string]float64
	// Growth: medians of the relative change of rows and bytes, the
	// measured seconds, and whether any repeat had growth figures.
	RowsGrew, BytesGrew, Seconds float64
	RowsBefore, RowsAfter        float64
	// RowsPerTrx and BytesPerTrx are what the table gained per measured
	// transaction (medians; 0 when unknown): equal in two cells, the
	// growth follows the throughput instead of explaining it.
	RowsPerTrx, BytesPerTrx float64
	Grown, HasRows          bool
	Stalls, Repeats         int
}

// LinkedCells are the run's cells as the judgements see them.
func LinkedCells(r *record.Run) map[string]*LinkedCell {
	med, _ := MechanismMedians(r)
	out := map[string]*LinkedCell{}
	for _, s := range r.Summaries() {
		out[s.Name] = &LinkedCell{TPS: s.TPS, Mech: med[s.Name]}
	}
	rows, bytes, secs, rb, ra := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
	rowsTrx, bytesTrx := map[string][]float64{}, map[string][]float64{}
	var threads = map[string][]float64{}
	for i := range r.Cells {
		c := &r.Cells[i]
		lc := out[c.Name]
		if lc == nil || c.Status != record.CellOK || c.Result == nil {
			continue
		}
		lc.Repeats++
		t := c.Workload.Common().Threads
		if t > 0 {
			threads[c.Name] = append(threads[c.Name], float64(t))
		}
		if c.Stalls != nil {
			lc.Stalls += c.Stalls.Count
		}
		if g := c.Growth; g != nil {
			lc.Grown = true
			if g.RowsBefore > 0 {
				lc.HasRows = true
				rows[c.Name] = append(rows[c.Name], float64(g.RowsAfter-g.RowsBefore)/float64(g.RowsBefore))
				rb[c.Name] = append(rb[c.Name], float64(g.RowsBefore))
				ra[c.Name] = append(ra[c.Name], float64(g.RowsAfter))
				if c.Result.Events > 0 {
					rowsTrx[c.Name] = append(rowsTrx[c.Name], float64(g.RowsAfter-g.RowsBefore)/float64(c.Result.Events))
				}
			}
			if g.BytesBefore > 0 {
				bytes[c.Name] = append(bytes[c.Name], float64(g.BytesAfter-g.BytesBefore)/float64(g.BytesBefore))
				if c.Result.Events > 0 {
					bytesTrx[c.Name] = append(bytesTrx[c.Name], float64(g.BytesAfter-g.BytesBefore)/float64(c.Result.Events))
				}
			}
			secs[c.Name] = append(secs[c.Name], c.Result.Elapsed.Seconds())
		}
	}
	medOr0 := func(xs []float64) float64 {
		if len(xs) == 0 {
			return 0
		}
		return record.Median(xs)
	}
	for name, lc := range out {
		lc.Threads = max(1, int(math.Round(medOr0(threads[name]))))
		lc.RowsGrew, lc.BytesGrew, lc.Seconds = medOr0(rows[name]), medOr0(bytes[name]), medOr0(secs[name])
		lc.RowsBefore, lc.RowsAfter = medOr0(rb[name]), medOr0(ra[name])
		lc.RowsPerTrx, lc.BytesPerTrx = medOr0(rowsTrx[name]), medOr0(bytesTrx[name])
	}
	return out
}

// FigureDiff is one per-transaction figure of two cells.
type FigureDiff struct {
	Words, Key string
	X, Y       float64
	// Ratio is X/Y; 0 or +Inf when one of them is 0.
	Ratio    float64
	logRatio float64 // |log(x/y)|; +Inf when one is 0
}

// Differing is the figures of x and y differing by LinkedMinDiff or more,
// the largest relative difference first, at most three.
func Differing(x, y map[string]float64) []FigureDiff {
	var out []FigureDiff
	for _, f := range linkedFigures {
		a, okA := x[f.key]
		b, okB := y[f.key]
		if !okA || !okB || (a == 0 && b == 0) {
			continue
		}
		d := FigureDiff{Words: f.words, Key: f.key, X: a, Y: b}
		switch {
		case a == 0:
			d.logRatio, d.Ratio = math.Inf(1), 0
		case b == 0:
			d.logRatio, d.Ratio = math.Inf(1), math.Inf(1)
		default:
			d.Ratio = a / b
			if math.Abs(d.Ratio-1) < LinkedMinDiff {
				continue
			}
			d.logRatio = math.Abs(math.Log(d.Ratio))
		}
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].logRatio > out[j].logRatio })
	if len(out) > linkedTop {
		out = out[:linkedTop]
	}
	return out
}

// PredictedSeconds is the model's time per transaction of one thread:
// fsyncs × await + server CPU; ok is false when the cell lacks both parts.
func PredictedSeconds(m map[string]float64) (sec float64, ok bool) {
	// InnoDB's fsyncs count the redo log's (MariaDB 10.11 has no separate
	// counter; MySQL's Innodb_data_fsyncs counts every InnoDB fsync), so
	// the redo figure is used only when InnoDB's is missing.
	fs, hasF := 0.0, false
	innodb := []string{"data_fsyncs_trx", "binlog_fsyncs_trx"}
	if _, ok := m["data_fsyncs_trx"]; !ok {
		innodb[0] = "redo_fsyncs_trx"
	}
	for _, k := range innodb {
		if v, okV := m[k]; okV {
			fs += v
			hasF = true
		}
	}
	if aw, okA := m["disk_await_ms"]; okA && hasF {
		sec += fs * aw / 1000
		ok = true
	}
	if cpu, okC := m["server_cpu_us_trx"]; okC {
		sec += cpu / 1e6
		ok = true
	}
	return sec, ok
}

// Accounts is how much of a throughput difference the model accounts
// for.
type Accounts string

// The verdicts of the model against the measured difference.
const (
	AccountsEqual      Accounts = "equal"      // the throughput is about equal: nothing to account for
	AccountsNoFigures  Accounts = "no figures" // no fsync latency or server CPU figures
	AccountsNone       Accounts = "none"       // the model predicts none, or the opposite direction
	AccountsNegligible Accounts = "negligible" // at most 10 %
	AccountsOver       Accounts = "over"       // more than 150 %: group commit and parallel CPU are left out
	AccountsPart       Accounts = "accounts"   // the share in between
)

// Accounting is the model set against a pair's measured difference.
type Accounting struct {
	Verdict Accounts
	// TX, TY are the measured seconds per transaction per thread; PX, PY
	// the model's (with a model); Share is (PX-PY)/(TX-TY).
	TX, TY, PX, PY, Share float64
}

// Account sets the model against the measured difference of x and y.
func Account(x, y *LinkedCell) Accounting {
	a := Accounting{TX: float64(x.Threads) / x.TPS, TY: float64(y.Threads) / y.TPS}
	if math.Abs(x.TPS/y.TPS-1) < EqualTPS {
		a.Verdict = AccountsEqual
		return a
	}
	px, okX := PredictedSeconds(x.Mech)
	py, okY := PredictedSeconds(y.Mech)
	if !okX || !okY {
		a.Verdict = AccountsNoFigures
		return a
	}
	a.PX, a.PY = px, py
	a.Share = (px - py) / (a.TX - a.TY)
	switch {
	case a.Share <= 0:
		a.Verdict = AccountsNone
	case a.Share <= 0.1:
		a.Verdict = AccountsNegligible
	case a.Share > 1.5:
		a.Verdict = AccountsOver
	default:
		a.Verdict = AccountsPart
	}
	return a
}

// Growth is the verdict on a table's growth against what differs.
type Growth string

// The growth verdicts.
const (
	GrowthNone       Growth = "" // neither table grew (no line)
	GrowthIrrelevant Growth = "nothing to explain"
	GrowthSmall      Growth = "small"   // under LinkedSmallGrowth in both
	GrowthAlike      Growth = "alike"   // both grew within LinkedSmallGrowth of each other
	GrowthFollows    Growth = "follows" // about as much per transaction: it follows the throughput
	GrowthLarge      Growth = "large"   // large enough to take part in the difference
)

// Differs is what differs between two cells that growth could explain.
type Differs string

// What differs.
const (
	DiffersNothing Differs = ""
	DiffersStalls  Differs = "stalls"
	DiffersTPS     Differs = "tps"
)

// GrowthJudgement is a pair's growth judged.
type GrowthJudgement struct {
	Verdict Growth
	Differs Differs
	// PerX, PerY and Unit ("rows" or "KiB") are what each table gained per
	// transaction, when the growth follows the throughput.
	PerX, PerY float64
	Unit       string
}

// JudgeGrowth judges a table's growth in either cell against what differs.
func JudgeGrowth(x, y *LinkedCell) GrowthJudgement {
	if !x.Grown || !y.Grown {
		return GrowthJudgement{}
	}
	// The data's growth is judged on its rows where they were counted or
	// estimated: the allocated bytes move by whole extents and pages, a few
	// percent either way without a row more.
	grew := func(c *LinkedCell) float64 {
		if c.HasRows {
			return c.RowsGrew
		}
		return c.BytesGrew
	}
	gx, gy := grew(x), grew(y)
	if gx == 0 && gy == 0 {
		return GrowthJudgement{}
	}
	g := GrowthJudgement{Differs: DiffersTPS}
	if x.Stalls != y.Stalls {
		g.Differs = DiffersStalls
	} else if math.Abs(x.TPS/y.TPS-1) < EqualTPS {
		g.Differs = DiffersNothing
	}
	big := math.Max(math.Abs(gx), math.Abs(gy))
	switch {
	case g.Differs == DiffersNothing:
		g.Verdict = GrowthIrrelevant
	case big < LinkedSmallGrowth:
		g.Verdict = GrowthSmall
	case math.Abs(gx-gy) < LinkedSmallGrowth:
		g.Verdict = GrowthAlike
	default:
		g.Verdict = GrowthLarge
		a, b, unit, within := x.RowsPerTrx, y.RowsPerTrx, "rows", linkedSameGrowthPerTrx
		if !x.HasRows || !y.HasRows {
			a, b, unit, within = x.BytesPerTrx/1024, y.BytesPerTrx/1024, "KiB", linkedSameBytesPerTrx
		}
		if a > 0 && b > 0 && math.Abs(math.Log(a/b)) <= math.Log1p(within) {
			g.Verdict, g.PerX, g.PerY, g.Unit = GrowthFollows, a, b, unit
		}
	}
	return g
}
