package profile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"benchmatrix/analysis"
	"benchmatrix/record"
	"benchmatrix/section"
)

// Report is what the profiles add to a run's reports: summary.md's
// "Profiles" section, after the plots; the Conclusion's lines of the
// profiles' predictions against the measured ratios; and, before the
// reports are written, the predictions themselves (Run.Profiles), computed
// from the folded stacks under the results directory.
var Report = section.Feature{
	Name:     "profile",
	Derive:   withProfiles,
	Sections: []section.Section{{Title: "profiles", After: "plots", Write: func(w io.Writer, r *record.Run) error { writeProfiles(w, r); return nil }}},
	Linked:   profileLinkedLines,
}

// ProfilesDir holds the profiles of a run's cells: one directory per cell
// run (profiles/CELL-rREPEAT/) with cpu.* and offcpu.* (folded stacks, a
// flame graph SVG, a pprof protobuf), and one per cell (profiles/CELL/)
// with the differential flame graphs against the baseline.
const ProfilesDir = "profiles"

// TopFunctions is how many functions a cell's profile lists in summary.md.
const TopFunctions = 8

// plumbing frames hold nearly all of a thread's time by construction (the
// thread's start, the syscall entry, the scheduler): not worth a line in
// the top functions.
var plumbing = regexp.MustCompile(`^(\[.*\]|start_thread|clone3?|__clone|do_syscall_64|entry_SYSCALL_64.*|__schedule|schedule|handle_one_connection|do_handle_one_connection|do_command|exit_to_user_mode.*|syscall_exit_to_user_mode)$`)

// CellProfileDir is the directory of one cell run's profiles, relative to
// the results directory.
func CellProfileDir(cell string, repeat int) string {
	return filepath.Join(ProfilesDir, fmt.Sprintf("%s-r%d", fileSafe(cell), repeat))
}

func fileSafe(s string) string {
	return strings.Trim(regexp.MustCompile(`[^A-Za-z0-9_.=-]+`).ReplaceAllString(s, "_"), "_")
}

// WriteModeProfile writes one recording of a cell run under outDir: the
// folded stacks, the flame graph and the pprof protobuf, and returns what
// summary.md says of it. A profile with no samples is written as an
// empty folded file and said to be empty; no graph is drawn.
func WriteModeProfile(outDir, cell string, repeat int, p *Profile, seconds float64) (*record.ModeProfile, error) {
	rel := CellProfileDir(cell, repeat)
	if err := os.MkdirAll(filepath.Join(outDir, rel), 0o755); err != nil {
		return nil, err
	}
	mode := string(p.Mode)
	mp := &record.ModeProfile{Records: p.Records, Seconds: float64(p.Total()) / 1e9, Empty: p.Empty()}
	var b bytes.Buffer
	if err := p.WriteFolded(&b); err != nil {
		return nil, err
	}
	mp.Folded = filepath.Join(rel, mode+".folded")
	if err := section.WriteFileAtomic(filepath.Join(outDir, mp.Folded), b.Bytes()); err != nil {
		return nil, err
	}
	if mp.Empty {
		return mp, nil
	}
	mp.Kinds = p.Kinds()
	top := p
	if p.Has(KindConnection) {
		top, mp.TopKind = p.Only(KindConnection), KindConnection
	}
	for _, f := range top.Top(4 * TopFunctions) {
		if !plumbing.MatchString(f.Name) && len(mp.Top) < TopFunctions {
			mp.Top = append(mp.Top, f)
		}
	}
	b.Reset()
	title := fmt.Sprintf("%s (repeat %d): %s", cell, repeat, p.Mode.Unit())
	if err := WriteFlameGraph(&b, p, title); err != nil {
		return nil, err
	}
	mp.SVG = filepath.Join(rel, mode+".svg")
	if err := section.WriteFileAtomic(filepath.Join(outDir, mp.SVG), b.Bytes()); err != nil {
		return nil, err
	}
	b.Reset()
	if err := WritePprof(&b, p, seconds); err != nil {
		return nil, err
	}
	mp.Pprof = filepath.Join(rel, mode+".pb.gz")
	if err := section.WriteFileAtomic(filepath.Join(outDir, mp.Pprof), b.Bytes()); err != nil {
		return nil, err
	}
	return mp, nil
}

