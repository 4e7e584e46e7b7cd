package results

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"benchmatrix/engine"
	"benchmatrix/features"
	"benchmatrix/record"
	"benchmatrix/results/htmlreport"
	"benchmatrix/section"
)

// ReportFile is the results directory's HTML report: one self-contained
// page (docs/report.md).
const ReportFile = "report.html"

// WriteHTML writes dir/report.html for r from the directory's own files
// (intervals.csv, the linked graphs), replacing it atomically.
func WriteHTML(dir string, r *record.Run) error {
	p, err := runPage(dir, r)
	if err != nil {
		return fmt.Errorf("%s: %w", ReportFile, err)
	}
	var b bytes.Buffer
	if err := htmlreport.Write(&b, p); err != nil {
		return fmt.Errorf("%s: %w", ReportFile, err)
	}
	return section.WriteFileAtomic(filepath.Join(dir, ReportFile), b.Bytes())
}

// RegenerateHTML rewrites only dir/report.html from run.json and
// intervals.csv (`benchmatrix report DIR --html`).
func RegenerateHTML(dir string) error {
	r, err := ReadRun(dir)
	if err != nil {
		return err
	}
	return WriteHTML(dir, derive(dir, r))
}

// htmlOverrides are the summary.md sections the page shows its own way:
// the plots become interactive charts. Every other section of
// summarySections is rendered from its Markdown, so a feature's section
// reaches the page without the page knowing it.
func htmlOverrides() map[string]func(dir string, r *record.Run, ivs map[string][]IntervalPoint) []htmlreport.Part {
	return map[string]func(string, *record.Run, map[string][]IntervalPoint) []htmlreport.Part{
		"plots": func(dir string, r *record.Run, ivs map[string][]IntervalPoint) []htmlreport.Part {
			return seriesParts([]sourceRun{{run: r, ivs: ivs}})
		},
	}
}

func runPage(dir string, r *record.Run) (*htmlreport.Page, error) {
	ivs, err := ReadIntervals(dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	p := &htmlreport.Page{
		Title:     r.Experiment,
		Subtitle:  strings.TrimSpace(r.Description),
		ReadFile:  readUnder(dir),
		Generator: r.Tool.Name + " " + r.Tool.Version,
	}
	p.Sections = markdownSections(dir, r, ivs, "")
	p.Sections = append(p.Sections, filesSection(dir, r, ""))
	return p, nil
}

// readUnder reads a file by its slash path relative to dir, refusing one
// outside it.
func readUnder(dir string) func(rel string) ([]byte, error) {
	return func(rel string) ([]byte, error) {
		clean := filepath.Clean(filepath.FromSlash(rel))
		if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("%s: outside the results directory", rel)
		}
		return os.ReadFile(filepath.Join(dir, clean))
	}
}

// markdownSections are the page's sections: summary.md's, in its order,
// each rendered from its Markdown (its "## " heading becomes the section's
// title), the plots replaced by charts. linkDir is where the run's files
// are relative to the page ("" for its own directory).
func markdownSections(dir string, r *record.Run, ivs map[string][]IntervalPoint, linkDir string) []htmlreport.Section {
	over := htmlOverrides()
	var out []htmlreport.Section
	used := map[string]int{}
	for _, s := range summarySections() {
		if s.Applies != nil && !s.Applies(r) {
			continue
		}
		if f, ok := over[s.Title]; ok {
			parts := f(dir, r, ivs)
			if len(parts) > 0 {
				out = append(out, htmlreport.Section{ID: sectionID(s.Title, used), Title: "Over time", Parts: parts})
			}
			continue
		}
		var b bytes.Buffer
		if err := s.Write(&b, r); err != nil {
			out = append(out, htmlreport.Section{ID: sectionID(s.Title, used), Title: s.Title,
				Parts: []htmlreport.Part{{Text: "could not be written: " + err.Error()}}})
			continue
		}
		md := b.String()
		if s.Title == "title and status" {
			// The page's header has the name and description: keep the status.
			var keep []string
			for _, l := range strings.Split(md, "\n") {
				if strings.HasPrefix(l, "Status:") {
					keep = append(keep, l)
				}
			}
			md = strings.Join(keep, "\n")
		}
		if strings.TrimSpace(md) == "" {
			continue
		}
		title, body := splitHeading(md)
		if title == "" && s.Title != "title and status" {
			title = s.Title
		}
		sec := htmlreport.Section{ID: sectionID(s.Title, used), Title: title, Parts: []htmlreport.Part{{Markdown: body, Dir: linkDir}}}
		if s.Title == "repeats" {
			if ch := repeatsChart(r, sec.ID); ch != nil {
				sec.Parts = append(sec.Parts, htmlreport.Part{Chart: ch})
			}
		}
		out = append(out, sec)
	}
	return out
}

