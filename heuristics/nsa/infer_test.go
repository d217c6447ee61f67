package nsa

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestInferExact: the fast forward pass gives bit for bit the outputs of
// Net.Forward (the reference), for every architecture, plain and fused,
// at q = 100 and at sizes that leave remainders (q = 37, 30), on states
// whose padding starts anywhere from position 0 to q (and whose live
// part has exact zeros too), with weights of every magnitude.
func TestInferExact(t *testing.T) {
	if !exactDot {
		t.Skip("this build's gonum dot product order is not copied: NSA runs Net.Forward")
	}
	rng := rand.New(rand.NewPCG(31, 32))
	checked := 0
	for a := Arch(0); a < numArch; a++ {
		for _, q := range []int{100, 37, 30} {
			for _, beta := range []int{4, 5} {
				n, err := NewNet(a, beta, q, q, 0.01, rng)
				if err != nil {
					t.Fatal(err)
				}
				for _, par := range n.Params() {
					for i := range par.W {
						par.W[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(5)-2))
					}
				}
				for _, net := range []*Net{n, n.Fused()} {
					f := newInfer(net)
					if f == nil {
						t.Fatalf("%s: no fast pass", a)
					}
					f = f.clone() // as choosers use it
					ref := net.Clone()
					x := make([]float64, beta*q)
					for trial := range 30 {
						live := rng.IntN(q + 1)
						clear(x)
						for c := range beta {
							for i := range live {
								if rng.IntN(8) > 0 {
									x[c*q+i] = rng.Float64()
								}
							}
						}
						want := ref.Forward(x, 1)
						got := f.forward(x, live)
						for i := range want {
							if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
								t.Fatalf("%s q=%d β=%d trial %d (live %d): output %d is %v, Net.Forward %v",
									a, q, beta, trial, live, i, got[i], want[i])
							}
						}
						checked++
					}
				}
			}
		}
	}
	t.Logf("%d forward passes compared bit for bit", checked)
}

// TestGemmBlocked: the layers of CNN-3 at q = 100 are summed in one dot
// product per output, FCN's 256-wide layers by blocks of 64 (gonum's
// dgemmParallel), which TestInferExact then exercises.
func TestGemmBlocked(t *testing.T) {
	for _, c := range []struct {
		m, n int
		want bool
	}{{91, 16, false}, {44, 8, false}, {1, 100, false}, {1, 256, true}, {1, 255, true}, {1, 192, false}, {128, 128, true}} {
		if got := gemmBlocked(c.m, c.n); got != c.want {
			t.Errorf("gemmBlocked(%d, %d) = %v, want %v", c.m, c.n, got, c.want)
		}
	}
}