// withProfiles is the run with its ProfileReport, computed from the
// folded stacks under dir (the differential graphs are written there).
// A run without profiles is returned as it is.
func withProfiles(dir string, r *record.Run) *record.Run {
	has := false
	for _, c := range r.Cells {
		has = has || c.Profile != nil
	}
	if !has {
		return r
	}
	cp := *r
	cp.Profiles = profileReport(dir, r)
	return &cp
}

func profileReport(dir string, r *record.Run) *record.ProfileReport {
	rep := &record.ProfileReport{}
	sums := r.Summaries()
	byName := map[string]record.Summary{}
	for _, s := range sums {
		byName[s.Name] = s
	}
	seen := map[[2]string]bool{}
	if r.Baseline != "" {
		for _, s := range sums {
			if !profiled(r, s.Name) {
				continue
			}
			bname := analysis.BaselineFor(r.Baseline, s, sums)
			if bname == "" || bname == s.Name || !profiled(r, bname) {
				continue
			}
			seen[[2]string{s.Name, bname}] = true
			rep.Comparisons = append(rep.Comparisons, profileComparison(dir, r, s, byName[bname], sums, "baseline", rep))
		}
	}
	// Each adjacent pair of an expected ordering ("b1e1 < b0e1 < b0e0":
	// b0e1 against b1e1, b0e0 against b0e1), the faster against the
	// slower, when the baseline comparisons did not make it already.
	for _, p := range analysis.ComparedPairs(r, nil) {
		if seen[[2]string{p.Cell, p.Ref}] || seen[[2]string{p.Ref, p.Cell}] || !profiled(r, p.Cell) || !profiled(r, p.Ref) {
			continue
		}
		seen[[2]string{p.Cell, p.Ref}] = true
		ref := byName[p.Ref]
		rep.Comparisons = append(rep.Comparisons, profileComparison(dir, r, byName[p.Cell], ref, sums, fileSafe(ref.Scenario), rep))
	}
	return rep
}

// profileComparison predicts cell s against cell b from their profiles,
// beside the measured ratios; its differential graphs are named
// diff-vs-<vs>-cpu.svg and -offcpu.svg in s's directory.
func profileComparison(dir string, r *record.Run, s, b record.Summary, sums []record.Summary, vs string, rep *record.ProfileReport) record.ProfileComparison {
	bname := b.Name
	pc := record.ProfileComparison{Cell: s.Name, Baseline: bname}
	if b.TPS > 0 && s.Runs > 0 {
		pc.Measured = s.TPS / b.TPS
	}
	tw, tb := twinOf(s, sums), twinOf(b, sums)
	if tw.Runs > 0 && tb.Runs > 0 && tb.TPS > 0 {
		pc.Unprofiled = tw.TPS / tb.TPS
	}
	scCPU, errs1 := loadProfiles(dir, r, s.Name, OnCPU)
	bCPU, errs2 := loadProfiles(dir, r, bname, OnCPU)
	scOff, errs3 := loadProfiles(dir, r, s.Name, OffCPU)
	bOff, errs4 := loadProfiles(dir, r, bname, OffCPU)
	rep.Notes = append(rep.Notes, errs1...)
	rep.Notes = append(rep.Notes, errs2...)
	rep.Notes = append(rep.Notes, errs3...)
	rep.Notes = append(rep.Notes, errs4...)
	ddir := filepath.Join(ProfilesDir, fileSafe(s.Name))
	if vs == "" {
		vs = "ref"
	}
	if !scCPU.Empty() && !bCPU.Empty() {
		p := Predict(bCPU, scCPU)
		pc.CPU = &p
		pc.DiffCPU = writeDiff(dir, ddir, "diff-vs-"+vs+"-cpu.svg", bCPU, scCPU, s.Name, bname, &rep.Notes)
	}
	if !scOff.Empty() && !bOff.Empty() {
		pc.DiffOffCPU = writeDiff(dir, ddir, "diff-vs-"+vs+"-offcpu.svg", bOff, scOff, s.Name, bname, &rep.Notes)
		if !scCPU.Empty() && !bCPU.Empty() {
			p := Predict(Add(bCPU, bOff), Add(scCPU, scOff))
			pc.Both = &p
		}
	}
	return pc
}

