package sequential

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestTEvidenceIsAMartingaleStart(t *testing.T) {
	t.Parallel()
	// With no evidence (t = 0) the mixture weighs against the alternative:
	// every term is (1 + n g)^(-1/2) < 1.
	for n := 2; n < 20; n++ {
		if e := TEvidence(n, 0); !(e > 0 && e < 1) {
			t.Errorf("n=%d: evidence at t=0 is %g, want in (0, 1)", n, e)
		}
		if TEvidence(n, 3) <= TEvidence(n, 2) {
			t.Errorf("n=%d: evidence not increasing in |t|", n)
		}
	}
}

func TestTTestCritical(t *testing.T) {
	t.Parallel()
	tt, err := NewTTest(0.025, 3, 12)
	if err != nil {
		t.Fatal(err)
	}
	if tt.FirstDecisive() != 3 {
		t.Errorf("first decisive look %d, want 3 (a 1.75x ratio with 2%% noise must be decidable at the first look)", tt.FirstDecisive())
	}
	for n := 3; n < 12; n++ {
		if !(tt.Crit[n+1] < tt.Crit[n]) {
			t.Errorf("critical |t| not decreasing: c_%d=%g, c_%d=%g", n, tt.Crit[n], n+1, tt.Crit[n+1])
		}
		if got := TEvidence(n, tt.Crit[n]); math.Abs(got-40) > 1e-6*40 {
			t.Errorf("n=%d: evidence at the critical value %g, want 40", n, got)
		}
	}
}

// Under the Gaussian null the mixture crosses 1/α with probability at
// most α over all looks (Ville); the exact rate here is well below it.
func TestTTestLevelGaussian(t *testing.T) {
	t.Parallel()
	tt, _ := NewTTest(0.05, 2, 50)
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 4000
	rejected := 0
	for range n {
		d := make([]float64, 0, 50)
		for k := 0; k < 50; k++ {
			d = append(d, 0.7+3*rng.NormFloat64())
			if iv := tt.Interval(d); !iv.Contains(0.7) {
				rejected++
				break
			}
		}
	}
	rate := float64(rejected) / n
	if rate > 0.05+3*math.Sqrt(0.05*0.95/n) {
		t.Errorf("type I error over 50 looks %.4f, above 5%%", rate)
	}
	t.Logf("Gaussian null, looks 2..50: the t sequence missed the mean in %.2f%% of %d sequences", 100*rate, n)
}

func TestRuleDecides(t *testing.T) {
	t.Parallel()
	r, err := NewRule(0.05, 3, 12)
	if err != nil {
		t.Fatal(err)
	}
	if r.FirstDecisive() != 3 || r.Sign.FirstDecisive() < 7 {
		t.Errorf("first decisive: rule %d, sign %d; want 3 and at least 7", r.FirstDecisive(), r.Sign.FirstDecisive())
	}
	// The field example: per-round ratios 1.72, 1.74, 1.78 after 3 rounds.
	d := []float64{math.Log(1.72), math.Log(1.74), math.Log(1.78)}
	dec := r.Decide(d, 0.05)
	if dec.Outcome != Higher || dec.By != ByT {
		t.Fatalf("1.72, 1.74, 1.78: %+v, want higher by the t-test", dec)
	}
	if !(math.Exp(dec.Interval.Lo) > 1.3 && math.Exp(dec.Interval.Hi) < 2.4) {
		t.Errorf("interval %.3f..%.3f", math.Exp(dec.Interval.Lo), math.Exp(dec.Interval.Hi))
	}
	// One stalled round among clear ones: the t-test falls silent and the
	// sign test has too few rounds.
	d = []float64{math.Log(1.72), math.Log(1.74), math.Log(0.3)}
	if dec := r.Decide(d, 0.05); dec.Outcome.Decided() {
		t.Errorf("with a stalled round: %+v, want undecided", dec)
	}
	// A/A with 1 % noise becomes "no difference within 5 %".
	d = []float64{0.004, -0.012, 0.009, -0.003, 0.006, -0.008}
	if dec := r.Decide(d, 0.05); dec.Outcome != Equivalent {
		t.Errorf("A/A: %+v, want equivalent", dec)
	}
	// The first rounds tight and far from the rest (a drift the pairing
	// did not cancel): the t-test's sequence, narrowed by the first looks,
	// keeps them; whenever the two sequences do not meet, the sign test's
	// stands alone.
	d = []float64{0.5, 0.51, 0.49, -0.01, -0.012, -0.011, -0.013, -0.01, -0.014, -0.011, -0.012, -0.01}
	dec = r.Decide(d, 0.05)
	if dec.Conflict != (dec.Sign.Lo > dec.T.Hi || dec.T.Lo > dec.Sign.Hi) || (dec.Conflict && dec.Interval != dec.Sign) {
		t.Errorf("conflict: %+v", dec)
	}
}
