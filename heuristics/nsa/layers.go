package nsa

import (
	"math/rand/v2"

	"github.com/optsched/optsched/heuristics/learn"
)

// A Param is one trainable tensor of a network (learn.Param).
type Param = learn.Param

// layer is a layer of heuristics/learn seen through nsa's method set: a
// Net is a stack of them (linear, conv1d, tanh), each a thin wrapper of
// the learn layer doing the work, so that the exact inference pass
// (infer) can switch on the kinds it has kernels for.
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

// gemm is learn.Gemm.
func gemm(tA, tB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	learn.Gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// linear is learn.Linear (torch.nn.Linear).
type linear struct{ *learn.Linear }

func newLinear(name string, in, out int, scale float64, rng *rand.Rand) *linear {
	return &linear{learn.NewLinear(name, in, out, scale, rng)}
}

func (l *linear) forward(x []float64, b int) []float64  { return l.Forward(x, b) }
func (l *linear) backward(d []float64, b int) []float64 { return l.Backward(d, b) }
func (l *linear) params() []*Param                      { return l.Params() }
func (l *linear) inSize() int                           { return l.In }
func (l *linear) outSize() int                          { return l.Out }
func (l *linear) clone() layer                          { return &linear{l.Clone().(*learn.Linear)} }

// tanh is learn.Tanh on n values per sample (made on first use).
type tanh struct {
	n int
	t *learn.Tanh
}

func (t *tanh) impl() *learn.Tanh {
	if t.t == nil {
		t.t = &learn.Tanh{N: t.n}
	}
	return t.t
}

func (t *tanh) forward(x []float64, b int) []float64  { return t.impl().Forward(x, b) }
func (t *tanh) backward(d []float64, b int) []float64 { return t.impl().Backward(d, b) }
func (t *tanh) params() []*Param                      { return nil }
func (t *tanh) inSize() int                           { return t.n }
func (t *tanh) outSize() int                          { return t.n }
func (t *tanh) clone() layer                          { return &tanh{n: t.n} }

// conv1d is learn.Conv1d (torch.nn.Conv1d without padding).
type conv1d struct{ *learn.Conv1d }

func newConv1d(name string, cin, cout, k, stride, lin int, scale float64, rng *rand.Rand) *conv1d {
	return &conv1d{learn.NewConv1d(name, cin, cout, k, stride, lin, scale, rng)}
}

func (c *conv1d) forward(x []float64, b int) []float64  { return c.Forward(x, b) }
func (c *conv1d) backward(d []float64, b int) []float64 { return c.Backward(d, b) }
func (c *conv1d) params() []*Param                      { return c.Params() }
func (c *conv1d) inSize() int                           { return c.InSize() }
func (c *conv1d) outSize() int                          { return c.OutSize() }
func (c *conv1d) clone() layer                          { return &conv1d{c.Clone().(*learn.Conv1d)} }