// twinOf finds a profiled cell's unprofiled twin: the same scenario and
// parameters, with profile = "off".
func twinOf(s record.Summary, sums []record.Summary) record.Summary {
	want := otherParams(s.Params, "profile")
	for _, o := range sums {
		if v, ok := paramValue(o.Params, "profile"); ok && v == "off" && o.Scenario == s.Scenario && otherParams(o.Params, "profile") == want {
			return o
		}
	}
	return record.Summary{}
}

func profiled(r *record.Run, name string) bool {
	for _, c := range r.Cells {
		if c.Name == name && c.Profile != nil {
			return true
		}
	}
	return false
}

// loadProfiles sums the profiles of every successful repeat of a cell in
// one mode, read back from their folded stacks.
func loadProfiles(dir string, r *record.Run, name string, mode Mode) (*Profile, []string) {
	var sum *Profile
	var notes []string
	for _, c := range r.Cells {
		if c.Name != name || c.Status != record.CellOK || c.Profile == nil {
			continue
		}
		mp := c.Profile.CPU
		if mode == OffCPU {
			mp = c.Profile.OffCPU
		}
		if mp == nil || mp.Folded == "" || mp.Empty {
			continue
		}
		f, err := os.Open(filepath.Join(dir, mp.Folded))
		if err != nil {
			notes = append(notes, fmt.Sprintf("profile of %s (repeat %d): %v", name, c.Repeat, err))
			continue
		}
		period := int64(1e9) / int64(DefaultHz)
		if c.Profile.CPU != nil && c.Profile.CPU.Records > 0 {
			period = int64(c.Profile.CPU.Seconds * 1e9 / float64(c.Profile.CPU.Records))
		}
		p, err := ReadFolded(f, mode, period)
		f.Close()
		if err != nil {
			notes = append(notes, fmt.Sprintf("profile of %s (repeat %d): %v", name, c.Repeat, err))
			continue
		}
		sum = addProfiles(sum, p)
	}
	return sum, notes
}

func addProfiles(a, b *Profile) *Profile {
	if a == nil {
		return b
	}
	s := Add(a, b)
	s.Mode = a.Mode
	return s
}

// writeDiff draws the differential flame graph of the threads the
// prediction compares (the connection threads when both have them: the
// background threads' sleep would swamp them).
func writeDiff(dir, rel, name string, base, scen *Profile, cell, bname string, notes *[]string) string {
	var b bytes.Buffer
	title := fmt.Sprintf("%s against %s", cell, bname)
	if base.Has(KindConnection) && scen.Has(KindConnection) {
		base, scen = base.Only(KindConnection), scen.Only(KindConnection)
		title += ", connection threads"
	}
	if err := WriteDiffFlameGraph(&b, base, scen, title); err != nil {
		if !errors.Is(err, ErrEmpty) {
			*notes = append(*notes, fmt.Sprintf("differential graph of %s: %v", cell, err))
		}
		return ""
	}
	if err := os.MkdirAll(filepath.Join(dir, rel), 0o755); err != nil {
		*notes = append(*notes, err.Error())
		return ""
	}
	p := filepath.Join(rel, name)
	if err := section.WriteFileAtomic(filepath.Join(dir, p), b.Bytes()); err != nil {
		*notes = append(*notes, err.Error())
		return ""
	}
	return p
}

