package nsa

import "math"

// infer is a batch-1 forward pass of a Net for NSA's repair steps that
// gives exactly the numbers of Net.Forward (same operations in the same
// order: every output bit-identical, up to the sign of an exact zero) in
// less time:
//
//   - each dot product is written out in the order of the dot product
//     Net.Forward runs: gonum's blas Dgemm computes every output as
//     f64.DotUnitary, whose amd64 assembly keeps four running sums,
//     element i going to sum i mod 4, a remainder of 1–3 elements to sum
//     0, then (s₀+s₂)+(s₁+s₃) — one DotUnitary over the whole length
//     when the product has fewer than 4 blocks of 64×64 outputs (CNN-3's
//     layers), else one per block of 64 of the summed dimension, added to
//     the output in turn (gemmBlocked); four outputs are computed at
//     once in SSE2 (dot4: eight independent packed sums where DotUnitary
//     has two), with no im2col copy of the whole input and no
//     allocation;
//   - the positions past the shown part of the idle sequence are padding
//     (all channels 0), so a convolution's outputs whose receptive field
//     lies entirely in the padding, and the Tanh of them, are the same
//     for every state: they are computed once, from the all-zero input,
//     and copied.
//
// The order of sums matches gonum's only on builds where gonum uses its
// amd64 assembly (exactDot); elsewhere NSA runs Net.Forward.
type infer struct {
	net    *Net
	layers []inferLayer
	cols   []float64 // a convolution's unfolded input (im2col), one patch per row
}

// inferLayer is one layer with its output buffer and, for positional
// layers (convolution, and Tanh after one), the output on the all-zero
// input (pad) and its position count per channel (lout, 0 for a layer
// whose outputs are not positional).
type inferLayer struct {
	l         layer
	y, pad    []float64
	lout, chs int
}

// clone returns an infer sharing f's network and padding outputs with
// its own buffers (nil for nil).
func (f *infer) clone() *infer {
	if f == nil {
		return nil
	}
	c := &infer{net: f.net, layers: append([]inferLayer(nil), f.layers...), cols: make([]float64, len(f.cols))}
	for i := range c.layers {
		c.layers[i].y = make([]float64, len(c.layers[i].y))
	}
	return c
}

// newInfer prepares the exact fast forward pass of n (nil when a layer
// has no fast kernel or the build's dot product order is not known). n
// must not change afterwards.
func newInfer(n *Net) *infer {
	if !exactDot {
		return nil
	}
	f := &infer{net: n}
	zero := make([]float64, n.Beta*n.Q)
	ref := n.Clone()
	ref.Forward(zero, 1)
	positional := true // the input is: channel-major, padding at the end
	chs, lout := n.Beta, n.Q
	for i, l := range n.layers {
		il := inferLayer{l: l, y: make([]float64, l.outSize())}
		switch l := l.(type) {
		case *conv1d:
			if !positional {
				return nil
			}
			chs, lout = l.Cout, l.Lout
		case *tanh:
		case *linear:
			positional = false
		default:
			return nil
		}
		if positional {
			il.lout, il.chs = lout, chs
			il.pad = append([]float64(nil), outputOf(ref.layers[i])...)
		}
		f.layers = append(f.layers, il)
		if c, ok := l.(*conv1d); ok {
			f.cols = make([]float64, max(len(f.cols), c.Lout*c.Cin*c.K))
		}
	}
	return f
}

// outputOf returns the output a layer kept from its last forward pass.
func outputOf(l layer) []float64 {
	switch l := l.(type) {
	case *conv1d:
		return l.Y
	case *tanh:
		return l.impl().Y
	case *linear:
		return l.Y
	}
	return nil
}

// forward runs the network on one sample x whose positions n and beyond
// are padding (0 in every channel) and returns the outputs (owned by f,
// valid until the next call).
func (f *infer) forward(x []float64, n int) []float64 {
	live := n // positions before live may differ from the all-zero input's
	for i := range f.layers {
		il := &f.layers[i]
		switch l := il.l.(type) {
		case *conv1d:
			// Output t reads positions t·stride … t·stride+k−1: from
			// t·stride ≥ live on, only padding.
			live = min(l.Lout, (live+l.Stride-1)/l.Stride)
			f.conv(l, x, il, live)
		case *tanh:
			if il.lout == 0 {
				for j, v := range x {
					il.y[j] = math.Tanh(v)
				}
				break
			}
			for c := range il.chs {
				row, out := x[c*il.lout:(c+1)*il.lout], il.y[c*il.lout:(c+1)*il.lout]
				for t, v := range row[:live] {
					out[t] = math.Tanh(v)
				}
				copy(out[live:], il.pad[c*il.lout+live:(c+1)*il.lout])
			}
		case *linear:
			linearForward(l, x, il.y)
		}
		x = il.y
	}
	return x
}