func sectionID(title string, used map[string]int) string {
	id := "s-" + strings.ReplaceAll(strings.ToLower(title), " ", "-")
	used[id]++
	if n := used[id]; n > 1 {
		id += "-" + strconv.Itoa(n)
	}
	return id
}

// splitHeading takes the heading that opens a section's Markdown ("## "
// or, for a section that is a sub-part of another in summary.md, "### ").
func splitHeading(md string) (title, body string) {
	lines := strings.Split(md, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		for _, h := range []string{"## ", "### "} {
			if strings.HasPrefix(l, h) {
				return strings.TrimSpace(strings.TrimPrefix(l, h)), strings.Join(lines[i+1:], "\n")
			}
		}
		break
	}
	return "", md
}

// sourceRun is a run whose series a page draws; prefix names its cells
// when a page draws two runs ("base: ", "new: ").
type sourceRun struct {
	prefix string
	run    *record.Run
	ivs    map[string][]IntervalPoint
}

// seriesKey is a cell's key in the page (its legend switch).
func seriesKey(prefix, cell string) string { return prefix + cell }

// htmlMarkSources are the features' marks drawn on every time chart for a
// cell run (a node event's line); a new one is its function and a line.
func htmlMarkSources() []func(key string, c record.Cell) []htmlreport.Mark {
	return []func(string, record.Cell) []htmlreport.Mark{
		func(key string, c record.Cell) []htmlreport.Mark { // the features' (a topology's node events)
			var out []htmlreport.Mark
			for _, f := range features.Reports {
				if f.Marks == nil {
					continue
				}
				for _, m := range f.Marks(c) {
					out = append(out, htmlreport.Mark{Key: key, X: m.At, Label: fmt.Sprintf("%s: t=%.1fs %s", c.Name, m.At, m.Label)})
				}
			}
			return out
		},
	}
}

// timePanel is one chart of the time axis: its label and its value.
type timePanel struct {
	id, title, label string
	value            func(IntervalPoint) float64
}