// writeProfiles is summary.md's "Profiles" section: the prediction per
// scenario, what the profiler and the sampler cost, and per cell run its
// top functions with links to its graphs.
func writeProfiles(w io.Writer, r *record.Run) {
	var cells []record.Cell
	for _, c := range r.Cells {
		if c.Profile != nil {
			cells = append(cells, c)
		}
	}
	costs := costTable(r, "profile")
	obs := costTable(r, "observe")
	if len(cells) == 0 && costs == nil && obs == nil {
		return
	}
	fmt.Fprintf(w, "\n## Profiles: where the time goes\n\n")
	if pr := r.Profiles; pr != nil && len(pr.Comparisons) > 0 {
		fmt.Fprintf(w, "### Predicted against measured\n\n")
		fmt.Fprintf(w, "Each scenario against the baseline, and each adjacent pair of an expected ordering (the faster against the slower, in vs). "+
			"The share of vs's time in call paths the cell no longer spends time in "+
			"(held at least %.1f%% of vs's time, and less than a tenth of that share in the cell), "+
			"the tps ratio that removing that time predicts (1 / (1 - share), for a closed loop whose transactions take the profiled time), "+
			"and the measured ratio: under the profiler, and between the unprofiled twins. "+
			"Threads: the connection threads' time when both profiles have them.\n\n", 100*MinGoneShare)
		fmt.Fprintf(w, "| cell | vs | time | gone share | predicted | measured (profiled) | measured (unprofiled) | largest gone paths | diff graph |\n")
		fmt.Fprintf(w, "|---|---|---|---:|---:|---:|---:|---|---|\n")
		for _, c := range pr.Comparisons {
			for _, row := range []struct {
				label string
				p     *Prediction
				svg   string
			}{{"on-CPU", c.CPU, c.DiffCPU}, {"on+off-CPU", c.Both, c.DiffOffCPU}} {
				if row.p == nil {
					continue
				}
				unp := "-"
				if c.Unprofiled > 0 {
					unp = fmt.Sprintf("%.3f", c.Unprofiled)
				}
				link := "-"
				if row.svg != "" {
					link = fmt.Sprintf("[svg](%s)", filepath.ToSlash(row.svg))
				}
				fmt.Fprintf(w, "| %s | %s | %s | %.1f%% | %.3f | %.3f | %s | %s | %s |\n", c.Cell, c.Baseline, row.label,
					100*row.p.Share, row.p.Ratio, c.Measured, unp, gonePaths(row.p.Gone, 3), link)
			}
		}
		fmt.Fprintf(w, "\nThe on+off diff graph is the off-CPU one (where the threads waited); the on-CPU one is the cpu graph.\n")
	}
	writeCostTable(w, "The profiler's cost", "profiled", "unprofiled twin", costs,
		"Each profiled cell ran beside an unprofiled twin (NAME/profile=off), interleaved; with/without is the median tps ratio over the paired repeats.")
	writeCostTable(w, "The 1 Hz sampler's cost", "observe=true", "observe=false", obs,
		"Cells with observe=true and observe=false side by side (the observe axis).")
	if len(cells) > 0 {
		fmt.Fprintf(w, "\n### Per cell: top functions by inclusive share\n\n")
		fmt.Fprintf(w, "Of the connection threads' time (all threads' when they could not be told apart); thread starts, syscall entry and the scheduler left out.\n\n")
		for _, c := range cells {
			fmt.Fprintf(w, "- **%s** (repeat %d), %s profile over %.0f s:\n", c.Name, c.Repeat, c.Profile.Mode, c.Profile.Seconds)
			for _, mp := range []struct {
				label string
				m     *record.ModeProfile
			}{{"on-CPU", c.Profile.CPU}, {"off-CPU", c.Profile.OffCPU}} {
				if mp.m == nil {
					continue
				}
				if mp.m.Empty {
					fmt.Fprintf(w, "  - %s: no samples captured (%d records): nothing to draw\n", mp.label, mp.m.Records)
					continue
				}
				var tops []string
				for _, f := range mp.m.Top {
					tops = append(tops, fmt.Sprintf("%s %.1f%%", mdEscape(f.Name), 100*f.Share))
				}
				fmt.Fprintf(w, "  - %s (%.2f s; %s): %s. [svg](%s) · [pprof](%s) · [folded](%s)\n", mp.label, mp.m.Seconds,
					kindsText(mp.m.Kinds), strings.Join(tops, ", "), filepath.ToSlash(mp.m.SVG), filepath.ToSlash(mp.m.Pprof), filepath.ToSlash(mp.m.Folded))
			}
			for _, n := range c.Profile.Notes {
				fmt.Fprintf(w, "  - note: %s\n", n)
			}
		}
	}
	if pr := r.Profiles; pr != nil {
		for _, n := range pr.Notes {
			fmt.Fprintf(w, "- note: %s\n", n)
		}
	}
}

