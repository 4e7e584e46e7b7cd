package oltp

import (
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// Rand is one worker's pseudo-random generator: xoroshiro128+, as sysbench
// uses per thread (reference/sysbench.md §1.5). It is not safe for
// concurrent use; every worker owns one.
type Rand struct{ s0, s1 uint64 }

// splitmix64 expands a seed into well-mixed state words.
func splitmix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// NewRand returns a generator whose sequence depends only on seed and
// stream: stream i of one seed is worker i's generator.
func NewRand(seed int64, stream int) *Rand {
	x := uint64(seed) ^ (uint64(stream)+1)*0xd1b54a32d192ed03
	r := &Rand{s0: splitmix64(&x), s1: splitmix64(&x)}
	if r.s0 == 0 && r.s1 == 0 {
		r.s1 = 1
	}
	return r
}

// Uint64 returns the next 64 random bits.
func (r *Rand) Uint64() uint64 {
	s0, s1 := r.s0, r.s1
	res := s0 + s1
	s1 ^= s0
	r.s0 = bits.RotateLeft64(s0, 55) ^ s1 ^ (s1 << 14)
	r.s1 = bits.RotateLeft64(s1, 36)
	return res
}

// Float64 is uniform in [0, 1), from the top 53 bits like sysbench's
// sb_rand_uniform_double.
func (r *Rand) Float64() float64 { return float64(r.Uint64()>>11) * 0x1p-53 }

// Uniform is sysbench.rand.uniform(a, b): a + floor(U·(b−a+1)).
func (r *Rand) Uniform(a, b uint32) uint32 {
	return uint32(float64(a) + r.Float64()*float64(b-a+1))
}

// Digits fills dst with groups of per random decimal digits separated by
// '-': sysbench.rand.string("###########-…") for c (10 groups of 11) and pad
// (5 groups of 11). len(dst) must be groups·(per+1)−1.
func (r *Rand) Digits(dst []byte, per int) {
	var x uint64
	left := 0
	for i := range dst {
		if (i+1)%(per+1) == 0 {
			dst[i] = '-'
			continue
		}
		if left == 0 {
			// 16 digits per 64 random bits: each digit consumes log2(10)
			// bits from the top, so the 16th still has 10+ fresh bits.
			x, left = r.Uint64(), 16
		}
		hi, lo := bits.Mul64(x, 10)
		dst[i] = byte('0' + hi)
		x = lo
		left--
	}
}

// Sizes of the c and pad values (oltp_common.lua's templates).
const (
	cLen   = 10*12 - 1
	padLen = 5*12 - 1
)

// Distribution names (--rand-type).
const (
	DistUniform  = "uniform"
	DistGaussian = "gaussian"
	DistSpecial  = "special"
	DistPareto   = "pareto"
	DistZipfian  = "zipfian"
)

// Dist is sysbench.rand.default: the --rand-type distribution with its
// parameters precomputed. It holds no state, so workers share one.
type Dist struct {
	kind     string
	iter     int
	iterMult float64
	pctMult  float64 // rand_spec_pct / 100
	pct2Mult float64 // rand_spec_pct / 200
	resMult  float64 // 100 / (100 − rand_spec_res)

	paretoPower float64

	zipfExp, zipfS, zipfHX1 float64
}

// NewDist builds the distribution o.RandType with o's parameters.
func NewDist(o Options) (*Dist, error) {
	d := &Dist{kind: o.RandType, iter: o.RandSpecIter}
	if d.iter < 1 {
		d.iter = 1
	}
	d.iterMult = 1 / float64(d.iter)
	// sysbench reads rand-spec-pct and rand-spec-res as integers.
	pct, res := math.Trunc(o.RandSpecPct), math.Trunc(o.RandSpecRes)
	d.pctMult = pct / 100
	d.pct2Mult = pct / 200
	if res >= 100 {
		return nil, fmt.Errorf("rand_spec_res must be below 100 (got %g)", o.RandSpecRes)
	}
	d.resMult = 100 / (100 - res)
	h := o.RandParetoH
	if d.kind == DistPareto && (h <= 0 || h >= 1) {
		return nil, fmt.Errorf("rand_pareto_h must be between 0 and 1 (got %g)", h)
	}
	d.paretoPower = math.Log(h) / math.Log(1-h)
	e := o.RandZipfianExp
	if e < 0 {
		return nil, fmt.Errorf("rand_zipfian_exp must be >= 0 (got %g)", e)
	}
	d.zipfExp = e
	d.zipfS = 2 - zipfHIntegralInverse(zipfHIntegral(2.5, e)-zipfH(2, e), e)
	d.zipfHX1 = zipfHIntegral(1.5, e) - 1
	switch d.kind {
	case DistUniform, DistGaussian, DistSpecial, DistPareto, DistZipfian:
	default:
		return nil, fmt.Errorf("unknown rand_type %q", d.kind)
	}
	return d, nil
}

// Kind is the distribution's name.
func (d *Dist) Kind() string { return d.kind }

// Draw returns a number in [a, b] (sysbench.rand.default(a, b)).
func (d *Dist) Draw(r *Rand, a, b uint32) uint32 {
	switch d.kind {
	case DistUniform:
		return r.Uniform(a, b)
	case DistGaussian:
		return d.gaussian(r, a, b)
	case DistSpecial:
		return d.special(r, a, b)
	case DistPareto:
		return uint32(a) + uint32(float64(b-a+1)*math.Pow(r.Float64(), d.paretoPower))
	default:
		return a + d.zipfian(r, b-a+1) - 1
	}
}

// gaussian is the mean of iter uniforms scaled to [a, b].
func (d *Dist) gaussian(r *Rand, a, b uint32) uint32 {
	t := float64(b - a + 1)
	sum := 0.0
	for i := 0; i < d.iter; i++ {
		sum += r.Float64() * t
	}
	return a + uint32(sum*d.iterMult)
}

// special is sysbench 1.0.20's default: (100−res)% of draws from the
// gaussian above (over b−a, not b−a+1), the rest uniform in a window of
// pct% right of the middle. The first uniform is reused for the window,
// and is ≥ (100−res)/100 there, so the window is only ~0.75% wide with the
// defaults: [a+0.4975t, a+0.505t]. This quirk is deliberate (§1.5).
func (d *Dist) special(r *Rand, a, b uint32) uint32 {
	t := float64(b - a)
	rnd := r.Float64()
	if rnd*t*d.resMult < t {
		sum := 0.0
		for i := 0; i < d.iter; i++ {
			sum += r.Float64()
		}
		return uint32(float64(a) + sum*t*d.iterMult)
	}
	res := rnd * (t*d.pctMult + 1)
	res += t/2 - t*d.pct2Mult
	return a + uint32(res)
}

// zipfian draws from [1, n] by rejection-inversion (Hörmann and
// Derflinger), the algorithm of sysbench master's --rand-type=zipfian.
func (d *Dist) zipfian(r *Rand, n uint32) uint32 {
	e := d.zipfExp
	hN := zipfHIntegral(float64(n)+0.5, e)
	for {
		u := hN + r.Float64()*(d.zipfHX1-hN)
		x := zipfHIntegralInverse(u, e)
		var k uint32
		switch kf := x + 0.5; {
		case kf < 1:
			k = 1
		case kf > float64(n):
			k = n
		default:
			k = uint32(kf)
		}
		if float64(k)-x <= d.zipfS || u >= zipfHIntegral(float64(k)+0.5, e)-zipfH(float64(k), e) {
			return k
		}
	}
}

// zipfHIntegral is H(x) = (x^(1−e) − 1)/(1−e), or log(x) when e = 1.
func zipfHIntegral(x, e float64) float64 {
	lx := math.Log(x)
	return expm1OverX((1-e)*lx) * lx
}

// zipfH is h(x) = x^−e.
func zipfH(x, e float64) float64 { return math.Exp(-e * math.Log(x)) }

// zipfHIntegralInverse inverts zipfHIntegral.
func zipfHIntegralInverse(x, e float64) float64 {
	t := x * (1 - e)
	if t < -1 {
		t = -1 // numerical noise only
	}
	return math.Exp(log1pOverX(t) * x)
}

// log1pOverX is log(1+x)/x, by Taylor series near 0.
func log1pOverX(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// expm1OverX is (exp(x)−1)/x, by Taylor series near 0.
func expm1OverX(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x*(1.0/3)*(1+0.25*x))
}

// Unique is sysbench.rand.unique(): a run-wide sequence of distinct 32-bit
// numbers (a permutation of the index via quadratic residues modulo the
// largest 32-bit prime). Safe for concurrent use.
type Unique struct {
	index  atomic.Uint32
	offset uint32
}

const uniquePrime = 4294967291

func permuteQR(x uint32) uint32 {
	if x >= uniquePrime {
		return x // the 5 numbers above the prime map to themselves
	}
	res := uint32(uint64(x) * uint64(x) % uniquePrime)
	if x <= uniquePrime/2 {
		return res
	}
	return uniquePrime - res
}

// NewUnique seeds a sequence; one seed always gives the same sequence.
func NewUnique(seed int64) *Unique {
	x := uint64(seed) ^ 0x5eed
	i, off := uint32(splitmix64(&x)), uint32(splitmix64(&x))
	u := &Unique{offset: permuteQR(permuteQR(off) + 0x46790905)}
	u.index.Store(permuteQR(permuteQR(i) + 0x682f0161))
	return u
}

// Next returns the sequence's next number.
func (u *Unique) Next() uint32 {
	i := u.index.Add(1) - 1
	return permuteQR((permuteQR(i) + u.offset) ^ 0x5bf03635)
}

// effectiveSeed is o.RandSeed, or the clock when it is 0 (sysbench's
// --rand-seed=0).
func effectiveSeed(o Options) int64 {
	if o.RandSeed != 0 {
		return o.RandSeed
	}
	return time.Now().UnixNano()
}
