package learned

import (
	"bytes"
	"cmp"
	_ "embed" // the shipped weights
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/optsched/optsched/bench/rlscheduler"
	"github.com/optsched/optsched/heuristics/learn"
)

// MaxVisible is the number of waiting jobs the policy sees (and can
// choose among), RLScheduler's MAX_QUEUE_SIZE.
const MaxVisible = 128

// Features is the number of features of a visible job.
const Features = 8

// MaxWait normalises waiting times: 12 hours, as published.
const MaxWait = 12 * 3600

// Feature indexes of a visible job (each in [0, 1]):
//
//	FWait      waiting time / MaxWait (capped)
//	FRequest   requested time / the trace's largest requested time
//	FNodes     nodes / the cluster's nodes
//	FFits      1 if it fits in the free nodes now, else 0
//	FLogReq    log(1 + requested) / log(1 + largest requested)
//	FFree      the cluster's free nodes / its nodes (same for every job)
//	FSlowdown  log of its bounded slowdown if it started now and ran its
//	           request, / log 1000 (capped)
//	FQueue     the number of waiting jobs / MaxVisible (capped)
//
// Feature set 2 replaces the two features that are the same for every
// job of a decision (FFree, FQueue), which can rank jobs only through the
// network's non-linearity, by the two terms of F1's key, in the same
// units (the largest log-area, the cluster's nodes × log10 of the
// trace's largest request), so that a linear kernel can rank as F1 does:
//
//	FAge       870·log10(now / submit), F1's waiting term (capped)
//	FLogArea   nodes · log10(requested), F1's size term
const (
	FWait = iota
	FRequest
	FNodes
	FFits
	FLogReq
	FFree
	FSlowdown
	FQueue
)

// Feature set 2's features in the places of FFree and FQueue.
const (
	FAge     = FFree
	FLogArea = FQueue
)

// Feature sets of the kernel's input: FeatureSet1 (the first shipped
// weights') or FeatureSet2 (FAge and FLogArea in the places of FFree and
// FQueue).
const (
	FeatureSet1 = 1
	FeatureSet2 = 2
)

// criticIn is the critic's input: the features' means (8) and maxima of
// FWait, FRequest, FNodes, FSlowdown (4) over the visible jobs, the
// visible count / MaxVisible and the free nodes' share.
const criticIn = Features + 4 + 2

// KernelSizes are the kernel network's layer sizes (published: 32–16–8).
var KernelSizes = []int{Features, 32, 16, 8, 1}

// CriticSizes are the critic's layer sizes.
var CriticSizes = []int{criticIn, 32, 16, 1}

// RLScheduler is the design's network: the kernel (actor) and, while
// training, the critic.
type RLScheduler struct {
	Kernel *learn.Seq
	Critic *learn.Seq // nil in a policy read from a file
	// FeatureSet is the kernel's input: FeatureSet1 or FeatureSet2.
	FeatureSet int
}

// NewRLScheduler returns an untrained network: PyTorch's initialisation,
// the kernel's last layer scaled by 0.01 (near-uniform first choices).
func NewRLScheduler(rng *rand.Rand) *RLScheduler {
	k, _ := learn.NewMLP("kernel", KernelSizes, learn.ActReLU, 0.01, rng)
	c, _ := learn.NewMLP("critic", CriticSizes, learn.ActReLU, 1, rng)
	return &RLScheduler{Kernel: k, Critic: c, FeatureSet: FeatureSet1}
}

// Norm holds a workload's normalisers.
type Norm struct {
	// MaxRequest is the largest requested time of the trace (≥ 1).
	MaxRequest float64
}

// NormOf returns w's normalisers.
func NormOf(w *rlscheduler.Workload) Norm {
	n := Norm{MaxRequest: 1}
	for _, j := range w.Jobs {
		n.MaxRequest = max(n.MaxRequest, float64(j.Request))
	}
	return n
}

const almostOne = 1 - 1e-5

// observe writes the visible jobs' features (of feature set fs) into x
// (n × Features, row per job) and returns n and the visible jobs
// (indexes into waiting, in submit order, stable). vis is scratch.
func observe(x []float64, vis []int, now int64, free, nodes int, waiting []rlscheduler.Waiting, norm Norm, fs int) ([]int, int) {
	vis = vis[:0]
	for i := range waiting {
		vis = append(vis, i)
	}
	slices.SortStableFunc(vis, func(a, b int) int { return cmp.Compare(waiting[a].Submit, waiting[b].Submit) })
	if len(vis) > MaxVisible {
		vis = vis[:MaxVisible]
	}
	n := len(vis)
	lmax := math.Log1p(norm.MaxRequest)
	// F1's units: the largest log-area.
	f1u := float64(nodes) * math.Log10(max(norm.MaxRequest, 10))
	q := min(float64(len(waiting))/MaxVisible, 1)
	fr := float64(free) / float64(nodes)
	for r, i := range vis {
		w := waiting[i]
		row := x[r*Features : (r+1)*Features]
		wait := float64(max(now-w.Submit, 0))
		req := float64(max(w.Request, 1))
		row[FWait] = min(wait/MaxWait, almostOne)
		row[FRequest] = min(req/norm.MaxRequest, almostOne)
		row[FNodes] = min(float64(w.Nodes)/float64(nodes), almostOne)
		row[FFits] = 0
		if w.Nodes <= free {
			row[FFits] = 1
		}
		row[FLogReq] = min(math.Log1p(req)/lmax, almostOne)
		row[FFree] = fr
		row[FSlowdown] = min(math.Log(max(1, (wait+req)/max(req, 10)))/math.Log(1000), almostOne)
		row[FQueue] = q
		if fs == FeatureSet2 {
			row[FAge] = min(870*math.Log10(max(float64(now), 1)/max(float64(w.Submit), 1))/f1u, almostOne)
			row[FLogArea] = min(float64(w.Nodes)*math.Log10(req)/f1u, almostOne)
		}
	}
	return vis, n
}

