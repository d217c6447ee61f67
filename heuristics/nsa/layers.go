package nsa

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// A Param is one trainable tensor of a network, stored flat, with its
// gradient.
type Param struct {
	// Name says which layer and tensor ("conv1.w").
	Name string
	// W holds the values, G the accumulated gradient (same length).
	W, G []float64
}

// layer is one stage of a network working on a batch: each of the batch
// rows is one sample, laid out flat (channel-major for convolutions: c·L +
// l). forward keeps what backward needs; backward accumulates the
// parameters' gradients and returns the gradient of the input.
type layer interface {
	forward(x []float64, batch int) []float64
	backward(dy []float64, batch int) []float64
	params() []*Param
	inSize() int
	outSize() int
	// clone returns a layer that shares the parameters but has its own
	// buffers, for use from another goroutine.
	clone() layer
}

// gemm computes C = alpha·op(A)·op(B) + beta·C on row-major matrices.
func gemm(tA, tB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	ta, tb := blas.NoTrans, blas.NoTrans
	ar, ac := m, k
	if tA {
		ta, ar, ac = blas.Trans, k, m
	}
	br, bc := k, n
	if tB {
		tb, br, bc = blas.Trans, n, k
	}
	blas64.Gemm(ta, tb, alpha,
		blas64.General{Rows: ar, Cols: ac, Stride: lda, Data: a},
		blas64.General{Rows: br, Cols: bc, Stride: ldb, Data: b},
		beta, blas64.General{Rows: m, Cols: n, Stride: ldc, Data: c})
}

// grow returns buf resized to n (contents unspecified).
func grow(buf []float64, n int) []float64 {
	if cap(buf) < n {
		return make([]float64, n)
	}
	return buf[:n]
}

// initUniform fills w with U(−b, b), b = scale/√fanIn (PyTorch's default
// for Linear and Conv1d at scale 1).
func initUniform(w []float64, fanIn int, scale float64, rng *rand.Rand) {
	b := scale / math.Sqrt(float64(fanIn))
	for i := range w {
		w[i] = (2*rng.Float64() - 1) * b
	}
}

// linear is y = W·x + b with W of out×in (torch.nn.Linear).
type linear struct {
	in, out int
	w, b    *Param
	x, y    []float64
	dx      []float64
}

func newLinear(name string, in, out int, scale float64, rng *rand.Rand) *linear {
	l := &linear{in: in, out: out,
		w: &Param{Name: name + ".w", W: make([]float64, in*out), G: make([]float64, in*out)},
		b: &Param{Name: name + ".b", W: make([]float64, out), G: make([]float64, out)}}
	initUniform(l.w.W, in, scale, rng)
	initUniform(l.b.W, in, scale, rng)
	return l
}

func (l *linear) inSize() int      { return l.in }
func (l *linear) outSize() int     { return l.out }
func (l *linear) params() []*Param { return []*Param{l.w, l.b} }
func (l *linear) clone() layer     { return &linear{in: l.in, out: l.out, w: l.w, b: l.b} }
func (l *linear) forward(x []float64, batch int) []float64 {
	l.x = x
	l.y = grow(l.y, batch*l.out)
	for r := 0; r < batch; r++ {
		copy(l.y[r*l.out:(r+1)*l.out], l.b.W)
	}
	// Y (batch×out) = X (batch×in) · Wᵀ + 1·bᵀ
	gemm(false, true, batch, l.out, l.in, 1, x, l.in, l.w.W, l.in, 1, l.y, l.out)
	return l.y
}

func (l *linear) backward(dy []float64, batch int) []float64 {
	// dW += dYᵀ · X ; db += Σ_rows dY ; dX = dY · W
	gemm(true, false, l.out, l.in, batch, 1, dy, l.out, l.x, l.in, 1, l.w.G, l.in)
	for r := 0; r < batch; r++ {
		row := dy[r*l.out : (r+1)*l.out]
		for j, v := range row {
			l.b.G[j] += v
		}
	}
	l.dx = grow(l.dx, batch*l.in)
	gemm(false, false, batch, l.in, l.out, 1, dy, l.out, l.w.W, l.in, 0, l.dx, l.in)
	return l.dx
}

// tanh is the element-wise hyperbolic tangent.
type tanh struct {
	n     int
	y, dx []float64
}

func (t *tanh) inSize() int      { return t.n }
func (t *tanh) outSize() int     { return t.n }
func (t *tanh) params() []*Param { return nil }
func (t *tanh) clone() layer     { return &tanh{n: t.n} }
func (t *tanh) forward(x []float64, batch int) []float64 {
	t.y = grow(t.y, len(x))
	for i, v := range x {
		t.y[i] = math.Tanh(v)
	}
	return t.y
}

