//go:build !amd64 || noasm || gccgo || safe

package nsa

// exactDot says that infer's dot products sum in the order of gonum's;
// on this build gonum runs its pure-Go dot product, whose order infer
// does not copy, so NSA runs Net.Forward.
const exactDot = false

// dot4 returns dot1(x, ·) of the four rows.
func dot4(x, a, b, c, d []float64) (sa, sb, sc, sd float64) {
	return dot1(x, a), dot1(x, b), dot1(x, c), dot1(x, d)
}
