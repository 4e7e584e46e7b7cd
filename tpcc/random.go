package tpcc

import (
	"benchmatrix/oltp"
)

// rng is one worker's random source: oltp's xoroshiro128+ (the engine's
// generator), with the draws TPC-C needs.
type rng struct{ r *oltp.Rand }

func newRng(seed int64, stream int) *rng { return &rng{r: oltp.NewRand(seed, stream)} }

// uniform draws an integer in [a, b], as sysbench.rand.uniform.
func (g *rng) uniform(a, b int) int { return a + int(g.r.Uniform(0, uint32(b-a))) }

// float draws in [0, 1), as sysbench.rand.uniform_double.
func (g *rng) float() float64 { return g.r.Float64() }

// str appends to dst the template with every '@' a random lowercase
// letter and every '#' a random digit (sysbench.rand.string).
func (g *rng) str(dst []byte, template string) []byte {
	for i := 0; i < len(template); i++ {
		switch c := template[i]; c {
		case '@':
			dst = append(dst, byte('a'+g.uniform(0, 25)))
		case '#':
			dst = append(dst, byte('0'+g.uniform(0, 9)))
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// letters appends n random lowercase letters.
func (g *rng) letters(dst []byte, n int) []byte {
	for range n {
		dst = append(dst, byte('a'+g.uniform(0, 25)))
	}
	return dst
}

// repeated appends one random letter n times: sysbench-tpcc fills c_data,
// h_data, s_dist_XX, s_data and ol_dist_info so (string.rep of a
// one-letter random string), which compresses well; the lengths are the
// specification's.
func (g *rng) repeated(dst []byte, n int) []byte {
	c := byte('a' + g.uniform(0, 25))
	for range n {
		dst = append(dst, c)
	}
	return dst
}

// NURand's run-time constants C for A = 255, 1023 and 8191 (clause
// 2.1.6). sysbench-tpcc means to draw them once per run, but its Lua
// draws them again on every call (its "init_rand" flag is set to 0,
// which Lua takes as true): here they are drawn once per run, as the
// specification says.
type nuConst struct{ c255, c1023, c8191 int }

// newNuConst draws the constants. The C for A = 255 of the run must differ
// from the load's by 65..119, not 96 nor 112 (clause 2.1.6.1); load is the
// load's C for 255, or -1 when this is the load.
func newNuConst(g *rng, load int) nuConst {
	c := nuConst{c255: g.uniform(0, 255), c1023: g.uniform(0, 1023), c8191: g.uniform(0, 8191)}
	if load >= 0 {
		for {
			d := c.c255 - load
			if d < 0 {
				d = -d
			}
			if d >= 65 && d <= 119 && d != 96 && d != 112 {
				break
			}
			c.c255 = g.uniform(0, 255)
		}
	}
	return c
}

// nurand is NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y -
// x + 1)) + x.
func (g *rng) nurand(c *nuConst, a, x, y int) int {
	var cc int
	switch a {
	case 255:
		cc = c.c255
	case 1023:
		cc = c.c1023
	default:
		cc = c.c8191
	}
	return ((g.uniform(0, a)|g.uniform(x, y))+cc)%(y-x+1) + x
}

var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// lastName is C_LAST for num in 0..999: the syllables of its three digits
// (clause 4.3.2.3).
func lastName(num int) string {
	return syllables[num/100] + syllables[num/10%10] + syllables[num%10]
}
