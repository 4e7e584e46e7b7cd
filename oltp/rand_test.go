package oltp

import (
	"math"
	"regexp"
	"testing"
)

func drawMany(t *testing.T, kind string, n int, a, b uint32) []uint32 {
	t.Helper()
	o := DefaultOptions()
	o.RandType = kind
	d, err := NewDist(o)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRand(42, 0)
	out := make([]uint32, n)
	for i := range out {
		v := d.Draw(r, a, b)
		if v < a || v > b {
			t.Fatalf("%s: %d outside [%d, %d]", kind, v, a, b)
		}
		out[i] = v
	}
	return out
}

func TestSpecialMatchesSysbench1020(t *testing.T) {
	// §1.5: over 10^6 draws on 1..10000, 75% land on the ~75 ids
	// 4976..5050, and only ~12.5%..83.5% of the range is ever drawn.
	vs := drawMany(t, DistSpecial, 1_000_000, 1, 10000)
	hot, lo, hi := 0, uint32(math.MaxUint32), uint32(0)
	for _, v := range vs {
		if v >= 4976 && v <= 5050 {
			hot++
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	if f := float64(hot) / float64(len(vs)); f < 0.74 || f > 0.77 {
		t.Errorf("hot window share = %.4f, want ≈0.75", f)
	}
	if lo < 1000 || hi > 9000 {
		t.Errorf("drawn range %d..%d, want roughly 1250..8350", lo, hi)
	}
	// The window is 0.75% wide, not the nominal 1%: nothing from the
	// uniform branch lands below a+0.4975t.
	under := 0
	for _, v := range vs {
		if v >= 4950 && v < 4975 {
			under++
		}
	}
	if float64(under)/float64(len(vs)) > 0.005 {
		t.Errorf("%d draws just left of the window: the 1%% window is not shifted", under)
	}
}

func TestDistributionShapes(t *testing.T) {
	const n = 400_000
	const N = 10000
	mean := func(vs []uint32) float64 {
		s := 0.0
		for _, v := range vs {
			s += float64(v)
		}
		return s / float64(len(vs))
	}
	std := func(vs []uint32, m float64) float64 {
		s := 0.0
		for _, v := range vs {
			s += (float64(v) - m) * (float64(v) - m)
		}
		return math.Sqrt(s / float64(len(vs)))
	}
	tests := []struct {
		kind  string
		check func(t *testing.T, vs []uint32)
	}{
		{DistUniform, func(t *testing.T, vs []uint32) {
			var dec [10]int
			for _, v := range vs {
				dec[(v-1)*10/N]++
			}
			for i, c := range dec {
				if f := float64(c) / n; math.Abs(f-0.1) > 0.003 {
					t.Errorf("decile %d has %.4f of draws", i, f)
				}
			}
		}},
		{DistGaussian, func(t *testing.T, vs []uint32) {
			m := mean(vs)
			if math.Abs(m-N/2) > 20 {
				t.Errorf("mean %.1f, want ≈%d", m, N/2)
			}
			if s := std(vs, m); math.Abs(s-N/12.0) > 0.03*N/12 {
				t.Errorf("stddev %.1f, want ≈%.1f (range/12)", s, N/12.0)
			}
		}},
		{DistPareto, func(t *testing.T, vs []uint32) {
			low := 0
			for _, v := range vs {
				if v <= N/5 {
					low++
				}
			}
			if f := float64(low) / n; math.Abs(f-0.8) > 0.01 {
				t.Errorf("share in the lowest 20%% = %.3f, want 0.8 (h=0.2)", f)
			}
		}},
		{DistZipfian, func(t *testing.T, vs []uint32) {
			var c1, c2, c10 int
			for _, v := range vs {
				switch v {
				case 1:
					c1++
				case 2:
					c2++
				case 10:
					c10++
				}
			}
			// P(k) ∝ k^−0.8.
			if r := float64(c1) / float64(c2); math.Abs(r-math.Pow(2, 0.8)) > 0.08 {
				t.Errorf("P(1)/P(2) = %.3f, want %.3f", r, math.Pow(2, 0.8))
			}
			if r := float64(c1) / float64(c10); math.Abs(r-math.Pow(10, 0.8))/math.Pow(10, 0.8) > 0.08 {
				t.Errorf("P(1)/P(10) = %.3f, want %.3f", r, math.Pow(10, 0.8))
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			tc.check(t, drawMany(t, tc.kind, n, 1, N))
		})
	}
}

func TestRandReproducible(t *testing.T) {
	a, b, c := NewRand(7, 3), NewRand(7, 3), NewRand(7, 4)
	same := 0
	for i := 0; i < 1000; i++ {
		x, y, z := a.Uint64(), b.Uint64(), c.Uint64()
		if x != y {
			t.Fatal("same seed and stream diverged")
		}
		if x == z {
			same++
		}
	}
	if same > 0 {
		t.Fatal("different streams agree")
	}
}

func TestUniqueIsDistinctAndSeeded(t *testing.T) {
	u, v := NewUnique(99), NewUnique(99)
	seen := make(map[uint32]bool, 200000)
	for i := 0; i < 200000; i++ {
		x := u.Next()
		if seen[x] {
			t.Fatalf("repeat %d after %d draws", x, i)
		}
		seen[x] = true
		if y := v.Next(); y != x {
			t.Fatal("same seed, different sequence")
		}
	}
}

func TestDigits(t *testing.T) {
	r := NewRand(1, 0)
	c, pad := make([]byte, cLen), make([]byte, padLen)
	cRE := regexp.MustCompile(`^([0-9]{11}-){9}[0-9]{11}$`)
	padRE := regexp.MustCompile(`^([0-9]{11}-){4}[0-9]{11}$`)
	var freq [10]int
	for i := 0; i < 2000; i++ {
		r.Digits(c, 11)
		r.Digits(pad, 11)
		if !cRE.Match(c) || !padRE.Match(pad) {
			t.Fatalf("c %q pad %q", c, pad)
		}
		for _, b := range c {
			if b != '-' {
				freq[b-'0']++
			}
		}
	}
	for d, f := range freq {
		if share := float64(f) / (2000 * 110); math.Abs(share-0.1) > 0.005 {
			t.Errorf("digit %d share %.4f", d, share)
		}
	}
}
