package experiment

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func untilManifest(extra string) string {
	return strings.Replace(flushManifest, `warmup = "5s"`, "warmup = \"5s\"\n"+extra, 1)
}

func resolveText(t *testing.T, src string, f Flags) (*Plan, error) {
	t.Helper()
	m, err := Parse("until.toml", src)
	if err != nil {
		return nil, err
	}
	return Resolve(m, f)
}

func TestUntilDefaults(t *testing.T) {
	t.Parallel()
	p, err := resolveText(t, untilManifest(`until = "conclusive"`), Flags{})
	if err != nil {
		t.Fatal(err)
	}
	m := p.Manifest
	if m.Repeats != DefaultMinRounds || m.MaxRepeats != DefaultMaxRepeats || m.Precision != DefaultPrecision || m.Budget != 0 {
		t.Errorf("defaults: repeats %d, max_repeats %d, precision %g, budget %s", m.Repeats, m.MaxRepeats, m.Precision, m.Budget)
	}
	if p.Rounds() != DefaultMinRounds || len(p.Cells) != 6*DefaultMinRounds {
		t.Errorf("plan: %d rounds, %d cells", p.Rounds(), len(p.Cells))
	}
	// The manifest's keys, then the flags over them.
	src := untilManifest("until = \"conclusive\"\nrepeats = 4\nmax_repeats = 9\nbudget = \"10m\"\nprecision = 0.1")
	p, err = resolveText(t, src, Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if m := p.Manifest; m.Repeats != 4 || m.MaxRepeats != 9 || m.Budget != 10*time.Minute || m.Precision != 0.1 {
		t.Errorf("manifest keys: %+v", m)
	}
	b := 3 * time.Minute
	p, err = resolveText(t, src, Flags{MaxRepeats: 20, Budget: &b, Repeats: 5})
	if err != nil {
		t.Fatal(err)
	}
	if m := p.Manifest; m.Repeats != 5 || m.MaxRepeats != 20 || m.Budget != b {
		t.Errorf("flags: %+v", m)
	}
	// --until conclusive on a manifest without it.
	p, err = resolveText(t, flushManifest, Flags{Until: UntilConclusive})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Manifest.Conclusive() || p.Manifest.Repeats != DefaultMinRounds {
		t.Errorf("--until conclusive: %+v", p.Manifest)
	}
	// --until repeats turns it off: exactly repeats rounds.
	p, err = resolveText(t, src, Flags{Until: UntilRepeats})
	if err != nil {
		t.Fatal(err)
	}
	if p.Manifest.Conclusive() || p.Rounds() != 4 {
		t.Errorf("--until repeats: conclusive %v, %d rounds", p.Manifest.Conclusive(), p.Rounds())
	}
}

func TestUntilProblems(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src string
		flags     Flags
		key, msg  string
	}{
		{"unknown until", untilManifest(`until = "sure"`), Flags{}, "experiment.until", `"sure": want "conclusive"`},
		{"max_repeats zero", untilManifest("until = \"conclusive\"\nmax_repeats = 0"), Flags{}, "experiment.max_repeats", "between 1 and 100"},
		{"max_repeats text", untilManifest("until = \"conclusive\"\nmax_repeats = \"12\""), Flags{}, "experiment.max_repeats", "want an integer"},
		{"budget zero", untilManifest("until = \"conclusive\"\nbudget = \"0s\""), Flags{}, "experiment.budget", "more than 0"},
		{"budget text", untilManifest("until = \"conclusive\"\nbudget = \"soon\""), Flags{}, "experiment.budget", ""},
		{"precision one", untilManifest("until = \"conclusive\"\nprecision = 1.0"), Flags{}, "experiment.precision", "between 0 and 1"},
		{"max_repeats without until", untilManifest("max_repeats = 8"), Flags{}, "experiment.max_repeats", `only read with until = "conclusive"`},
		{"budget without until", untilManifest(`budget = "5m"`), Flags{}, "experiment.budget", `only read with until`},
		{"blocked order", untilManifest("until = \"conclusive\"\norder = \"blocked\""), Flags{}, "experiment.until", "blocked"},
		{"fewer max than repeats", untilManifest("until = \"conclusive\"\nrepeats = 5\nmax_repeats = 4"), Flags{}, "experiment.max_repeats", "fewer than repeats (5)"},
		{"nothing to decide", strings.Replace(untilManifest(`until = "conclusive"`), `baseline = "b1e1"`, "", 1), Flags{}, "experiment.until", "needs something to decide"},
		{"bad --until", flushManifest, Flags{Until: "later"}, "--until", "want conclusive or repeats"},
		{"bad --max-repeats", untilManifest(`until = "conclusive"`), Flags{MaxRepeats: 1000}, "--max-repeats", "between 1 and 100"},
		{"--max-repeats below --repeats", untilManifest(`until = "conclusive"`), Flags{MaxRepeats: 2, Repeats: 4}, "--max-repeats", "fewer than repeats (4)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := resolveText(t, c.src, c.flags)
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("want a manifest error, got %v", err)
			}
			found := false
			for _, p := range me.Problems {
				if p.Key == c.key && strings.Contains(p.Msg, c.msg) {
					found = true
					if !strings.HasPrefix(p.Key, "--") && p.Line == 0 {
						t.Errorf("%s: no line", p)
					}
				}
			}
			if !found {
				t.Errorf("no problem %s: %q in\n%v", c.key, c.msg, err)
			}
		})
	}
}

