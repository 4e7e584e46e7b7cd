package record

import "fmt"

// What until = "conclusive" did (analysis/rounds.go decides it, results/rounds.go writes it).

// RoundsSpec is what the decisions need of the run's until settings.
type RoundsSpec struct {
	MinRounds int     `json:"min_rounds"`
	MaxRounds int     `json:"max_rounds"`
	Precision float64 `json:"precision"`
	// BudgetSeconds is the wall-time budget; 0 for none.
	BudgetSeconds float64 `json:"budget_seconds,omitempty"`
}

// RoundDecision is one comparison's state: x against y over the paired
// rounds.
type RoundDecision struct {
	// Label is "b0e1 vs b1e1", or an expectation's pair "b0e1 > b1e1".
	Label string `json:"label"`
	// Expectation is the expect entry (and its group) the pair belongs
	// to; empty for a scenario against the baseline.
	Expectation string `json:"expectation,omitempty"`
	Group       string `json:"group,omitempty"`
	X           string `json:"x"`
	Y           string `json:"y"`
	// Figure is the cells.csv column decided on: the cells' shared
	// headline (analysis.ComparisonFigure), or the expectation's column;
	// empty in a run.json written before: tps.
	Figure  string  `json:"figure,omitempty"`
	Alpha   float64 `json:"alpha"` // the pair's level (Bonferroni within an expectation)
	Pairs   int     `json:"pairs"`
	Outcome string  `json:"outcome"`
	// Within: the interval lies within the precision (also when the
	// difference is significant: small and sure).
	Within bool `json:"within_precision"`
	// Ratio is the Conclusion's estimate of x/y (Hodges-Lehmann of the
	// per-round ratios); CILo and CIHi the confidence sequence's bounds
	// of the median per-round ratio, 0 where a side is not bounded yet.
	Ratio float64 `json:"ratio"`
	CILo  float64 `json:"ci_lo"`
	CIHi  float64 `json:"ci_hi"`
	// DecidedBy names the test of the rule whose sequence decided: "t"
	// (the anytime-valid t-test, from the size of the differences),
	// "sign" (the exact sign test) or "sign+t"; empty while undecided or in
	// a run.json written before the rule had two tests.
	DecidedBy string `json:"decided_by,omitempty"`
	// SignOnlyRounds is when the sign test alone at the whole level (the
	// rule before the t-test joined it) decides these pairs the same way:
	// the round it did, or, when it did not within the rounds run, the
	// first round at which it could (a lower bound, SignOnlyAtLeast).
	SignOnlyRounds  int  `json:"sign_only_rounds,omitempty"`
	SignOnlyAtLeast bool `json:"sign_only_at_least,omitempty"`
	// Noise is the standard deviation of the per-round log ratios (about
	// the spread of a round's ratio, as a fraction): what plan's time to a
	// decision assumes (experiment.PlanNoise).
	Noise float64 `json:"noise,omitempty"`
}

// LengthRecord is what duration = "auto" chose after the first round.
type LengthRecord struct {
	PilotSeconds float64 `json:"pilot_seconds"` // what the first round measured
	Seconds      float64 `json:"seconds"`       // what the rounds after it measured
	Why          string  `json:"why"`
}

// RoundsRecord is run.json's "rounds": what until = "conclusive" did.
type RoundsRecord struct {
	RoundsSpec
	Method      string          `json:"method"`
	Rounds      int             `json:"rounds"`       // whole rounds finished
	WallSeconds float64         `json:"wall_seconds"` // the rounds' wall time
	Stopped     string          `json:"stopped"`
	Decisions   []RoundDecision `json:"decisions"`
	// Length is duration = "auto"'s choice; nil for a fixed duration.
	Length *LengthRecord `json:"duration_auto,omitempty"`
}

// CIText is the interval as "0.80–3.60" (0 and ∞ for an unbounded side;
// "none yet" before the looks can bound either).
func (d RoundDecision) CIText() string {
	if d.CILo == 0 && d.CIHi == 0 {
		return "none yet"
	}
	lo, hi := "0", "∞"
	if d.CILo > 0 {
		lo = fmt.Sprintf("%.2f", d.CILo)
	}
	if d.CIHi > 0 {
		hi = fmt.Sprintf("%.2f", d.CIHi)
	}
	return lo + "–" + hi
}
