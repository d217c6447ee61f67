package nsa

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/optsched/optsched/heuristics/learn"
)

// Arch names a network architecture of [Lan23] Table II.
type Arch int

const (
	// CNN3 is Conv1d(β,16,10,1)–Tanh–Conv1d(16,8,5,2)–Flatten–
	// Linear(8·L₂,256)–Linear(256,out); with q = 100, L₂ = 44 and the
	// flattened size is 352. The default.
	CNN3 Arch = iota
	// CNN2 is Conv1d(β,16,10,1)–Tanh–Conv1d(16,8,5,2)–Flatten–Linear(8·L₂,out).
	CNN2
	// CNN1 is Conv1d(β,16,10,1)–Tanh–Flatten–Linear(16·L₁,out), L₁ = q − 9.
	CNN1
	// FCN1 is Flatten–Linear(β·q,out).
	FCN1
	// FCN2 is Flatten–Linear(β·q,256)–Tanh–Linear(256,out).
	FCN2
	// FCN3 is Flatten–Linear(β·q,256)–Tanh–Linear(256,256)–Tanh–Linear(256,out).
	FCN3
	numArch
)

var archNames = [...]string{"cnn3", "cnn2", "cnn1", "fcn1", "fcn2", "fcn3"}

// String returns the architecture's name ("cnn3").
func (a Arch) String() string {
	if a >= 0 && a < numArch {
		return archNames[a]
	}
	return fmt.Sprintf("Arch(%d)", int(a))
}

// ParseArch parses an architecture name (cnn3, cnn2, cnn1, fcn1, fcn2,
// fcn3; case-insensitive).
func ParseArch(s string) (Arch, error) {
	for i, n := range archNames {
		if strings.EqualFold(s, n) {
			return Arch(i), nil
		}
	}
	return 0, fmt.Errorf("unknown architecture %q (known: %s)", s, strings.Join(archNames[:], ", "))
}

// MinQ is the smallest q the convolutional architectures accept (two
// convolutions of widths 10 and 5 need 14 positions).
const MinQ = 14

// A Net is a feed-forward network of [Lan23] Table II over samples of
// β channels × q positions (channel-major), with Out outputs: the actor
// has q (one logit per start position), the critic 1. It is not safe for
// concurrent use; Clone gives a copy that shares the parameters.
type Net struct {
	Arch         Arch
	Beta, Q, Out int
	layers       []layer
}

// NewNet returns a network of arch with weights drawn as PyTorch does by
// default (U(±1/√fan-in)); the last layer's weights and biases are scaled
// by lastScale (0.01 for an actor: a near-uniform initial policy).
func NewNet(arch Arch, beta, q, out int, lastScale float64, rng *rand.Rand) (*Net, error) {
	if beta < 1 || q < 1 || out < 1 {
		return nil, fmt.Errorf("nsa: network needs β, q, outputs ≥ 1, got %d, %d, %d", beta, q, out)
	}
	n := &Net{Arch: arch, Beta: beta, Q: q, Out: out}
	in := beta * q
	switch arch {
	case CNN1, CNN2, CNN3:
		if q < MinQ {
			return nil, fmt.Errorf("nsa: %s needs q ≥ %d, got %d", arch, MinQ, q)
		}
		c1 := newConv1d("conv1", beta, 16, 10, 1, q, 1, rng)
		n.layers = append(n.layers, c1, &tanh{n: c1.outSize()})
		if arch == CNN1 {
			n.layers = append(n.layers, newLinear("fc1", c1.outSize(), out, lastScale, rng))
			break
		}
		c2 := newConv1d("conv2", 16, 8, 5, 2, c1.Lout, 1, rng)
		n.layers = append(n.layers, c2)
		if arch == CNN2 {
			n.layers = append(n.layers, newLinear("fc1", c2.outSize(), out, lastScale, rng))
			break
		}
		n.layers = append(n.layers, newLinear("fc1", c2.outSize(), 256, 1, rng), newLinear("fc2", 256, out, lastScale, rng))
	case FCN1:
		n.layers = append(n.layers, newLinear("fc1", in, out, lastScale, rng))
	case FCN2:
		n.layers = append(n.layers, newLinear("fc1", in, 256, 1, rng), &tanh{n: 256}, newLinear("fc2", 256, out, lastScale, rng))
	case FCN3:
		n.layers = append(n.layers, newLinear("fc1", in, 256, 1, rng), &tanh{n: 256},
			newLinear("fc2", 256, 256, 1, rng), &tanh{n: 256}, newLinear("fc3", 256, out, lastScale, rng))
	default:
		return nil, fmt.Errorf("nsa: unknown architecture %d", int(arch))
	}
	if got := n.layers[len(n.layers)-1].outSize(); got != out {
		return nil, fmt.Errorf("nsa: %s ends with %d outputs, want %d", arch, got, out)
	}
	return n, nil
}

