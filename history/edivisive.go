package history

import (
	"math"
	"math/rand/v2"
	"slices"
)

// E-divisive means (Matteson & James, "A Nonparametric Approach for
// Multiple Change Point Analysis of Multivariate Data", JASA 2014), the
// method Hunter / Apache Otava run over performance histories, written here
// from the paper's definitions for one univariate series:
//
// For samples X (n values) and Y (m values) and 0 < alpha < 2, the
// empirical divergence is
//
//	E(X,Y) = 2/(nm) Σ|Xi-Yj|^a - 1/C(n,2) Σi<k |Xi-Xk|^a - 1/C(m,2) Σj<k |Yj-Yk|^a
//
// and the scaled statistic Q(X,Y) = nm/(n+m) E(X,Y). Within a segment
// [s,e) the best split is the (tau, kappa) with X = Z[s:tau] and
// Y = Z[tau:kappa] that maximises Q. Change points are found one at a time
// (bisection): every current segment proposes its best split, the largest
// Q wins, and it is kept only if a permutation test finds it significant:
// the observations are shuffled within each segment, the whole search is
// repeated on the shuffled series, and the p-value is
// (1 + #{permuted max >= observed}) / (1 + permutations). The search stops
// at the first split that is not significant.

// Params are E-divisive's parameters.
type Params struct {
	// Alpha is the distance exponent, 0 < Alpha < 2 (the paper's alpha;
	// 1 compares means and more, Otava uses 1).
	Alpha float64
	// Significance is the permutation test's level: a split is kept when
	// its p-value is at most this (the paper's p0).
	Significance float64
	// Permutations is how many shuffles each test makes (the paper's R).
	Permutations int
	// MinSize is the fewest runs a segment may have (either side of a
	// change point).
	MinSize int
	// Seed makes the permutations reproducible: the same history gives
	// the same answer.
	Seed uint64
}

// DefaultParams are the parameters `history check` uses unless told
// otherwise (docs/history.md gives their false-alarm and detection rates).
func DefaultParams() Params {
	return Params{Alpha: 1, Significance: 0.01, Permutations: 499, MinSize: 3}
}

// Split is one change point E-divisive accepted: the first index of the
// new segment, its statistic and its permutation p-value.
type Split struct {
	Index int
	Q     float64
	P     float64
}

// EDivisive returns the accepted change points of z in index order. z is
// not changed.
func EDivisive(z []float64, p Params) []Split {
	n := len(z)
	if n < 2*p.MinSize || p.MinSize < 1 {
		return nil
	}
	rng := rand.New(rand.NewPCG(p.Seed, 0x9e3779b97f4a7c15))
	var found []Split
	bounds := []int{0, n} // sorted segment boundaries
	work := slices.Clone(z)
	sr := &searcher{p: p}
	for {
		best := sr.bestSplit(z, bounds)
		if best.index < 0 {
			break
		}
		// Permutation test: shuffle within each current segment and
		// take the largest statistic over all segments, as the
		// observed one was.
		// Once more than Significance*(1+Permutations)-1 shuffles have
		// reached the observed value, the p-value cannot fall to the
		// level any more: stop (the usual case for a split of noise).
		limit := int(math.Floor(p.Significance*float64(1+p.Permutations)+1e-9)) - 1
		exceed := 0
		for range p.Permutations {
			if exceed > limit {
				break
			}
			copy(work, z)
			for i := 0; i+1 < len(bounds); i++ {
				seg := work[bounds[i]:bounds[i+1]]
				rng.Shuffle(len(seg), func(a, b int) { seg[a], seg[b] = seg[b], seg[a] })
			}
			if s := sr.bestSplit(work, bounds); s.q >= best.q {
				exceed++
			}
		}
		if exceed > limit {
			break
		}
		pv := float64(1+exceed) / float64(1+p.Permutations)
		found = append(found, Split{Index: best.index, Q: best.q, P: pv})
		bounds = append(bounds, best.index)
		slices.Sort(bounds)
	}
	slices.SortFunc(found, func(a, b Split) int { return a.Index - b.Index })
	return found
}

type split struct {
	index int
	q     float64
}

// searcher holds the scratch space of the split search, reused across
// segments and permutations.
type searcher struct {
	p      Params
	d, col []float64
	within []float64
}

// bestSplit is the largest Q over every segment between bounds.
func (s *searcher) bestSplit(z []float64, bounds []int) split {
	best := split{index: -1, q: math.Inf(-1)}
	for i := 0; i+1 < len(bounds); i++ {
		if sp := s.segmentSplit(z[bounds[i]:bounds[i+1]]); sp.index >= 0 && sp.q > best.q {
			best = split{index: bounds[i] + sp.index, q: sp.q}
		}
	}
	return best
}

func segmentSplit(z []float64, p Params) split {
	s := &searcher{p: p}
	return s.segmentSplit(z)
}

// segmentSplit is the best split of one segment: the tau (relative to the
// segment) maximising Q over tau and kappa, each side at least MinSize.
func (s *searcher) segmentSplit(z []float64) split {
	p := s.p
	n := len(z)
	best := split{index: -1, q: math.Inf(-1)}
	if n < 2*p.MinSize {
		return best
	}
	// d[i*n+j] = |zi - zj|^alpha; col[j*(n+1)+i] = sum over i' < i of
	// d[i'][j], so that a sum of distances from a run of indices to j is
	// one subtraction.
	if cap(s.d) < n*n {
		s.d = make([]float64, n*n)
		s.col = make([]float64, n*(n+1))
		s.within = make([]float64, n+1)
	}
	d, col, within := s.d[:n*n], s.col[:n*(n+1)], s.within[:n+1]
	for i := range n {
		d[i*n+i] = 0
		for j := range i {
			v := math.Abs(z[i] - z[j])
			if p.Alpha != 1 {
				v = math.Pow(v, p.Alpha)
			}
			d[i*n+j], d[j*n+i] = v, v
		}
	}
	for j := range n {
		c := col[j*(n+1) : (j+1)*(n+1)]
		c[0] = 0
		for i := range n {
			c[i+1] = c[i] + d[i*n+j]
		}
	}
	// within[t] = sum over i < k < t of d[i][k]: the within-distance sum
	// of z[0:t].
	within[0] = 0
	for t := 1; t <= n; t++ {
		within[t] = within[t-1] + col[(t-1)*(n+1)+t-1]
	}
	for tau := p.MinSize; tau <= n-p.MinSize; tau++ {
		nx := float64(tau)
		wx := within[tau]
		between, wy := 0.0, 0.0
		for kappa := tau + 1; kappa <= n; kappa++ {
			c := col[(kappa-1)*(n+1):] // the value joining Y
			between += c[tau]
			wy += c[kappa-1] - c[tau]
			m := kappa - tau
			if m < p.MinSize {
				continue
			}
			ny := float64(m)
			e := 2 * between / (nx * ny)
			if tau > 1 {
				e -= wx / (nx * (nx - 1) / 2)
			}
			if m > 1 {
				e -= wy / (ny * (ny - 1) / 2)
			}
			if q := nx * ny / (nx + ny) * e; q > best.q {
				best = split{index: tau, q: q}
			}
		}
	}
	return best
}