// seriesParts are the legend and the charts of the runs' per-second
// series on one shared time axis: tps, p95 latency, the features' panels
// (seriesPanelSources, as in plots/series*.png), then every sampled metric
// column, grouped by its "nodeN." prefix (a topology's panels per node).
func seriesParts(srcs []sourceRun) []htmlreport.Part {
	type runPts struct {
		src    sourceRun
		cell   record.Cell
		points []IntervalPoint
	}
	var runs []runPts
	var keys []string
	seen := map[string]bool{}
	repeats := map[string]int{}
	failed := map[string]int{}
	for _, s := range srcs {
		for _, c := range s.run.Cells {
			k := seriesKey(s.prefix, c.Name)
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
			if c.Status != record.CellOK {
				failed[k]++
				continue
			}
			repeats[k]++
			runs = append(runs, runPts{src: s, cell: c, points: s.ivs[RunKey(c.Name, c.Repeat)]})
		}
	}
	if len(runs) == 0 {
		return nil
	}
	colors := htmlreport.Palette(len(keys))
	color := map[string]string{}
	legend := &htmlreport.Legend{}
	for i, k := range keys {
		color[k] = colors[i]
		note := ""
		if n := repeats[k]; n > 1 {
			note = fmt.Sprintf("(%d repeats)", n)
		}
		if n := failed[k]; n > 0 {
			note = strings.TrimSpace(note + fmt.Sprintf(" (%d failed)", n))
		}
		legend.Items = append(legend.Items, htmlreport.LegendItem{Key: k, Label: k, Color: colors[i], Note: note})
	}

	// The panels: the built-in two, the features', then every metric.
	panels := []timePanel{
		{"tps", "tps per second", "tps", func(p IntervalPoint) float64 { return p.TPS }},
		{"p95", "p95 latency per second", "p95 latency, ms", func(p IntervalPoint) float64 {
			if !(p.TPS > 0) || !(p.P95 > 0) {
				return math.NaN()
			}
			return p.P95
		}},
	}
	var cellRuns []cellRun
	for _, rp := range runs {
		cellRuns = append(cellRuns, cellRun{cell: rp.cell, points: rp.points})
	}
	var captions []string
	for _, src := range seriesPanelSources() {
		ps, caption := src(srcs[0].run, cellRuns)
		for _, sp := range ps {
			panels = append(panels, timePanel{id: "f-" + sp.label, title: sp.label, label: sp.label, value: sp.value})
		}
		if caption != "" {
			captions = append(captions, strings.TrimSpace(caption))
		}
	}
	var metricCols []string
	seenCol := map[string]bool{}
	for _, s := range srcs {
		for _, col := range append(slices.Clone(s.run.MetricColumns), s.run.UserMetrics...) {
			if !seenCol[col] {
				seenCol[col] = true
				metricCols = append(metricCols, col)
			}
		}
	}
	// Columns found in intervals.csv but not named in run.json still show.
	var extra []string
	for _, rp := range runs {
		for _, p := range rp.points {
			for col := range p.Metrics {
				if !seenCol[col] {
					seenCol[col] = true
					extra = append(extra, col)
				}
			}
		}
	}
	slices.Sort(extra)
	metricCols = append(metricCols, extra...)

	maxT, warmEnd := 0.0, 0.0
	for _, rp := range runs {
		for _, p := range rp.points {
			maxT = math.Max(maxT, p.T)
			if p.Phase == string(engine.PhaseWarmup) {
				warmEnd = math.Max(warmEnd, p.T)
			}
		}
	}
	if maxT <= 0 {
		maxT = 1
	}
	var bands []htmlreport.Band
	if warmEnd > 0 {
		bands = append(bands, htmlreport.Band{From: 0, To: warmEnd, Color: "#888", Title: "warm-up (excluded from the results)"})
	}
	var marks []htmlreport.Mark
	for _, rp := range runs {
		k := seriesKey(rp.src.prefix, rp.cell.Name)
		for _, sp := range stallSpans(rp.cell, rp.points) {
			bands = append(bands, htmlreport.Band{Key: k, From: sp[0], To: sp[1], Color: color[k],
				Title: fmt.Sprintf("%s (repeat %d): stall %.0f-%.0f s", k, rp.cell.Repeat, sp[0], sp[1])})
		}
		for _, src := range htmlMarkSources() {
			marks = append(marks, src(k, rp.cell)...)
		}
	}

	chart := func(tp timePanel, id string) (*htmlreport.Chart, bool) {
		ch := &htmlreport.Chart{ID: id, Title: tp.title, YLabel: tp.label, XLabel: "seconds since the cell started (warm-up included)",
			Axis: "time", XMin: 0, XMax: maxT, Bands: bands, Marks: marks}
		any := false
		for _, rp := range runs {
			k := seriesKey(rp.src.prefix, rp.cell.Name)
			s := htmlreport.Series{Key: k, Label: k, Color: color[k], Thin: rp.cell.Repeat > 1, DashUntil: 0}
			if rp.cell.Repeat > 1 {
				s.Label += fmt.Sprintf(" (repeat %d)", rp.cell.Repeat)
			}
			for _, p := range rp.points {
				v := tp.value(p)
				s.X = append(s.X, p.T)
				s.Y = append(s.Y, v)
				any = any || !math.IsNaN(v)
				if p.Phase == string(engine.PhaseWarmup) {
					s.DashUntil = math.Max(s.DashUntil, p.T)
				}
			}
			ch.Series = append(ch.Series, s)
		}
		ch.Log = htmlreport.NeedsLog(ch.Series)
		return ch, any
	}

	parts := []htmlreport.Part{{Text: "Per second since each cell started: hover a chart for the values at that second, drag across one to zoom " +
		"(every chart follows; double-click or \"reset zoom\" to go back), switch cells on and off in the legend. " +
		"The warm-up is shaded grey and its line dashed (excluded from the results); a stall the detector found in the measured window " +
		"is shaded in its cell's colour; later repeats are drawn thin. A chart whose cells differ by more than ten times has a log axis."},
		{Legend: legend}}
	for _, c := range captions {
		parts = append(parts, htmlreport.Part{Text: c})
	}
	n := 0
	nextID := func() string { n++; return "chart-" + strconv.Itoa(n) }
	for _, tp := range panels {
		if ch, ok := chart(tp, nextID()); ok {
			parts = append(parts, htmlreport.Part{Chart: ch})
		}
	}
	// Every sampled metric, folded: unprefixed ones together, a node's
	// ("node2.seconds_behind") in that node's group.
	groups := map[string]*htmlreport.Group{}
	var order []string
	for _, col := range metricCols {
		group := "Every sampled metric"
		if i := strings.Index(col, "."); i > 0 {
			group = "Per node: " + col[:i]
		}
		ch, ok := chart(timePanel{title: col, label: col, value: func(p IntervalPoint) float64 {
			if v, ok := p.Metrics[col]; ok {
				return v
			}
			return math.NaN()
		}}, nextID())
		if !ok {
			continue
		}
		g, ok := groups[group]
		if !ok {
			g = &htmlreport.Group{Title: group}
			groups[group] = g
			order = append(order, group)
		}
		g.Parts = append(g.Parts, htmlreport.Part{Chart: ch})
	}
	for _, name := range order {
		g := groups[name]
		g.Title = fmt.Sprintf("%s (%d charts, the intervals.csv columns)", g.Title, len(g.Parts))
		parts = append(parts, htmlreport.Part{Group: g})
	}
	return parts
}

