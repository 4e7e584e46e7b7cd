package analysis

import (
	"fmt"

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
