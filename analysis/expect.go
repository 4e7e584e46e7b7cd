package analysis

import (
	"fmt"
	"math"
	"strings"

	"benchmatrix/experiment"
	"benchmatrix/record"
)

// Expectations are the run's expect entries, from the stored manifest (so
// `report` on a stored run checks them too); an entry that does not parse
// is left out.
func Expectations(r *record.Run) []experiment.Expectation {
	if r.Manifest == "" {
		return nil
	}
	m, err := experiment.Parse(r.ManifestPath, r.Manifest)
	if err != nil {
		return nil
	}
	var out []experiment.Expectation
	for _, text := range m.Expect {
		if e, err := experiment.ParseExpect(text); err == nil {
			out = append(out, e)
		}
	}
	return out
}

// ExpectGroup maps each term's name to a cell name within one group of
// cells sharing axis values.
type ExpectGroup struct {
	Label string
	Cells []string // per term
}

// ExpectGroups are the groups of cells an expectation is checked on: one
// per set of axis values of the scenarios it names.
func ExpectGroups(e experiment.Expectation, sums []record.Summary) []ExpectGroup {
	byName := map[string]bool{}
	for _, s := range sums {
		byName[s.Name] = true
	}
	// Axis suffixes of the scenarios named, in run order.
	var suffixes []string
	seen := map[string]bool{}
	for _, s := range sums {
		for _, t := range e.Terms {
			if !byName[t.Name] && s.Scenario == t.Name {
				suf := TrimScenario(s.Name, s.Scenario)
				if !seen[suf] {
					seen[suf] = true
					suffixes = append(suffixes, suf)
				}
			}
		}
	}
	if len(suffixes) == 0 {
		suffixes = []string{""}
	}
	var out []ExpectGroup
	for _, suf := range suffixes {
		g := ExpectGroup{Label: suf}
		for _, t := range e.Terms {
			name := t.Name
			if !byName[name] {
				name = t.Name + "/" + suf
				if suf == "" {
					name = t.Name
				}
			}
			g.Cells = append(g.Cells, name)
		}
		out = append(out, g)
	}
	return out
}

// TermText is a term as expectations' decisions name it: "b1e1",
// "1.5×b1e1".
func TermText(t experiment.ExpectTerm) string {
	if t.Factor == 1 {
		return t.Name
	}
	return fmt.Sprintf("%g×%s", t.Factor, t.Name)
}

// Expectation statuses.
const (
	ExpectHeld     = "held"
	ExpectBroken   = "broken"
	ExpectNotShown = "not shown"
)

// ExpectResult is one expectation checked on one group of cells (the cells
// sharing axis values; "" when there are no axes).
type ExpectResult struct {
	Text   string `json:"text"`
	Group  string `json:"group,omitempty"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// JudgeExpectations checks the manifest's expect entries (parsed from
// the stored manifest text, so `report` on a stored run checks them too).
func JudgeExpectations(r *record.Run, br map[string]map[int]*record.Cell) []ExpectResult {
	var out []ExpectResult
	for _, e := range Expectations(r) {
		for _, g := range ExpectGroups(e, r.Summaries()) {
			out = append(out, judgeOne(e, g, br))
		}
	}
	return out
}

// judgeOne checks one expectation on one group of cells at a fixed number
// of rounds (the signed-rank test of each pair).
func judgeOne(e experiment.Expectation, g ExpectGroup, br map[string]map[int]*record.Cell) ExpectResult {
	res := ExpectResult{Text: e.Text, Group: g.Label, Status: ExpectHeld}
	var details []string
	for i, op := range e.Ops {
		l, r := e.Terms[i], e.Terms[i+1]
		lc, rc := g.Cells[i], g.Cells[i+1]
		// "fl·L < fr·R" holds when R/L > fl/fr; ">" the other way round.
		hi, lo, hiF, loF := rc, lc, r.Factor, l.Factor
		hiName, loName := r, l
		if op == ">" {
			hi, lo, hiF, loF = lc, rc, l.Factor, r.Factor
			hiName, loName = l, r
		}
		xs, ys := PairedValues(br, hi, lo, e.Column)
		target := loF / hiF
		for j := range ys {
			ys[j] *= target
		}
		pr := RatioFromPairs(xs, ys)
		status := ExpectNotShown
		switch {
		case pr.Rounds == 0:
		case pr.Ratio > 1 && pr.P < Alpha:
			status = ExpectHeld
		case pr.Ratio < 1 && pr.P < Alpha:
			status = ExpectBroken
		}
		lhs := TermText(hiName)
		rhs := TermText(loName)
		d := fmt.Sprintf("%s / %s = %.2f", lhs, rhs, pr.Ratio)
		if pr.Rounds == 0 {
			d = fmt.Sprintf("%s vs %s: no paired rounds", lhs, rhs)
		} else {
			d += fmt.Sprintf(" (p=%s, in %d of %d rounds)", FormatP(pr.P), pr.Above, pr.Rounds)
		}
		details = append(details, d)
		switch {
		case status == ExpectBroken:
			res.Status = ExpectBroken
		case status == ExpectNotShown && res.Status == ExpectHeld:
			res.Status = ExpectNotShown
		}
	}
	res.Detail = strings.Join(details, "; ")
	if e.Column != "tps" {
		res.Detail = e.Column + ": " + res.Detail
	}
	return res
}

// DecideExpectations makes the rounds' decisions the expectations' status
// in a conclusive run, so that summary.md, run.json and run --check agree
// with the sequential test rather than with a fixed-rounds test that
// looking after every round makes too optimistic: an expectation holds
// when every pair of it was decided the expected way, is broken when a pair
// was decided the other way, and is not shown otherwise.
func DecideExpectations(es []ExpectResult, rec *record.RoundsRecord) {
	if rec == nil {
		return
	}
	for i := range es {
		e := &es[i]
		var pairs []record.RoundDecision
		for _, d := range rec.Decisions {
			if d.Expectation == e.Text && d.Group == e.Group {
				pairs = append(pairs, d)
			}
		}
		if len(pairs) == 0 {
			continue
		}
		status := ExpectHeld
		for _, d := range pairs {
			switch {
			case d.Outcome == OutcomeSlower:
				status = ExpectBroken
			case d.Outcome != OutcomeFaster && status == ExpectHeld:
				status = ExpectNotShown
			}
		}
		e.Status = status
		e.Detail += fmt.Sprintf("; decided by the rounds' sequential test over %d round", rec.Rounds)
		if rec.Rounds != 1 {
			e.Detail += "s"
		}
	}
}

// FormatP is a p-value as the reports print it: "<0.001", "0.031", "-".
func FormatP(p float64) string {
	switch {
	case math.IsNaN(p):
		return "-"
	case p < 0.001:
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}
