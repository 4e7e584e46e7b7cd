package slap

// glibcRandom is the C library's random() as glibc implements it (the
// additive feedback generator of degree 31, TYPE_3), seeded as srandom(seed).
// mariadb-slap 10.11 draws every generated value (integers, the characters
// of strings, the key a key query looks up) from random() without seeding
// it, so with seed 1 the statements benchmatrix generates are the ones
// mariadb-slap generates, byte for byte (--only-print shows it).
type glibcRandom struct {
	r    [34]uint32 // the last 34 values of the sequence r[i] = r[i-31] + r[i-3]
	next int
}

func newGlibcRandom(seed uint32) *glibcRandom {
	if seed == 0 {
		seed = 1
	}
	g := &glibcRandom{}
	var init [31]int64
	init[0] = int64(seed)
	for i := 1; i < 31; i++ {
		// 16807 * r[i-1] mod (2^31 - 1), kept positive as glibc does.
		v := (16807 * init[i-1]) % 2147483647
		if v < 0 {
			v += 2147483647
		}
		init[i] = v
	}
	seq := make([]uint32, 0, 344)
	for i := 0; i < 31; i++ {
		seq = append(seq, uint32(init[i]))
	}
	for i := 31; i < 34; i++ {
		seq = append(seq, seq[i-31])
	}
	for i := 34; i < 344; i++ {
		seq = append(seq, seq[i-31]+seq[i-3])
	}
	copy(g.r[:], seq[344-34:])
	return g
}

// Int returns the next value, in [0, 2^31).
func (g *glibcRandom) Int() int64 {
	// r[k] = r[k-31] + r[k-3], with the ring holding r[k-34..k-1].
	v := g.r[(g.next+3)%34] + g.r[(g.next+31)%34]
	g.r[g.next] = v
	g.next = (g.next + 1) % 34
	return int64(v >> 1)
}