// summarise writes the critic's input for the n observed rows of x and
// the free nodes' share fr.
func summarise(c, x []float64, n int, fr float64) {
	clear(c)
	for r := range n {
		row := x[r*Features : (r+1)*Features]
		for f, v := range row {
			c[f] += v / float64(n)
		}
		for k, f := range []int{FWait, FRequest, FNodes, FSlowdown} {
			c[Features+k] = max(c[Features+k], row[f])
		}
	}
	c[Features+4] = float64(n) / MaxVisible
	if n > 0 {
		c[Features+5] = fr
	}
}

// A Chooser is the trained policy deciding on one sequence or trace: it
// implements rlscheduler.Chooser. Not safe for concurrent use.
type Chooser struct {
	kernel *learn.Seq
	norm   Norm
	fs     int
	sample bool
	rng    *rand.Rand
	x, p   []float64
	vis    []int
	// Decisions counts the calls.
	Decisions int
}

// NewChooser returns a chooser of the policy's kernel (cloned: choosers
// can run at once) with w's normalisers: argmax, or with sample a draw
// from the softmax seeded by seed.
func NewChooser(p *RLScheduler, norm Norm, sample bool, seed uint64) *Chooser {
	return &Chooser{kernel: p.Kernel.CloneSeq(), norm: norm, fs: p.FeatureSet, sample: sample, rng: learn.NewRand(seed, 0x726c_6368),
		x: make([]float64, MaxVisible*Features), p: make([]float64, MaxVisible)}
}

// Choose implements rlscheduler.Chooser: the visible job of the largest
// probability (or a sampled one), as an index into waiting.
func (c *Chooser) Choose(now int64, free, nodes int, waiting []rlscheduler.Waiting) int {
	c.Decisions++
	if len(waiting) <= 1 {
		return 0
	}
	var n int
	c.vis, n = observe(c.x, c.vis, now, free, nodes, waiting, c.norm, c.fs)
	logits := c.kernel.Forward(c.x[:n*Features], n)
	learn.MaskedSoftmax(c.p, logits, n)
	return c.vis[learn.Pick(c.p, n, c.sample, c.rng)]
}

// Probabilities returns the last decision's probabilities over the
// MaxVisible positions (padding: exactly 0); for tests.
func (c *Chooser) Probabilities() []float64 { return c.p }

// weightsMagic heads an RLScheduler weights file of feature set 1
// (learn.WriteWeights), weightsMagic2 one of feature set 2; the header
// is the kernel's sizes (5 values).
const (
	weightsMagic  = "RLSWGT01"
	weightsMagic2 = "RLSWGT02"
)

// WriteRLScheduler writes the kernel's weights (float32; gzip), marked
// with its feature set.
func WriteRLScheduler(w io.Writer, p *RLScheduler) error {
	h := make([]uint32, len(KernelSizes))
	for i, s := range KernelSizes {
		h[i] = uint32(s)
	}
	magic := weightsMagic
	if p.FeatureSet == FeatureSet2 {
		magic = weightsMagic2
	}
	return learn.WriteWeights(w, magic, h, p.Kernel.Params())
}

// ReadRLScheduler reads a weights file WriteRLScheduler wrote, of either
// feature set; the kernel's sizes must be KernelSizes.
func ReadRLScheduler(r io.Reader) (*RLScheduler, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	p, err := readRLScheduler(bytes.NewReader(b), weightsMagic)
	if err == nil {
		p.FeatureSet = FeatureSet1
		return p, nil
	}
	p, err2 := readRLScheduler(bytes.NewReader(b), weightsMagic2)
	if err2 != nil {
		if errors.Is(err2, learn.ErrMagic) {
			return nil, err
		}
		return nil, err2
	}
	p.FeatureSet = FeatureSet2
	return p, nil
}

func readRLScheduler(r io.Reader, magic string) (*RLScheduler, error) {
	var k *learn.Seq
	err := learn.ReadWeights(r, magic, len(KernelSizes), func(h []uint32) ([]*learn.Param, error) {
		for i, s := range KernelSizes {
			if int(h[i]) != s {
				return nil, fmt.Errorf("kernel sizes %v, this build has %v", h, KernelSizes)
			}
		}
		k, _ = learn.NewMLP("kernel", KernelSizes, learn.ActReLU, 1, learn.NewRand(0, 0))
		return k.Params(), nil
	})
	if err != nil {
		return nil, err
	}
	return &RLScheduler{Kernel: k, FeatureSet: FeatureSet1}, nil
}

//go:embed weights/rlscheduler-lublin.bin.gz
var shippedLublin []byte

//go:embed weights/rlscheduler-hpc2n.bin.gz
var shippedHPC2N []byte

// Shipped returns the shipped weights trained on a shipped trace:
// "lublin-1" (instances/traces/lublin_256.swf.gz) or "hpc2n"
// (HPC2N-2002-2.1-cln.swf.gz).
func Shipped(trace string) (*RLScheduler, error) {
	switch trace {
	case "lublin-1":
		return ReadRLScheduler(bytes.NewReader(shippedLublin))
	case "hpc2n":
		return ReadRLScheduler(bytes.NewReader(shippedHPC2N))
	}
	return nil, fmt.Errorf("learned: no shipped rlscheduler weights for %q (have lublin-1, hpc2n)", trace)
}