// repeatsChart draws each cell's tps per repeat in the order the repeats
// ran: the spread the Repeats table summarises, and any trend over them.
func repeatsChart(r *record.Run, id string) *htmlreport.Chart {
	var keys []string
	byKey := map[string][][2]float64{}
	maxRep := 0
	for _, c := range r.Cells {
		if _, ok := byKey[c.Name]; !ok {
			keys = append(keys, c.Name)
			byKey[c.Name] = nil
		}
		if c.Status == record.CellOK && c.Result != nil {
			byKey[c.Name] = append(byKey[c.Name], [2]float64{float64(c.Repeat), c.Result.TPS()})
			maxRep = max(maxRep, c.Repeat)
		}
	}
	if maxRep < 2 {
		return nil
	}
	colors := htmlreport.Palette(len(keys))
	ch := &htmlreport.Chart{ID: id + "-chart", Title: "tps per repeat, in the order they ran", YLabel: "tps (measured window)",
		XLabel: "repeat", Axis: "repeat", XMin: 0.5, XMax: float64(maxRep) + 0.5, IntegerX: true, Markers: true}
	for i, k := range keys {
		pts := byKey[k]
		slices.SortFunc(pts, func(a, b [2]float64) int { return int(a[0] - b[0]) })
		s := htmlreport.Series{Key: k, Label: k, Color: colors[i]}
		for _, p := range pts {
			s.X = append(s.X, p[0])
			s.Y = append(s.Y, p[1])
		}
		ch.Series = append(ch.Series, s)
	}
	ch.Log = htmlreport.NeedsLog(ch.Series)
	return ch
}