// Params returns the network's parameters in a fixed order (the order of
// the weights file).
func (n *Net) Params() []*Param {
	var ps []*Param
	for _, l := range n.layers {
		ps = append(ps, l.params()...)
	}
	return ps
}

// NumParams returns the number of scalar parameters.
func (n *Net) NumParams() int {
	s := 0
	for _, p := range n.Params() {
		s += len(p.W)
	}
	return s
}

// Forward runs a batch of samples (batch × β·q values, channel-major per
// sample) and returns batch × Out outputs. The result is owned by the
// network and valid until the next call.
func (n *Net) Forward(x []float64, batch int) []float64 {
	if len(x) != batch*n.Beta*n.Q {
		panic(fmt.Sprintf("nsa: Forward with %d values for %d samples of %d", len(x), batch, n.Beta*n.Q))
	}
	for _, l := range n.layers {
		x = l.forward(x, batch)
	}
	return x
}

// Backward takes the gradient of a loss with respect to the last
// Forward's outputs, accumulates the parameters' gradients and returns
// the gradient with respect to the inputs (owned by the network).
func (n *Net) Backward(dy []float64, batch int) []float64 {
	for i := len(n.layers) - 1; i >= 0; i-- {
		dy = n.layers[i].backward(dy, batch)
	}
	return dy
}

// ZeroGrad clears the accumulated gradients.
func (n *Net) ZeroGrad() {
	for _, p := range n.Params() {
		clear(p.G)
	}
}

// Clone returns a network that shares n's parameters (and gradients) but
// has its own buffers, so two goroutines can run forward passes at once.
func (n *Net) Clone() *Net {
	c := &Net{Arch: n.Arch, Beta: n.Beta, Q: n.Q, Out: n.Out}
	for _, l := range n.layers {
		c.layers = append(c.layers, l.clone())
	}
	return c
}

// Copy returns a network with its own copy of n's parameters.
func (n *Net) Copy() *Net {
	c := n.Clone()
	for _, l := range c.layers {
		switch l := l.(type) {
		case *linear:
			l.W, l.B = learn.CopyParam(l.W), learn.CopyParam(l.B)
		case *conv1d:
			l.W, l.B = learn.CopyParam(l.W), learn.CopyParam(l.B)
		}
	}
	return c
}

// Fused returns a network computing the same function as n with every
// run of consecutive Linear layers (no activation between them, as
// CNN-3's Linear(352,256)–Linear(256,100)) multiplied out into one
// (learn.FuseLinear: W = W₂·W₁, b = W₂·b₁ + b₂). It is for inference
// (fewer operations; the outputs differ from n's only by rounding) and
// shares nothing with n.
func (n *Net) Fused() *Net {
	c := &Net{Arch: n.Arch, Beta: n.Beta, Q: n.Q, Out: n.Out}
	for _, l := range n.Copy().layers {
		l2, ok := l.(*linear)
		if k := len(c.layers) - 1; ok && k >= 0 {
			if l1, ok := c.layers[k].(*linear); ok {
				c.layers[k] = &linear{learn.FuseLinear(l1.Linear, l2.Linear)}
				continue
			}
		}
		c.layers = append(c.layers, l)
	}
	return c
}

// numParams returns the parameter count of NewNet(arch, beta, q, out)
// without building it (the weights reader checks a file's header with
// it before allocating anything).
func numParams(arch Arch, beta, q, out int) (int, error) {
	lin := func(in, o int) int { return in*o + o }
	in := beta * q
	switch arch {
	case CNN1, CNN2, CNN3:
		if q < MinQ {
			return 0, fmt.Errorf("nsa: %s needs q ≥ %d, got %d", arch, MinQ, q)
		}
		l1 := q - 9
		c1 := 16*beta*10 + 16
		if arch == CNN1 {
			return c1 + lin(16*l1, out), nil
		}
		l2 := (l1-5)/2 + 1
		c2 := 8*16*5 + 8
		if arch == CNN2 {
			return c1 + c2 + lin(8*l2, out), nil
		}
		return c1 + c2 + lin(8*l2, 256) + lin(256, out), nil
	case FCN1:
		return lin(in, out), nil
	case FCN2:
		return lin(in, 256) + lin(256, out), nil
	case FCN3:
		return lin(in, 256) + lin(256, 256) + lin(256, out), nil
	}
	return 0, fmt.Errorf("nsa: unknown architecture %d", int(arch))
}
