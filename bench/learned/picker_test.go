package learned

import (
	"math"
	"testing"

	"github.com/optsched/optsched/heuristics/learn"
)

// TestPickerShapesAndGradients checks both pickers as the learning core
// checks its layers: the network's input and output sizes, the logits of
// a batch of decisions laid SchertVisible+1 per decision whatever the
// picker's rows (the whole state for the flat one, a row per action for
// the kernel one), and the gradient the imitation and PPO steps
// backpropagate (a masked softmax's cross-entropy over a batch) against
// central finite differences on every parameter.
func TestPickerShapesAndGradients(t *testing.T) {
	const w = SchertVisible + 1
	for _, flat := range []bool{false, true} {
		name := map[bool]string{false: "kernel", true: "flat"}[flat]
		rng := learn.NewRand(7, 7)
		net := NewRLSchertPicker(SchertNorm{Slot: 60}, flat, rng)
		// Larger last-layer weights than NewRLSchertPicker's 0.01, so
		// that the loss is far from flat and the check has teeth.
		for _, p := range net.Actor.Params() {
			for i := range p.W {
				p.W[i] = 0.5 * (2*rng.Float64() - 1)
			}
		}
		wantIn, wantOut := pickIn, 1
		if flat {
			wantIn, wantOut = schertIn, w
		}
		if net.Actor.InSize() != wantIn || net.Actor.OutSize() != wantOut {
			t.Fatalf("%s: picker %d→%d, want %d→%d", name, net.Actor.InSize(), net.Actor.OutSize(), wantIn, wantOut)
		}
		const batch = 4
		var x []float64
		valid := make([][w]bool, batch)
		act := make([]int, batch)
		rows := 0
		for d := range batch {
			xs := make([]float64, schertIn)
			ax := make([]float64, w*pickIn)
			for i := range xs {
				xs[i] = rng.Float64()
			}
			for i := range ax {
				ax[i] = rng.Float64()
			}
			for a := range w {
				valid[d][a] = a == d || rng.IntN(3) > 0
			}
			act[d] = d // valid by construction
			in, n := pickerInput(flat, xs, ax)
			if n*net.Actor.InSize() != len(in) {
				t.Fatalf("%s: %d rows of %d inputs, got %d values", name, n, net.Actor.InSize(), len(in))
			}
			x = append(x, in...)
			rows += n
		}
		p := make([]float64, w)
		loss := func() float64 {
			z := append([]float64(nil), net.Actor.Forward(x, rows)...)
			if len(z) != batch*w {
				t.Fatalf("%s: %d logits for %d decisions, want %d each", name, len(z), batch, w)
			}
			var l float64
			for d := range batch {
				zr := z[d*w : (d+1)*w]
				maskLogits(zr, valid[d][:])
				lse := learn.MaskedSoftmax(p, zr, w)
				l -= zr[act[d]] - lse
			}
			return l
		}
		learn.ZeroGrad(net.Actor.Params())
		z := append([]float64(nil), net.Actor.Forward(x, rows)...)
		dz := make([]float64, len(z))
		for d := range batch {
			zr := z[d*w : (d+1)*w]
			maskLogits(zr, valid[d][:])
			learn.MaskedSoftmax(p, zr, w)
			copy(dz[d*w:], p)
			dz[d*w+act[d]]--
			for a := range w {
				if !valid[d][a] && dz[d*w+a] != 0 {
					t.Fatalf("%s: a masked action has gradient %g", name, dz[d*w+a])
				}
			}
		}
		net.Actor.Backward(dz, rows)
		checked := 0
		for _, pr := range net.Actor.Params() {
			for i := range pr.W {
				const h = 1e-6
				w0 := pr.W[i]
				pr.W[i] = w0 + h
				lp := loss()
				pr.W[i] = w0 - h
				lm := loss()
				pr.W[i] = w0
				num := (lp - lm) / (2 * h)
				if e := math.Abs(pr.G[i] - num); e > 1e-5*max(1, math.Abs(num)) {
					t.Fatalf("%s: d loss / d %s[%d] = %g, finite differences %g", name, pr.Name, i, pr.G[i], num)
				}
				checked++
			}
		}
		if checked != net.Actor.NumParams() {
			t.Fatalf("%s: checked %d of %d parameters", name, checked, net.Actor.NumParams())
		}
	}
}