func TestWithRounds(t *testing.T) {
	t.Parallel()
	for _, order := range []string{"grouped", "written", "shuffled"} {
		p, err := resolveText(t, untilManifest("until = \"conclusive\"\norder = \""+order+"\""), Flags{})
		if err != nil {
			t.Fatal(err)
		}
		q, err := p.WithRounds(5)
		if err != nil {
			t.Fatal(err)
		}
		if q.Rounds() != 5 || len(q.Cells) != 6*5 {
			t.Fatalf("%s: %d rounds, %d cells", order, q.Rounds(), len(q.Cells))
		}
		for i, c := range p.Cells {
			if q.Cells[i].Name != c.Name || q.Cells[i].Repeat != c.Repeat || q.Cells[i].Change.Cost() != c.Change.Cost() {
				t.Errorf("%s: cell %d changed: %s #%d %s, was %s #%d %s", order, i, q.Cells[i].Name, q.Cells[i].Repeat, q.Cells[i].Change.Cost(), c.Name, c.Repeat, c.Change.Cost())
			}
		}
		// Even rounds run in reverse (a crossover), unless shuffled.
		mirrored := 0
		for i := 0; i < 6; i++ {
			if q.Cells[i].Name == q.Cells[6+5-i].Name {
				mirrored++
			}
		}
		if (mirrored == 6) != (order != "shuffled") {
			t.Errorf("%s: %d of 6 cells of round 2 mirror round 1", order, mirrored)
		}
		seen := map[string]int{}
		for _, c := range q.Cells[len(p.Cells):] {
			seen[c.Name]++
			if c.Repeat < 4 {
				t.Errorf("%s: appended cell %s has repeat %d", order, c.Name, c.Repeat)
			}
		}
		if len(seen) != 6 {
			t.Errorf("%s: the added rounds hold %d distinct cells, want every cell", order, len(seen))
		}
		// Growing one round at a time gives the same plan as growing at once.
		r, err := p.WithRounds(4)
		if err == nil {
			r, err = r.WithRounds(5)
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range q.Cells {
			if r.Cells[i].Name != q.Cells[i].Name || r.Cells[i].Repeat != q.Cells[i].Repeat {
				t.Fatalf("%s: cell %d differs growing by steps", order, i)
			}
		}
	}
}

func TestRoundsEstimate(t *testing.T) {
	t.Parallel()
	p, err := resolveText(t, untilManifest("until = \"conclusive\"\nmax_repeats = 10"), Flags{})
	if err != nil {
		t.Fatal(err)
	}
	least, per, most, err := p.RoundsEstimate()
	if err != nil {
		t.Fatal(err)
	}
	// Six cells of 30 s + 5 s warm-up each round.
	if per < 6*35*time.Second || least < 3*per || most != least+7*per {
		t.Errorf("estimate: least %s, per round %s, most %s", least, per, most)
	}
	b := least + per/2
	p, err = resolveText(t, untilManifest("until = \"conclusive\"\nmax_repeats = 10"), Flags{Budget: &b})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, most, _ := p.RoundsEstimate(); most != b {
		t.Errorf("with a budget of %s the most is %s", b, most)
	}
	var out strings.Builder
	if err := p.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "until conclusive: 3 round(s) at least") || !strings.Contains(out.String(), "at most 10 rounds, budget") {
		t.Errorf("plan text:\n%s", out.String())
	}
}