// gemmBlocked says whether gonum's Dgemm splits an m×n product into
// blocks (dgemmParallel: at least minParBlock = 4 blocks of 64×64), which
// sums the inner dimension by blocks of 64.
func gemmBlocked(m, n int) bool {
	const block = 64
	return ((m+block-1)/block)*((n+block-1)/block) >= 4
}

// dotAcc4 adds to c[r] ⟨x, w_r⟩ for the rows w_0 … w_3 (each of at
// least len(x) values) as gonum's Dgemm sums them into an output holding
// c[r]: in one dot product, or by blocks of 64 when blocked.
func dotAcc4(c *[4]float64, x, w0, w1, w2, w3 []float64, blocked bool) {
	n := len(x)
	step := n
	if blocked {
		step = 64
	}
	for k := 0; k < n; k += step {
		e := min(k+step, n)
		d0, d1, d2, d3 := dot4(x[k:e], w0[k:e], w1[k:e], w2[k:e], w3[k:e])
		c[0] += d0
		c[1] += d1
		c[2] += d2
		c[3] += d3
	}
}

// dotAcc1 adds ⟨x, a⟩ to c as dotAcc4 does.
func dotAcc1(c float64, x, a []float64, blocked bool) float64 {
	if !blocked {
		return c + dot1(x, a)
	}
	for k := 0; k < len(x); k += 64 {
		e := min(k+64, len(x))
		c += dot1(x[k:e], a[k:e])
	}
	return c
}

// conv computes the first live output positions of a convolution as
// conv1d.forward does, (0 + ⟨patch_t, w_co⟩) + b_co (the product into a
// cleared output, then the bias), four positions at a time, and copies
// the others from the all-zero input's.
func (f *infer) conv(l *conv1d, x []float64, il *inferLayer, live int) {
	ck := l.Cin * l.K
	cols := f.cols[:live*ck]
	for t := range live {
		row := cols[t*ck : (t+1)*ck]
		for ci := range l.Cin {
			dst := row[ci*l.K : (ci+1)*l.K]
			src := x[ci*l.Lin+t*l.Stride:]
			src = src[:len(dst)]
			for j := range dst {
				dst[j] = src[j]
			}
		}
	}
	w, b, y := l.W.W, l.B.W, il.y
	blocked := gemmBlocked(l.Lout, l.Cout)
	for co := range l.Cout {
		wr := w[co*ck : (co+1)*ck]
		yr := y[co*l.Lout : (co+1)*l.Lout]
		t := 0
		for ; t+3 < live; t += 4 {
			var d [4]float64
			dotAcc4(&d, wr, cols[t*ck:], cols[(t+1)*ck:], cols[(t+2)*ck:], cols[(t+3)*ck:], blocked)
			yr[t] = d[0] + b[co]
			yr[t+1] = d[1] + b[co]
			yr[t+2] = d[2] + b[co]
			yr[t+3] = d[3] + b[co]
		}
		for ; t < live; t++ {
			yr[t] = dotAcc1(0, wr, cols[t*ck:(t+1)*ck], blocked) + b[co]
		}
		copy(yr[live:], il.pad[co*l.Lout+live:(co+1)*l.Lout])
	}
}

// linearForward computes y = b + W·x as linear.forward does: b_j +
// ⟨x, w_j⟩ per output.
func linearForward(l *linear, x, y []float64) {
	w, b, in := l.W.W, l.B.W, l.In
	blocked := gemmBlocked(1, l.Out)
	j := 0
	for ; j+3 < l.Out; j += 4 {
		d := [4]float64{b[j], b[j+1], b[j+2], b[j+3]}
		dotAcc4(&d, x, w[j*in:], w[(j+1)*in:], w[(j+2)*in:], w[(j+3)*in:], blocked)
		copy(y[j:j+4], d[:])
	}
	for ; j < l.Out; j++ {
		y[j] = dotAcc1(b[j], x, w[j*in:(j+1)*in], blocked)
	}
}

// dot1 is ⟨x, a⟩ summed as gonum's amd64 f64.DotUnitary(x, a) sums it.
// The float64 conversions keep each product rounded on its own (no fused
// multiply-add).
func dot1(x, a []float64) float64 {
	a = a[:len(x)]
	var s0, s1, s2, s3 float64
	for len(x) >= 4 {
		xv, av := (*[4]float64)(x), (*[4]float64)(a)
		s0 += float64(xv[0] * av[0])
		s1 += float64(xv[1] * av[1])
		s2 += float64(xv[2] * av[2])
		s3 += float64(xv[3] * av[3])
		x, a = x[4:], a[4:]
	}
	for i, v := range x {
		s0 += float64(v * a[i])
	}
	return (s0 + s2) + (s1 + s3)
}
