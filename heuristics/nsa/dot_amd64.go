//go:build !noasm && !gccgo && !safe

package nsa

// exactDot says that infer's dot products sum in the order of gonum's
// (gonum's amd64 assembly is in use: these are its build tags).
const exactDot = true

// dot4 returns dot1(x, a), dot1(x, b), dot1(x, c), dot1(x, d), computed
// together in SSE2 (dot_amd64.s): per row the two packed sums of gonum's
// f64.DotUnitary, (s₀, s₁) and (s₂, s₃), the remainder into s₀, then
// (s₁+s₃)+(s₀+s₂); a, b, c, d hold at least len(x) values.
//
//go:noescape
func dot4(x, a, b, c, d []float64) (sa, sb, sc, sd float64)
