package history

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// WriteCheck prints what `history check` found: per series and metric its
// change points, then the verdict line.
func WriteCheck(w io.Writer, checks []SeriesCheck, opt Options) error {
	ew := &errWriter{w: w}
	ew.printf("E-divisive means (alpha %g, %d permutations, significance %g, min segment %d runs",
		opt.Alpha, opt.Permutations, opt.Significance, opt.MinSize)
	if opt.MinChange > 0 {
		ew.printf(", min change %g%%", 100*opt.MinChange)
	}
	ew.printf("); the newest %d run(s) against the level before them: Mann-Whitney U on their repeats (t test without repeats)\n\n", opt.MinSize-1)
	var regressions []string
	for _, sc := range checks {
		n := len(sc.Points)
		ew.printf("%s (series %s, %d runs)\n", sc.Series.Name(), sc.Series.ID, n)
		any := false
		for _, mc := range sc.Metrics {
			for _, c := range mc.Changes {
				any = true
				ew.printf("  %s\n", changeLine(sc, mc.Metric, c))
				if len(c.Differs) > 0 {
					ew.printf("      also changed between those runs: %s\n", strings.Join(c.Differs, "; "))
				}
			}
			if r := mc.NewRegression; r != nil {
				regressions = append(regressions, fmt.Sprintf("%s %s %+.1f%% from run %d (%s)", sc.Series.Name(), mc.Metric.Name, 100*r.Change, r.Index+1, r.AfterRun.Ref()))
			}
		}
		if !any {
			if n < 2*opt.MinSize {
				ew.printf("  no change point (%d runs: E-divisive needs %d)\n", n, 2*opt.MinSize)
			} else {
				ew.printf("  no change point\n")
			}
		}
	}
	ew.printf("\n")
	if len(regressions) > 0 {
		ew.printf("REGRESSION among the newest runs: %s\n", strings.Join(regressions, "; "))
	} else {
		ew.printf("OK: no regression begins among the newest runs\n")
	}
	return ew.err
}

func changeLine(sc SeriesCheck, m Metric, c ChangePoint) string {
	kind := "improvement"
	if c.Regression {
		kind = "REGRESSION"
	}
	return fmt.Sprintf("%s: %s at run %d %s (after %s): %+.1f%%, %s -> %s %s, p %.3g (%s)",
		m.Name, kind, c.Index+1, refID(c.AfterRun), refID(c.BeforeRun), 100*c.Change,
		num(c.Before), num(c.After), m.Unit, c.P, c.Method)
}

func refID(p Point) string {
	if r := p.Ref(); r != p.RunID {
		return r + " [" + p.RunID + "]"
	}
	return "[" + p.RunID + "]"
}

func num(x float64) string {
	switch a := math.Abs(x); {
	case a >= 100:
		return fmt.Sprintf("%.0f", x)
	case a >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.3g", x)
	}
}

func valueText(v, lo, hi float64) string {
	if lo == 0 && hi == 0 {
		return num(v)
	}
	return fmt.Sprintf("%s (%s-%s)", num(v), num(lo), num(hi))
}

// WriteShow prints each series' last runs as a table (Markdown when asked),
// change points marked in the column of the metric that changed.
func WriteShow(w io.Writer, checks []SeriesCheck, last int, markdown bool) error {
	ew := &errWriter{w: w}
	for i, sc := range checks {
		if i > 0 {
			ew.printf("\n")
		}
		marks := map[int]map[string]string{} // point -> metric -> mark
		for _, mc := range sc.Metrics {
			for _, c := range mc.Changes {
				if marks[c.Index] == nil {
					marks[c.Index] = map[string]string{}
				}
				arrow := "▲"
				if c.Change < 0 {
					arrow = "▼"
				}
				marks[c.Index][mc.Metric.Name] = fmt.Sprintf(" %s%+.0f%%", arrow, 100*c.Change)
			}
		}
		header := []string{"#", "run", "started", "commit / label"}
		var ms []Metric
		for _, mc := range sc.Metrics {
			ms = append(ms, mc.Metric)
			header = append(header, mc.Metric.Name+" ("+mc.Metric.Unit+")")
		}
		from := 0
		if last > 0 && len(sc.Points) > last {
			from = len(sc.Points) - last
		}
		var rows [][]string
		for j := from; j < len(sc.Points); j++ {
			p := sc.Points[j]
			ref := p.Ref()
			if ref == p.RunID {
				ref = "-"
			}
			row := []string{fmt.Sprint(j + 1), p.RunID, shortTime(p.Started), ref}
			for _, m := range ms {
				v, lo, hi, ok := m.Value(p)
				cell := "-"
				if ok {
					cell = valueText(v, lo, hi) + marks[j][m.Name]
				}
				row = append(row, cell)
			}
			rows = append(rows, row)
		}
		title := fmt.Sprintf("%s (series %s, %d runs", sc.Series.Name(), sc.Series.ID, len(sc.Points))
		if from > 0 {
			title += fmt.Sprintf(", the last %d", len(sc.Points)-from)
		}
		title += ")"
		if markdown {
			ew.printf("### %s\n\n", title)
			ew.printf("| %s |\n", strings.Join(header, " | "))
			seps := make([]string, len(header))
			for k := range seps {
				seps[k] = "---"
				if k == 0 || k >= 4 {
					seps[k] = "---:"
				}
			}
			ew.printf("|%s|\n", strings.Join(seps, "|"))
			for _, r := range rows {
				for k := range r {
					r[k] = strings.ReplaceAll(r[k], "|", `\|`)
				}
				ew.printf("| %s |\n", strings.Join(r, " | "))
			}
			ew.printf("\n▲/▼: a change point (the first run of a new level) and its size; intervals are the range of the run's repeats (tps, p99) or the paired ratio's 95 %% interval.\n")
			continue
		}
		ew.printf("%s\n", title)
		widths := make([]int, len(header))
		for _, r := range append([][]string{header}, rows...) {
			for k, c := range r {
				widths[k] = max(widths[k], len([]rune(c)))
			}
		}
		line := func(r []string) {
			var b strings.Builder
			for k, c := range r {
				pad := strings.Repeat(" ", widths[k]-len([]rune(c)))
				if k == 0 || k >= 4 {
					b.WriteString(pad + c)
				} else {
					b.WriteString(c + pad)
				}
				if k+1 < len(r) {
					b.WriteString("  ")
				}
			}
			ew.printf("  %s\n", strings.TrimRight(b.String(), " "))
		}
		line(header)
		for _, r := range rows {
			line(r)
		}
	}
	return ew.err
}

func shortTime(s string) string {
	if len(s) >= 16 {
		return strings.Replace(s[:16], "T", " ", 1)
	}
	return s
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
