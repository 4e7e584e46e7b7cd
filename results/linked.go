package results

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"benchmatrix/analysis"
	"benchmatrix/record"
	"benchmatrix/section"
)

// The mechanism linked to the outcome (issue 27, item 4). For each cell
// against its baseline, and each adjacent pair of an expected ordering, the
// Conclusion names the per-transaction figures that differ most and says
// whether they account for the throughput difference, with a stated model:
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

// Thresholds of the linked lines.
const (
	// linkedMinDiff is the smallest relative difference of a
	// per-transaction figure that is named (10 %).
	linkedMinDiff = 0.10
	// linkedTop is how many differing figures a line names.
	linkedTop = 3
	// linkedSmallGrowth: a table that grew less than this share of its
	// rows and of its bytes grew too little to explain a difference.
	linkedSmallGrowth = 0.05
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

// linkedCell is what the lines need of one cell: medians over its
// successful repeats.
type linkedCell struct {
	tps     float64
	threads int
	mech    map[string]float64
	// Growth: medians of the relative change of rows and bytes, the
	// measured seconds, and whether any repeat had growth figures.
	rowsGrew, bytesGrew, seconds float64
	rowsBefore, rowsAfter        float64
	// rowsPerTrx and bytesPerTrx are what the table gained per measured
	// transaction (medians; 0 when unknown): equal in two cells, the
	// growth follows the throughput instead of explaining it.
	rowsPerTrx, bytesPerTrx float64
	grown, hasRows          bool
	stalls, repeats         int
}

func linkedCells(r *record.Run) map[string]*linkedCell {
	med, _ := mechanismMedians(r)
	out := map[string]*linkedCell{}
	for _, s := range r.Summaries() {
		out[s.Name] = &linkedCell{tps: s.TPS, mech: med[s.Name]}
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
		lc.repeats++
		t := c.Workload.Common().Threads
		if t > 0 {
			threads[c.Name] = append(threads[c.Name], float64(t))
		}
		if c.Stalls != nil {
			lc.stalls += c.Stalls.Count
		}
		if g := c.Growth; g != nil {
			lc.grown = true
			if g.RowsBefore > 0 {
				lc.hasRows = true
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
		lc.threads = max(1, int(math.Round(medOr0(threads[name]))))
		lc.rowsGrew, lc.bytesGrew, lc.seconds = medOr0(rows[name]), medOr0(bytes[name]), medOr0(secs[name])
		lc.rowsBefore, lc.rowsAfter = medOr0(rb[name]), medOr0(ra[name])
		lc.rowsPerTrx, lc.bytesPerTrx = medOr0(rowsTrx[name]), medOr0(bytesTrx[name])
	}
	return out
}

// linkedLines are the Conclusion's "Mechanism and outcome" lines.
func linkedLines(r *record.Run, ratios []analysis.RatioLine) []string {
	pairs := analysis.ComparedPairs(r, ratios)
	if len(pairs) == 0 {
		return nil
	}
	cells := linkedCells(r)
	var out []string
	for _, p := range pairs {
		x, y := cells[p.Cell], cells[p.Ref]
		if x == nil || y == nil || x.tps <= 0 || y.tps <= 0 {
			continue
		}
		if s := linkedMechanismLine(p, x, y); s != "" {
			out = append(out, s)
		}
		if s := linkedGrowthLine(p, x, y); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// figureDiff is one per-transaction figure of two cells.
type figureDiff struct {
	words      string
	key        string
	x, y       float64
	logRatio   float64 // |log(x/y)|; +Inf when one is 0
	ratioWords string
}

// differing is the figures of x and y differing by more than linkedMinDiff,
// the largest relative difference first, at most linkedTop.
func differing(x, y map[string]float64) []figureDiff {
	var out []figureDiff
	for _, f := range linkedFigures {
		a, okA := x[f.key]
		b, okB := y[f.key]
		if !okA || !okB || (a == 0 && b == 0) {
			continue
		}
		d := figureDiff{words: f.words, key: f.key, x: a, y: b}
		switch {
		case a == 0 || b == 0:
			d.logRatio = math.Inf(1)
			d.ratioWords = "from none"
			if a == 0 {
				d.ratioWords = "to none"
			}
		default:
			rt := a / b
			if math.Abs(rt-1) < linkedMinDiff {
				continue
			}
			d.logRatio = math.Abs(math.Log(rt))
			d.ratioWords = fmt.Sprintf("×%.2f", rt)
			if rt < 0.01 {
				d.ratioWords = "×" + figure3(rt)
			}
		}
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].logRatio > out[j].logRatio })
	if len(out) > linkedTop {
		out = out[:linkedTop]
	}
	return out
}

// predictedSeconds is the model's time per transaction of one thread:
// fsyncs × await + server CPU; ok is false when the cell lacks both parts.
func predictedSeconds(m map[string]float64) (sec float64, ok bool) {
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

// linkedMechanismLine is "b0e1 against b1e1: tps ×2.01 (...); differs most
// in ...; the model ... accounts for about 85% of the difference".
func linkedMechanismLine(p analysis.CellPair, x, y *linkedCell) string {
	tr := x.tps / y.tps
	tx, ty := float64(x.threads)/x.tps, float64(y.threads)/y.tps // s per trx per thread
	head := fmt.Sprintf("%s against %s: tps ×%.2f (%s vs %s per transaction per thread)", p.Cell, p.Ref, tr, durText(tx), durText(ty))
	diffs := differing(x.mech, y.mech)
	if len(diffs) == 0 && len(x.mech) == 0 {
		return ""
	}
	var parts []string
	for _, d := range diffs {
		parts = append(parts, fmt.Sprintf("%s %s vs %s (%s)", d.words, figure3(d.x), figure3(d.y), d.ratioWords))
	}
	s := head
	if len(parts) > 0 {
		s += "; differs most in " + strings.Join(parts, ", ")
	} else {
		s += fmt.Sprintf("; no per-transaction figure differs by %.0f%% or more", linkedMinDiff*100)
	}
	if math.Abs(tr-1) < analysis.EqualTPS {
		return s + "; the throughput is about equal: nothing to account for"
	}
	px, okX := predictedSeconds(x.mech)
	py, okY := predictedSeconds(y.mech)
	if !okX || !okY {
		return s + "; no fsync latency or server CPU figures to account for the difference"
	}
	measured, predicted := tx-ty, px-py
	share := predicted / measured
	s += fmt.Sprintf("; predicted (fsyncs × device await + server CPU, per transaction) %s vs %s, a difference of %s against %s measured",
		durText(px), durText(py), signedDur(predicted), signedDur(measured))
	switch {
	case share <= 0:
		return s + ": it does not account for the difference (the model predicts none, or the opposite direction)"
	case share <= 0.1:
		return s + fmt.Sprintf(": it does not account for the difference (about %.0f%%)", share*100)
	case share > 1.5:
		return s + fmt.Sprintf(": it predicts %.0f%% of the difference, more than measured (group commit and parallel CPU are left out of the model)", share*100)
	}
	return s + fmt.Sprintf(": it accounts for about %.0f%% of the difference", share*100)
}

// signedDur is durText with a sign.
func signedDur(sec float64) string {
	if sec < 0 {
		return "−" + durText(-sec)
	}
	return "+" + durText(sec)
}

// linkedGrowthLine judges a table's growth in either cell against what
// differs: "autoinc against same: the table grew 1.0% of its rows (20000 →
// 20200) and 1.2% of its bytes in 60 s (same: 0.0%, 0.0%): too little to
// explain 3 stalls against 1 (a table under 5% larger barely changes the
// working set)". "" when neither cell's table grew.
func linkedGrowthLine(p analysis.CellPair, x, y *linkedCell) string {
	if !x.grown || !y.grown {
		return ""
	}
	// The data's growth is judged on its rows where they were counted or
	// estimated: the allocated bytes move by whole extents and pages, a few
	// percent either way without a row more.
	grew := func(c *linkedCell) float64 {
		if c.hasRows {
			return c.rowsGrew
		}
		return c.bytesGrew
	}
	gx, gy := grew(x), grew(y)
	if gx == 0 && gy == 0 {
		return ""
	}
	what := fmt.Sprintf("tps ×%.2f", x.tps/y.tps)
	if x.stalls != y.stalls {
		what = fmt.Sprintf("%d stall%s in %d repeat%s against %d in %d", x.stalls, section.Plural(x.stalls), x.repeats, section.Plural(x.repeats), y.stalls, y.repeats)
	} else if math.Abs(x.tps/y.tps-1) < analysis.EqualTPS {
		what = ""
	}
	s := fmt.Sprintf("%s against %s: the table grew %s of its bytes in %.0f s (%s: %s)",
		p.Cell, p.Ref, pct(x.bytesGrew), x.seconds, p.Ref, pct(y.bytesGrew))
	if x.hasRows && y.hasRows {
		s = fmt.Sprintf("%s against %s: the table grew %s of its rows (%.0f → %.0f; allocated bytes %s) in %.0f s (%s: rows %s, bytes %s)",
			p.Cell, p.Ref, pct(x.rowsGrew), x.rowsBefore, x.rowsAfter, pct(x.bytesGrew), x.seconds, p.Ref, pct(y.rowsGrew), pct(y.bytesGrew))
	}
	big := math.Max(math.Abs(gx), math.Abs(gy))
	apart := math.Abs(gx - gy)
	switch {
	case what == "":
		return s + ": nothing differs for it to explain"
	case big < linkedSmallGrowth:
		return s + fmt.Sprintf(": too little to explain %s (a table under %.0f%% larger barely changes the working set or the index depth)", what, linkedSmallGrowth*100)
	case apart < linkedSmallGrowth:
		return s + fmt.Sprintf(": both tables grew alike (within %.0f%%), so the growth does not explain %s", linkedSmallGrowth*100, what)
	}
	if per := followsThroughput(x, y); per != "" {
		return s + fmt.Sprintf(": the table grew by about as much per transaction in both (%s), so the growth follows the throughput rather than explains %s", per, what)
	}
	return s + fmt.Sprintf(": large enough to take part in the difference (%s; more data to read, write and keep in the buffer pool per transaction)", what)
}

// linkedSameGrowthPerTrx is how close two cells' growth per transaction
// must be for the growth to count as following the throughput: rows within
// 25%; allocated bytes, which move by whole pages and extents (measured:
// one row per transaction of oltp_insert allocated 0.3 to 1.2 KiB per
// transaction over 11 repeats of one cell), within 50%.
const linkedSameGrowthPerTrx, linkedSameBytesPerTrx = 0.25, 0.5

// followsThroughput says, when two cells' tables gained about as much per
// transaction (rows where counted, else bytes), what each gained ("1.00 vs
// 1.00 rows per transaction"); "" otherwise. Such growth is the workload's
// own (an insert workload grows its table in step with its transactions):
// the faster cell grew more because it ran more transactions.
func followsThroughput(x, y *linkedCell) string {
	a, b, unit, within := x.rowsPerTrx, y.rowsPerTrx, "rows", linkedSameGrowthPerTrx
	if !x.hasRows || !y.hasRows {
		a, b, unit, within = x.bytesPerTrx/1024, y.bytesPerTrx/1024, "KiB", linkedSameBytesPerTrx
	}
	if a <= 0 || b <= 0 || math.Abs(math.Log(a/b)) > math.Log1p(within) {
		return ""
	}
	return fmt.Sprintf("%s vs %s %s per transaction", figure3(a), figure3(b), unit)
}

// pct is a signed share as "+1.0%".
func pct(v float64) string { return fmt.Sprintf("%+.1f%%", v*100) }

// figure3 prints a per-transaction figure with three significant digits
// (whole numbers from 100 up, never in e-notation).
func figure3(v float64) string {
	if math.Abs(v) >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