func (t *tanh) backward(dy []float64, batch int) []float64 {
	t.dx = grow(t.dx, len(dy))
	for i, g := range dy {
		y := t.y[i]
		t.dx[i] = g * (1 - y*y)
	}
	return t.dx
}

// conv1d is torch.nn.Conv1d(cin, cout, k, stride) without padding, on
// channel-major samples (cin × lin) giving cout × lout, lout =
// (lin − k)/stride + 1. It runs as a matrix product over the unfolded
// input (im2col).
type conv1d struct {
	cin, cout, k, stride, lin, lout int
	w, b                            *Param // w: cout × (cin·k)
	cols, yr, y, dcols, dyr, dx     []float64
}

func newConv1d(name string, cin, cout, k, stride, lin int, scale float64, rng *rand.Rand) *conv1d {
	c := &conv1d{cin: cin, cout: cout, k: k, stride: stride, lin: lin, lout: (lin-k)/stride + 1,
		w: &Param{Name: name + ".w", W: make([]float64, cout*cin*k), G: make([]float64, cout*cin*k)},
		b: &Param{Name: name + ".b", W: make([]float64, cout), G: make([]float64, cout)}}
	initUniform(c.w.W, cin*k, scale, rng)
	initUniform(c.b.W, cin*k, scale, rng)
	return c
}

func (c *conv1d) inSize() int      { return c.cin * c.lin }
func (c *conv1d) outSize() int     { return c.cout * c.lout }
func (c *conv1d) params() []*Param { return []*Param{c.w, c.b} }
func (c *conv1d) clone() layer {
	return &conv1d{cin: c.cin, cout: c.cout, k: c.k, stride: c.stride, lin: c.lin, lout: c.lout, w: c.w, b: c.b}
}

func (c *conv1d) forward(x []float64, batch int) []float64 {
	ck := c.cin * c.k
	rows := batch * c.lout
	c.cols = grow(c.cols, rows*ck)
	in := c.inSize()
	for s := 0; s < batch; s++ {
		xs := x[s*in : (s+1)*in]
		for t := 0; t < c.lout; t++ {
			row := c.cols[(s*c.lout+t)*ck : (s*c.lout+t+1)*ck]
			for ci := 0; ci < c.cin; ci++ {
				copy(row[ci*c.k:(ci+1)*c.k], xs[ci*c.lin+t*c.stride:])
			}
		}
	}
	// Yr (rows × cout) = cols · Wᵀ
	c.yr = grow(c.yr, rows*c.cout)
	gemm(false, true, rows, c.cout, ck, 1, c.cols, ck, c.w.W, ck, 0, c.yr, c.cout)
	out := c.outSize()
	c.y = grow(c.y, batch*out)
	for s := 0; s < batch; s++ {
		for t := 0; t < c.lout; t++ {
			r := c.yr[(s*c.lout+t)*c.cout : (s*c.lout+t+1)*c.cout]
			for co, v := range r {
				c.y[s*out+co*c.lout+t] = v + c.b.W[co]
			}
		}
	}
	return c.y
}

func (c *conv1d) backward(dy []float64, batch int) []float64 {
	ck := c.cin * c.k
	rows := batch * c.lout
	out := c.outSize()
	c.dyr = grow(c.dyr, rows*c.cout)
	for s := 0; s < batch; s++ {
		for co := 0; co < c.cout; co++ {
			g := dy[s*out+co*c.lout : s*out+(co+1)*c.lout]
			var sum float64
			for t, v := range g {
				c.dyr[(s*c.lout+t)*c.cout+co] = v
				sum += v
			}
			c.b.G[co] += sum
		}
	}
	// dW += dYrᵀ · cols ; dcols = dYr · W
	gemm(true, false, c.cout, ck, rows, 1, c.dyr, c.cout, c.cols, ck, 1, c.w.G, ck)
	c.dcols = grow(c.dcols, rows*ck)
	gemm(false, false, rows, ck, c.cout, 1, c.dyr, c.cout, c.w.W, ck, 0, c.dcols, ck)
	in := c.inSize()
	c.dx = grow(c.dx, batch*in)
	clear(c.dx)
	for s := 0; s < batch; s++ {
		dxs := c.dx[s*in : (s+1)*in]
		for t := 0; t < c.lout; t++ {
			row := c.dcols[(s*c.lout+t)*ck : (s*c.lout+t+1)*ck]
			for ci := 0; ci < c.cin; ci++ {
				d := dxs[ci*c.lin+t*c.stride : ci*c.lin+t*c.stride+c.k]
				for j, v := range row[ci*c.k : (ci+1)*c.k] {
					d[j] += v
				}
			}
		}
	}
	return c.dx
}