// filesSection links the results directory's files (relative to the
// page: linkDir is the run's directory from there).
func filesSection(dir string, r *record.Run, linkDir string) htmlreport.Section {
	var links []htmlreport.Link
	add := func(rel, note string) {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
			return
		}
		href := rel
		if linkDir != "" {
			href = filepath.ToSlash(filepath.Join(linkDir, rel))
		}
		links = append(links, htmlreport.Link{Href: href, Label: rel, Note: note})
	}
	add(CellsFile, "one row per cell and repeat")
	add(IntervalsFile, "one row per cell, repeat and second, with every sampled metric")
	add(RunFile, "the whole record: manifest, plan, environment, every cell")
	add(SummaryFile, "this report as Markdown")
	add(BenchFile, "Go benchmark format, for benchstat")
	for _, f := range PlotFiles(r) {
		add(f.Path, f.Title)
	}
	if _, err := os.Stat(filepath.Join(dir, "profiles")); err == nil {
		add("profiles", "folded stacks, flame graphs, pprof")
	}
	return htmlreport.Section{ID: "s-files", Title: "Files", Parts: []htmlreport.Part{{Links: links}}}
}

// WriteCompareHTML writes a comparison's page to out: the differences
// first (compare's own tables), then both runs' series on one time axis
// (each cell twice: "base: NAME" and "new: NAME"), then the two runs side
// by side (Conclusion, Results, Mechanism, Environment), then their files.
func WriteCompareHTML(out, baseDir, newDir string, base, new *record.Run, cmp *Comparison) error {
	var md bytes.Buffer
	if err := WriteComparison(&md, cmp, true); err != nil {
		return err
	}
	pageDir := filepath.Dir(out)
	rel := func(dir string) string {
		a, err1 := filepath.Abs(dir)
		b, err2 := filepath.Abs(pageDir)
		if err1 != nil || err2 != nil {
			return filepath.ToSlash(dir)
		}
		r, err := filepath.Rel(b, a)
		if err != nil {
			return filepath.ToSlash(a)
		}
		return filepath.ToSlash(r)
	}
	baseIvs, err := ReadIntervals(baseDir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	newIvs, err := ReadIntervals(newDir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	_, body := splitHeading(md.String())
	p := &htmlreport.Page{
		Title:     "compare: " + new.Experiment,
		Subtitle:  fmt.Sprintf("base %s (%s), new %s (%s)", base.Experiment, baseDir, new.Experiment, newDir),
		Generator: new.Tool.Name + " " + new.Tool.Version,
	}
	p.Sections = append(p.Sections, htmlreport.Section{ID: "s-differences", Title: "Differences: new against base",
		Parts: []htmlreport.Part{{Markdown: body}}})
	if parts := seriesParts([]sourceRun{{prefix: "base: ", run: base, ivs: baseIvs}, {prefix: "new: ", run: new, ivs: newIvs}}); len(parts) > 0 {
		p.Sections = append(p.Sections, htmlreport.Section{ID: "s-over-time", Title: "Over time, both runs", Parts: parts})
	}
	side := map[string]bool{"conclusion": true, "environment": true, "results": true, "mechanism": true}
	column := func(title, dir string, r *record.Run) htmlreport.Column {
		col := htmlreport.Column{Title: title}
		for _, s := range summarySections() {
			if !side[s.Title] || (s.Applies != nil && !s.Applies(r)) {
				continue
			}
			var b bytes.Buffer
			if err := s.Write(&b, r); err != nil {
				continue
			}
			h, body := splitHeading(b.String())
			if h != "" {
				body = "### " + h + "\n\n" + body
			}
			col.Parts = append(col.Parts, htmlreport.Part{Markdown: body, Dir: rel(dir)})
		}
		return col
	}
	p.Sections = append(p.Sections, htmlreport.Section{ID: "s-side-by-side", Title: "The two runs side by side",
		Parts: []htmlreport.Part{{Columns: []htmlreport.Column{column("base: "+baseDir, baseDir, base), column("new: "+newDir, newDir, new)}}}})
	fb, fn := filesSection(baseDir, base, rel(baseDir)), filesSection(newDir, new, rel(newDir))
	p.Sections = append(p.Sections, htmlreport.Section{ID: "s-files", Title: "Files", Parts: []htmlreport.Part{{Columns: []htmlreport.Column{
		{Title: "base", Parts: fb.Parts}, {Title: "new", Parts: fn.Parts}}}}})
	var b bytes.Buffer
	if err := htmlreport.Write(&b, p); err != nil {
		return err
	}
	return section.WriteFileAtomic(out, b.Bytes())
}
