package observe

import (
	"fmt"
	"math"
	"sort"

	"benchmatrix/record/parts"
)

// OnsetTolerance is how far (seconds) a detected onset may be from the
// injected one: a hold that begins late in a second shows in the next
// interval, and the sampler's clock and the injector's differ slightly.
const OnsetTolerance = 2.0

// MatchOnsets pairs detected and injected onsets (seconds on the same
// clock), each used at most once, nearest first. Injections outside
// [from, to) are left out. A pure function.
func MatchOnsets(detected, injected []float64, from, to float64) parts.OnsetMatch {
	var m parts.OnsetMatch
	var inj []float64
	for _, t := range injected {
		if t < from-OnsetTolerance/2 || t >= to-1 {
			m.Outside++
			continue
		}
		inj = append(inj, t)
	}
	m.Injected = len(inj)
	type pair struct {
		d, i int
		dist float64
	}
	var pairs []pair
	for di, d := range detected {
		for ii, t := range inj {
			// A stall shows at or after its cause; allow one second early
			// for clock skew.
			if dist := d - t; dist >= -1 && dist <= OnsetTolerance {
				pairs = append(pairs, pair{di, ii, math.Abs(dist)})
			}
		}
	}
	sort.SliceStable(pairs, func(a, b int) bool { return pairs[a].dist < pairs[b].dist })
	usedD, usedI := map[int]bool{}, map[int]bool{}
	for _, p := range pairs {
		if usedD[p.d] || usedI[p.i] {
			continue
		}
		usedD[p.d], usedI[p.i] = true, true
		m.Hits++
	}
	m.Misses = m.Injected - m.Hits
	m.FalseAlarms = len(detected) - m.Hits
	m.Text = fmt.Sprintf("detector against %d injected stall%s: %d hit%s, %d miss%s, %d false alarm%s",
		m.Injected, plural(m.Injected), m.Hits, plural(m.Hits), m.Misses, map[bool]string{true: "", false: "es"}[m.Misses == 1],
		m.FalseAlarms, plural(m.FalseAlarms))
	if m.Outside > 0 {
		m.Text += fmt.Sprintf(" (%d outside the measured window)", m.Outside)
	}
	return m
}
