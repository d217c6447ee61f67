package learn

import (
	"fmt"
	"math/rand/v2"
)

// A Seq is a stack of layers run in order. It is not safe for concurrent
// use; Clone gives a copy that shares the parameters.
type Seq struct {
	Layers []Layer
}

// Activation names an MLP's hidden activation.
type Activation int

const (
	// ActReLU is max(0, x).
	ActReLU Activation = iota
	// ActTanh is tanh.
	ActTanh
)

// NewMLP returns Linear(sizes[0], sizes[1])–act–…–Linear(sizes[n−2],
// sizes[n−1]) with PyTorch's default initialisation (U(±1/√fan-in)), the
// last layer's weights and biases scaled by lastScale (0.01 for an
// actor: near-uniform initial logits). Layers are named name.fc1, ….
func NewMLP(name string, sizes []int, act Activation, lastScale float64, rng *rand.Rand) (*Seq, error) {
	if len(sizes) < 2 {
		return nil, fmt.Errorf("learn: an MLP needs at least 2 sizes, got %v", sizes)
	}
	for _, s := range sizes {
		if s < 1 {
			return nil, fmt.Errorf("learn: MLP sizes must be positive, got %v", sizes)
		}
	}
	s := &Seq{}
	for i := 0; i+1 < len(sizes); i++ {
		last := i+2 == len(sizes)
		scale := 1.0
		if last {
			scale = lastScale
		}
		s.Layers = append(s.Layers, NewLinear(fmt.Sprintf("%s.fc%d", name, i+1), sizes[i], sizes[i+1], scale, rng))
		if !last {
			switch act {
			case ActTanh:
				s.Layers = append(s.Layers, &Tanh{N: sizes[i+1]})
			default:
				s.Layers = append(s.Layers, &ReLU{N: sizes[i+1]})
			}
		}
	}
	return s, nil
}

// InSize implements Layer.
func (s *Seq) InSize() int { return s.Layers[0].InSize() }

// OutSize implements Layer.
func (s *Seq) OutSize() int { return s.Layers[len(s.Layers)-1].OutSize() }

// Params implements Layer: every layer's, in order (the order of a
// weights file).
func (s *Seq) Params() []*Param {
	var ps []*Param
	for _, l := range s.Layers {
		ps = append(ps, l.Params()...)
	}
	return ps
}

// NumParams returns the number of scalar parameters.
func (s *Seq) NumParams() int {
	n := 0
	for _, p := range s.Params() {
		n += len(p.W)
	}
	return n
}

// Forward implements Layer.
func (s *Seq) Forward(x []float64, batch int) []float64 {
	for _, l := range s.Layers {
		x = l.Forward(x, batch)
	}
	return x
}

// Backward implements Layer.
func (s *Seq) Backward(dy []float64, batch int) []float64 {
	for i := len(s.Layers) - 1; i >= 0; i-- {
		dy = s.Layers[i].Backward(dy, batch)
	}
	return dy
}

// Clone implements Layer: shared parameters, own buffers.
func (s *Seq) Clone() Layer { return s.CloneSeq() }

// CloneSeq is Clone with its concrete type.
func (s *Seq) CloneSeq() *Seq {
	c := &Seq{}
	for _, l := range s.Layers {
		c.Layers = append(c.Layers, l.Clone())
	}
	return c
}

// Copy returns a stack with its own copy of the parameters (of Linear
// and Conv1d layers and nested Seqs).
func (s *Seq) Copy() *Seq {
	c := &Seq{}
	for _, l := range s.Layers {
		c.Layers = append(c.Layers, CopyLayer(l))
	}
	return c
}

// CopyLayer returns a clone of l with its own copy of the parameters of
// the known layer types (Linear, Conv1d, Seq); others are cloned.
func CopyLayer(l Layer) Layer {
	switch l := l.(type) {
	case *Linear:
		c := l.Clone().(*Linear)
		c.W, c.B = CopyParam(l.W), CopyParam(l.B)
		return c
	case *Conv1d:
		c := l.Clone().(*Conv1d)
		c.W, c.B = CopyParam(l.W), CopyParam(l.B)
		return c
	case *Seq:
		return l.Copy()
	}
	return l.Clone()
}

// ZeroGrad clears the accumulated gradients of params.
func ZeroGrad(params []*Param) {
	for _, p := range params {
		clear(p.G)
	}
}

// FuseLinear returns one Linear computing l2(l1(x)) (no activation
// between): W = W₂·W₁, b = W₂·b₁ + b₂. It shares nothing with them.
func FuseLinear(l1, l2 *Linear) *Linear {
	f := &Linear{In: l1.In, Out: l2.Out,
		W: &Param{Name: l1.W.Name + "*" + l2.W.Name, W: make([]float64, l2.Out*l1.In), G: make([]float64, l2.Out*l1.In)},
		B: &Param{Name: l1.B.Name + "*" + l2.B.Name, W: append([]float64(nil), l2.B.W...), G: make([]float64, l2.Out)}}
	Gemm(false, false, l2.Out, l1.In, l1.Out, 1, l2.W.W, l2.In, l1.W.W, l1.In, 0, f.W.W, l1.In)
	Gemm(false, false, l2.Out, 1, l1.Out, 1, l2.W.W, l2.In, l1.B.W, 1, 1, f.B.W, 1)
	return f
}
