package history

import (
	"math/rand/v2"
	"testing"
)

func TestEDivisiveSanity(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	z := make([]float64, 20)
	for i := range z {
		z[i] = 1000 + rng.NormFloat64()*20
		if i >= 10 {
			z[i] -= 100
		}
	}
	t.Log(EDivisive(z, DefaultParams()))
}
