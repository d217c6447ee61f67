package learn

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

// NewParam returns a parameter of n zero values.
func NewParam(name string, n int) *Param {
	return &Param{Name: name, W: make([]float64, n), G: make([]float64, n)}
}

// CopyParam returns a parameter with its own copy of p's values and a
// zero gradient.
func CopyParam(p *Param) *Param {
	return &Param{Name: p.Name, W: append([]float64(nil), p.W...), G: make([]float64, len(p.G))}
}

// A Layer is one stage of a network working on a batch: each of the batch
// rows is one sample, laid out flat (channel-major for convolutions: c·L +
// l). Forward keeps what Backward needs; Backward accumulates the
// parameters' gradients and returns the gradient of the input. The
// returned slices are owned by the layer, valid until its next call.
type Layer interface {
	Forward(x []float64, batch int) []float64
	Backward(dy []float64, batch int) []float64
	Params() []*Param
	InSize() int
	OutSize() int
	// Clone returns a layer that shares the parameters but has its own
	// buffers, for use from another goroutine.
	Clone() Layer
}

// Gemm computes C = alpha·op(A)·op(B) + beta·C on row-major matrices.
func Gemm(tA, tB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
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

// Grow returns buf resized to n (contents unspecified).
func Grow(buf []float64, n int) []float64 {
	if cap(buf) < n {
		return make([]float64, n)
	}
	return buf[:n]
}

// InitUniform fills w with U(−b, b), b = scale/√fanIn (PyTorch's default
// for Linear and Conv1d at scale 1).
func InitUniform(w []float64, fanIn int, scale float64, rng *rand.Rand) {
	b := scale / math.Sqrt(float64(fanIn))
	for i := range w {
		w[i] = (2*rng.Float64() - 1) * b
	}
}

// Linear is y = W·x + b with W of Out×In, row-major (torch.nn.Linear).
type Linear struct {
	In, Out int
	W, B    *Param
	// Y is the output of the last Forward.
	Y     []float64
	x, dx []float64
}

// NewLinear returns a Linear layer with weights and biases drawn from
// U(±scale/√in), weights first.
func NewLinear(name string, in, out int, scale float64, rng *rand.Rand) *Linear {
	l := &Linear{In: in, Out: out, W: NewParam(name+".w", in*out), B: NewParam(name+".b", out)}
	InitUniform(l.W.W, in, scale, rng)
	InitUniform(l.B.W, in, scale, rng)
	return l
}

// InSize implements Layer.
func (l *Linear) InSize() int { return l.In }

// OutSize implements Layer.
func (l *Linear) OutSize() int { return l.Out }

// Params implements Layer: the weights, then the biases.
func (l *Linear) Params() []*Param { return []*Param{l.W, l.B} }

// Clone implements Layer.
func (l *Linear) Clone() Layer { return &Linear{In: l.In, Out: l.Out, W: l.W, B: l.B} }

// Forward implements Layer.
func (l *Linear) Forward(x []float64, batch int) []float64 {
	l.x = x
	l.Y = Grow(l.Y, batch*l.Out)
	for r := 0; r < batch; r++ {
		copy(l.Y[r*l.Out:(r+1)*l.Out], l.B.W)
	}
	// Y (batch×out) = X (batch×in) · Wᵀ + 1·bᵀ
	Gemm(false, true, batch, l.Out, l.In, 1, x, l.In, l.W.W, l.In, 1, l.Y, l.Out)
	return l.Y
}

// Backward implements Layer.
func (l *Linear) Backward(dy []float64, batch int) []float64 {
	// dW += dYᵀ · X ; db += Σ_rows dY ; dX = dY · W
	Gemm(true, false, l.Out, l.In, batch, 1, dy, l.Out, l.x, l.In, 1, l.W.G, l.In)
	for r := 0; r < batch; r++ {
		row := dy[r*l.Out : (r+1)*l.Out]
		for j, v := range row {
			l.B.G[j] += v
		}
	}
	l.dx = Grow(l.dx, batch*l.In)
	Gemm(false, false, batch, l.In, l.Out, 1, dy, l.Out, l.W.W, l.In, 0, l.dx, l.In)
	return l.dx
}

// Tanh is the element-wise hyperbolic tangent on N values per sample.
type Tanh struct {
	N int
	// Y is the output of the last Forward.
	Y  []float64
	dx []float64
}

// InSize implements Layer.
func (t *Tanh) InSize() int { return t.N }

// OutSize implements Layer.
func (t *Tanh) OutSize() int { return t.N }

// Params implements Layer: none.
func (t *Tanh) Params() []*Param { return nil }

// Clone implements Layer.
func (t *Tanh) Clone() Layer { return &Tanh{N: t.N} }

// Forward implements Layer.
func (t *Tanh) Forward(x []float64, batch int) []float64 {
	t.Y = Grow(t.Y, len(x))
	for i, v := range x {
		t.Y[i] = math.Tanh(v)
	}
	return t.Y
}

// Backward implements Layer.
func (t *Tanh) Backward(dy []float64, batch int) []float64 {
	t.dx = Grow(t.dx, len(dy))
	for i, g := range dy {
		y := t.Y[i]
		t.dx[i] = g * (1 - y*y)
	}
	return t.dx
}

// ReLU is the element-wise max(0, x) on N values per sample (its
// derivative at 0 taken as 0, as torch's).
type ReLU struct {
	N int
	// Y is the output of the last Forward.
	Y  []float64
	dx []float64
}

// InSize implements Layer.
func (r *ReLU) InSize() int { return r.N }

// OutSize implements Layer.
func (r *ReLU) OutSize() int { return r.N }

// Params implements Layer: none.
func (r *ReLU) Params() []*Param { return nil }

// Clone implements Layer.
func (r *ReLU) Clone() Layer { return &ReLU{N: r.N} }

// Forward implements Layer.
func (r *ReLU) Forward(x []float64, batch int) []float64 {
	r.Y = Grow(r.Y, len(x))
	for i, v := range x {
		r.Y[i] = max(v, 0)
	}
	return r.Y
}

// Backward implements Layer.
func (r *ReLU) Backward(dy []float64, batch int) []float64 {
	r.dx = Grow(r.dx, len(dy))
	for i, g := range dy {
		if r.Y[i] > 0 {
			r.dx[i] = g
		} else {
			r.dx[i] = 0
		}
	}
	return r.dx
}

// Conv1d is torch.nn.Conv1d(Cin, Cout, K, Stride) without padding, on
// channel-major samples (Cin × Lin) giving Cout × Lout, Lout =
// (Lin − K)/Stride + 1. It runs as a matrix product over the unfolded
// input (im2col).
type Conv1d struct {
	Cin, Cout, K, Stride, Lin, Lout int
	// W is Cout × (Cin·K), B has Cout values.
	W, B *Param
	// Y is the output of the last Forward.
	Y                        []float64
	cols, yr, dcols, dyr, dx []float64
}

// NewConv1d returns a convolution with weights and biases drawn from
// U(±scale/√(cin·k)), weights first.
func NewConv1d(name string, cin, cout, k, stride, lin int, scale float64, rng *rand.Rand) *Conv1d {
	c := &Conv1d{Cin: cin, Cout: cout, K: k, Stride: stride, Lin: lin, Lout: (lin-k)/stride + 1,
		W: NewParam(name+".w", cout*cin*k), B: NewParam(name+".b", cout)}
	InitUniform(c.W.W, cin*k, scale, rng)
	InitUniform(c.B.W, cin*k, scale, rng)
	return c
}

// InSize implements Layer.
func (c *Conv1d) InSize() int { return c.Cin * c.Lin }

// OutSize implements Layer.
func (c *Conv1d) OutSize() int { return c.Cout * c.Lout }

// Params implements Layer: the weights, then the biases.
func (c *Conv1d) Params() []*Param { return []*Param{c.W, c.B} }

// Clone implements Layer.
func (c *Conv1d) Clone() Layer {
	return &Conv1d{Cin: c.Cin, Cout: c.Cout, K: c.K, Stride: c.Stride, Lin: c.Lin, Lout: c.Lout, W: c.W, B: c.B}
}

// Forward implements Layer.
func (c *Conv1d) Forward(x []float64, batch int) []float64 {
	ck := c.Cin * c.K
	rows := batch * c.Lout
	c.cols = Grow(c.cols, rows*ck)
	in := c.InSize()
	for s := 0; s < batch; s++ {
		xs := x[s*in : (s+1)*in]
		for t := 0; t < c.Lout; t++ {
			row := c.cols[(s*c.Lout+t)*ck : (s*c.Lout+t+1)*ck]
			for ci := 0; ci < c.Cin; ci++ {
				copy(row[ci*c.K:(ci+1)*c.K], xs[ci*c.Lin+t*c.Stride:])
			}
		}
	}
	// Yr (rows × cout) = cols · Wᵀ
	c.yr = Grow(c.yr, rows*c.Cout)
	Gemm(false, true, rows, c.Cout, ck, 1, c.cols, ck, c.W.W, ck, 0, c.yr, c.Cout)
	out := c.OutSize()
	c.Y = Grow(c.Y, batch*out)
	for s := 0; s < batch; s++ {
		for t := 0; t < c.Lout; t++ {
			r := c.yr[(s*c.Lout+t)*c.Cout : (s*c.Lout+t+1)*c.Cout]
			for co, v := range r {
				c.Y[s*out+co*c.Lout+t] = v + c.B.W[co]
			}
		}
	}
	return c.Y
}

// Backward implements Layer.
func (c *Conv1d) Backward(dy []float64, batch int) []float64 {
	ck := c.Cin * c.K
	rows := batch * c.Lout
	out := c.OutSize()
	c.dyr = Grow(c.dyr, rows*c.Cout)
	for s := 0; s < batch; s++ {
		for co := 0; co < c.Cout; co++ {
			g := dy[s*out+co*c.Lout : s*out+(co+1)*c.Lout]
			var sum float64
			for t, v := range g {
				c.dyr[(s*c.Lout+t)*c.Cout+co] = v
				sum += v
			}
			c.B.G[co] += sum
		}
	}
	// dW += dYrᵀ · cols ; dcols = dYr · W
	Gemm(true, false, c.Cout, ck, rows, 1, c.dyr, c.Cout, c.cols, ck, 1, c.W.G, ck)
	c.dcols = Grow(c.dcols, rows*ck)
	Gemm(false, false, rows, ck, c.Cout, 1, c.dyr, c.Cout, c.W.W, ck, 0, c.dcols, ck)
	in := c.InSize()
	c.dx = Grow(c.dx, batch*in)
	clear(c.dx)
	for s := 0; s < batch; s++ {
		dxs := c.dx[s*in : (s+1)*in]
		for t := 0; t < c.Lout; t++ {
			row := c.dcols[(s*c.Lout+t)*ck : (s*c.Lout+t+1)*ck]
			for ci := 0; ci < c.Cin; ci++ {
				d := dxs[ci*c.Lin+t*c.Stride : ci*c.Lin+t*c.Stride+c.K]
				for j, v := range row[ci*c.K : (ci+1)*c.K] {
					d[j] += v
				}
			}
		}
	}
	return c.dx
}