func gonePaths(gs []Gone, n int) string {
	var out []string
	for i, g := range gs {
		if i == n {
			out = append(out, fmt.Sprintf("and %d more", len(gs)-n))
			break
		}
		name := g.Frame
		if g.Caller != "" {
			name = g.Caller + " → " + g.Frame
		}
		out = append(out, fmt.Sprintf("%s %.1f%%", mdEscape(name), 100*g.Share))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "; ")
}

func kindsText(ks []KindShare) string {
	var out []string
	for _, k := range ks {
		out = append(out, fmt.Sprintf("%s %.0f%%", k.Kind, 100*k.Share))
	}
	return strings.Join(out, ", ")
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`).Replace(s)
}

// costRow is one cell with a parameter on and off: its tps both ways and
// the per-repeat ratios.
type costRow struct {
	Cell     string
	On, Off  float64 // median tps
	Ratio    float64 // median of the paired ratios
	Ratios   []float64
	Scenario string
}

// costTable pairs the cells that differ only in key (profile: a profiled
// cell and its "off" twin; observe: true and false), per repeat; each value
// other than off/false (cpu, offcpu, both) is paired with the off cell.
func costTable(r *record.Run, key string) []costRow {
	type pair struct {
		on, off map[int]float64
		name    string
		sc      string
	}
	offs := map[string]map[int]float64{}
	pairs := map[string]*pair{}
	var order []string
	for _, c := range r.Cells {
		if c.Status != record.CellOK || c.Result == nil {
			continue
		}
		val, ok := paramValue(c.Params, key)
		if !ok {
			continue
		}
		k := c.Scenario + "|" + otherParams(c.Params, key)
		if val == "off" || val == "false" {
			if offs[k] == nil {
				offs[k] = map[int]float64{}
			}
			offs[k][c.Repeat] = c.Result.TPS()
			continue
		}
		p := pairs[k+"|"+val]
		if p == nil {
			p = &pair{on: map[int]float64{}, sc: c.Scenario, name: c.Name}
			pairs[k+"|"+val] = p
			order = append(order, k+"|"+val)
		}
		p.on[c.Repeat] = c.Result.TPS()
	}
	var rows []costRow
	for _, pk := range order {
		p := pairs[pk]
		k := pk[:strings.LastIndex(pk, "|")]
		p.off = offs[k]
		if len(p.on) == 0 || len(p.off) == 0 {
			continue
		}
		row := costRow{Cell: p.name, Scenario: p.sc}
		var on, off []float64
		for rep, t := range p.on {
			on = append(on, t)
			if o, ok := p.off[rep]; ok && o > 0 {
				row.Ratios = append(row.Ratios, t/o)
			}
		}
		for _, t := range p.off {
			off = append(off, t)
		}
		row.On, row.Off = record.Median(on), record.Median(off)
		if len(row.Ratios) == 0 {
			continue
		}
		sort.Float64s(row.Ratios)
		row.Ratio = record.Median(row.Ratios)
		rows = append(rows, row)
	}
	return rows
}

func paramValue(ps []record.Param, name string) (string, bool) {
	for _, p := range ps {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

func otherParams(ps []record.Param, skip string) string {
	var out []string
	for _, p := range ps {
		if p.Name != skip {
			out = append(out, p.Name+"="+p.Value)
		}
	}
	return strings.Join(out, ",")
}

// CostVerdict says whether a cost differs between cells by more than the
// noise: the spread of the paired ratios within each cell (the largest
// half-range over the cells; with one repeat there is none to measure, and
// it says so).
func CostVerdict(rows []costRow) (differs bool, spread, noise float64, known bool) {
	if len(rows) < 2 {
		return false, 0, 0, false
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		lo, hi = math.Min(lo, r.Ratio), math.Max(hi, r.Ratio)
		if n := len(r.Ratios); n >= 2 {
			noise = math.Max(noise, (r.Ratios[n-1]-r.Ratios[0])/2)
			known = true
		}
	}
	spread = hi - lo
	return known && spread > 2*noise, spread, noise, known
}

func writeCostTable(w io.Writer, title, on, off string, rows []costRow, how string) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### %s\n\n%s\n\n", title, how)
	fmt.Fprintf(w, "| cell | tps %s | tps %s | with/without | paired repeats, sorted |\n|---|---:|---:|---:|---|\n", on, off)
	for _, r := range rows {
		var rs []string
		for _, x := range r.Ratios {
			rs = append(rs, fmt.Sprintf("%.3f", x))
		}
		fmt.Fprintf(w, "| %s | %.1f | %.1f | %.3f | %s |\n", r.Cell, r.On, r.Off, r.Ratio, strings.Join(rs, ", "))
	}
	differs, spread, noise, known := CostVerdict(rows)
	switch {
	case !known:
		fmt.Fprintf(w, "\nThe cost's noise is not known (one repeat per cell): whether it differs between cells cannot be told; run with --repeats 3 or more.\n")
	case differs:
		fmt.Fprintf(w, "\n**The cost differs between cells by more than the noise** (with/without spans %.3f; the repeats of one cell spread ±%.3f): "+
			"ratios between cells measured under it are biased; compare the unprofiled (or unobserved) cells.\n", spread, noise)
	default:
		fmt.Fprintf(w, "\nThe cost does not differ between cells by more than the noise (with/without spans %.3f; the repeats of one cell spread ±%.3f).\n", spread, noise)
	}
}

// profileLinkedLines are the Conclusion's lines of the profile
// predictions: per comparison (each scenario against the baseline, each
// adjacent pair of an expected ordering), the ratio the time gone from the
// profiles predicts against the measured one, and whether it accounts for
// it. The on+off-CPU prediction when there is one (a wait for an fsync is
// off-CPU), else the on-CPU one; the unprofiled twins' ratio when they
// ran (the profiler slows cells unequally), else the profiled cells'.
func profileLinkedLines(r *record.Run) []string {
	if r.Profiles == nil {
		return nil
	}
	var out []string
	for _, c := range r.Profiles.Comparisons {
		p, time := c.Both, "on+off-CPU"
		if p == nil {
			p, time = c.CPU, "on-CPU"
		}
		measured, which := c.Unprofiled, "unprofiled twins"
		if measured <= 0 {
			measured, which = c.Measured, "profiled cells"
		}
		if p == nil || measured <= 0 {
			continue
		}
		line := fmt.Sprintf("%s against %s, from the profiles (%s time): %.1f%% of %s's time is in call paths %s no longer runs%s, which predicts %.2fx; measured %.2fx (%s)",
			c.Cell, c.Baseline, time, 100*p.Share, c.Baseline, c.Cell, goneBrief(p.Gone), p.Ratio, measured, which)
		switch q := p.Ratio / measured; {
		case math.Abs(measured-1) < analysis.EqualTPS && math.Abs(p.Ratio-1) < analysis.EqualTPS:
			line += ": no difference, and none predicted"
		case math.Abs(measured-1) < analysis.EqualTPS:
			line += ": no difference measured, so the time gone was not on the transactions' path"
		case q >= 0.85 && q <= 1/0.85:
			line += ": the time gone accounts for the difference"
		case q < 0.85:
			line += fmt.Sprintf(": the time gone accounts for part of it (%.0f%% of the measured change, in log terms); the rest is time spent differently, not gone", 100*math.Log(p.Ratio)/math.Log(measured))
		default:
			line += ": the time gone predicts more than was measured (other work took part of its place)"
		}
		out = append(out, line)
	}
	return out
}

// goneBrief names the largest gone frames: " (binlog_sync 40%, ...)".
func goneBrief(g []Gone) string {
	if len(g) == 0 {
		return ""
	}
	var parts []string
	for i, x := range g {
		if i == 2 {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.0f%%", x.Frame, 100*x.Share))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
