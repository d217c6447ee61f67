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
	// Residual, when ResidualF1, makes the policy residual: a job's
	// logit is F1's key, negated, in the units of feature set 2 and
	// divided by Temperature, plus the kernel's output (a learned
	// correction); the visible jobs are the MaxVisible of the lowest F1
	// key. The kernel's last layer starts at zero, so the untrained
	// policy's argmax is F1's choice. Empty: the kernel alone.
	Residual string
	// Temperature divides F1's key in a residual policy's logits.
	Temperature float64
}

// ResidualF1 is the residual policy over F1's key (RLScheduler.Residual).
const ResidualF1 = "f1"

// DefaultTemperature is a residual policy's default temperature.
const DefaultTemperature = 0.01

// NewResidualRLScheduler returns an untrained residual policy over F1
// (feature set 2, the kernel's last layer zero: its argmax is F1's
// choice) of temperature temp.
func NewResidualRLScheduler(temp float64, rng *rand.Rand) *RLScheduler {
	return residualOf(NewRLScheduler(rng), temp)
}

// residualOf makes p residual over F1 of temperature temp: feature set
// 2, the kernel's last layer zero.
func residualOf(p *RLScheduler, temp float64) *RLScheduler {
	// The file keeps the temperature as float32: so does training.
	p.FeatureSet, p.Residual, p.Temperature = FeatureSet2, ResidualF1, float64(float32(temp))
	params := p.Kernel.Params()
	for _, q := range params[len(params)-2:] {
		clear(q.W)
	}
	return p
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
	vis = firstStable(vis, MaxVisible, func(a, b int) int { return cmp.Compare(waiting[a].Submit, waiting[b].Submit) })
	fillRows(x, vis, now, free, nodes, waiting, norm, fs)
	return vis, len(vis)
}

// firstStable returns the first k of ids (ascending indexes) in a stable
// sort by cmp, in that order, in ids' storage: what sorting all of ids
// stably and keeping k would give, in O(len(ids) · log k) instead of a
// stable sort of the whole queue at every decision (on a log whose queue
// grows to 10⁵ jobs, most of a run). A stable sort of ascending indexes
// is the sort by (cmp, index), so the k least by that order are kept in a
// max-heap and then sorted.
func firstStable(ids []int, k int, cmp func(a, b int) int) []int {
	if len(ids) <= k {
		slices.SortStableFunc(ids, cmp)
		return ids
	}
	// less orders by cmp, then by index: a strict total order.
	less := func(a, b int) bool {
		if c := cmp(a, b); c != 0 {
			return c < 0
		}
		return a < b
	}
	heap := ids[:k] // a max-heap of the k least so far (ids ascending: the first k are any k)
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= k {
				return
			}
			m := l
			if r := l + 1; r < k && less(heap[l], heap[r]) {
				m = r
			}
			if !less(heap[i], heap[m]) {
				return
			}
			heap[i], heap[m] = heap[m], heap[i]
			i = m
		}
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, id := range ids[k:] {
		if less(id, heap[0]) {
			heap[0] = id
			down(0)
		}
	}
	slices.SortFunc(heap, func(a, b int) int {
		switch {
		case a == b:
			return 0
		case less(a, b):
			return -1
		}
		return 1
	})
	return heap
}

// f1Units is the unit of feature set 2's F1 terms: the cluster's nodes
// × log10 of the trace's largest request.
func f1Units(nodes int, norm Norm) float64 {
	return float64(nodes) * math.Log10(max(norm.MaxRequest, 10))
}

// f1Key is F1's key of a waiting job (rlscheduler's "f1", with the job's
// nodes as its processors): log10(request)·nodes + 870·log10(submit).
func f1Key(w rlscheduler.Waiting) float64 {
	pos := func(v float64) float64 {
		if v <= 0 {
			return 0.1
		}
		return v
	}
	return math.Log10(pos(float64(w.Request)))*float64(w.Nodes) + 870*math.Log10(pos(float64(w.Submit)))
}

// observeResidual is observe for a residual policy: the visible jobs
// are the MaxVisible of the lowest F1 key (the earliest in waiting
// among equals, F1's order), their rows feature set 2's, and prior[r]
// the r-th one's F1 prior, −(key − the lowest key) / (units · temp).
// keys is scratch (len(waiting) or more).
func observeResidual(x, prior, keys []float64, vis []int, now int64, free, nodes int, waiting []rlscheduler.Waiting, norm Norm, temp float64) ([]int, []float64, int) {
	vis = vis[:0]
	keys = learn.Grow(keys, len(waiting))
	for i, w := range waiting {
		vis = append(vis, i)
		keys[i] = f1Key(w)
	}
	vis = firstStable(vis, MaxVisible, func(a, b int) int { return cmp.Compare(keys[a], keys[b]) })
	fillRows(x, vis, now, free, nodes, waiting, norm, FeatureSet2)
	u := f1Units(nodes, norm) * temp
	for r, i := range vis {
		prior[r] = -(keys[i] - keys[vis[0]]) / u
	}
	return vis, keys, len(vis)
}

// fillRows writes the rows of the visible jobs vis (indexes into
// waiting) of feature set fs into x.
func fillRows(x []float64, vis []int, now int64, free, nodes int, waiting []rlscheduler.Waiting, norm Norm, fs int) {
	lmax := math.Log1p(norm.MaxRequest)
	// F1's units: the largest log-area.
	f1u := f1Units(nodes, norm)
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
	kernel   *learn.Seq
	norm     Norm
	fs       int
	residual bool
	temp     float64
	sample   bool
	rng      *rand.Rand
	x, p     []float64
	prior    []float64
	keys     []float64
	vis      []int
	// Decisions counts the calls.
	Decisions int
}

// NewChooser returns a chooser of the policy's kernel (cloned: choosers
// can run at once) with w's normalisers: argmax, or with sample a draw
// from the softmax seeded by seed.
func NewChooser(p *RLScheduler, norm Norm, sample bool, seed uint64) *Chooser {
	return &Chooser{kernel: p.Kernel.CloneSeq(), norm: norm, fs: p.FeatureSet, residual: p.Residual == ResidualF1, temp: p.Temperature,
		sample: sample, rng: learn.NewRand(seed, 0x726c_6368),
		x: make([]float64, MaxVisible*Features), p: make([]float64, MaxVisible), prior: make([]float64, MaxVisible)}
}

// Visible returns MaxVisible, the queued jobs Choose depends on when the
// queue is in arrival order (bench/sim's): observe's visible jobs are the
// first MaxVisible by submit time, ties in queue order, and Choose reads
// the queue's length only as at most MaxVisible (and ≤ 1). A residual
// policy ranks the whole queue by F1: 0, the whole queue.
func (c *Chooser) Visible() int {
	if c.residual {
		return 0
	}
	return MaxVisible
}

// Choose implements rlscheduler.Chooser: the visible job of the largest
// probability (or a sampled one), as an index into waiting.
func (c *Chooser) Choose(now int64, free, nodes int, waiting []rlscheduler.Waiting) int {
	c.Decisions++
	if len(waiting) <= 1 {
		return 0
	}
	var n int
	if c.residual {
		c.vis, c.keys, n = observeResidual(c.x, c.prior, c.keys, c.vis, now, free, nodes, waiting, c.norm, c.temp)
	} else {
		c.vis, n = observe(c.x, c.vis, now, free, nodes, waiting, c.norm, c.fs)
	}
	logits := c.kernel.Forward(c.x[:n*Features], n)
	if c.residual {
		for r := range n {
			logits[r] += c.prior[r]
		}
	}
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

// weightsMagicResidual heads a residual policy's weights file (over F1,
// feature set 2); the header is the kernel's sizes and the temperature's
// float32 bits.
const weightsMagicResidual = "RLSWGT03"

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
	switch p.Residual {
	case "":
	case ResidualF1:
		if p.FeatureSet != FeatureSet2 || !(p.Temperature > 0) {
			return fmt.Errorf("learned: a residual policy needs feature set 2 and a positive temperature, got %d and %g", p.FeatureSet, p.Temperature)
		}
		magic = weightsMagicResidual
		h = append(h, math.Float32bits(float32(p.Temperature)))
	default:
		return fmt.Errorf("learned: residual policy over %q (have %q)", p.Residual, ResidualF1)
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
	if err2 == nil {
		p.FeatureSet = FeatureSet2
		return p, nil
	}
	if !errors.Is(err2, learn.ErrMagic) {
		return nil, err2
	}
	p, err3 := readRLScheduler(bytes.NewReader(b), weightsMagicResidual)
	if err3 != nil {
		if errors.Is(err3, learn.ErrMagic) {
			return nil, err
		}
		return nil, err3
	}
	return p, nil
}

func readRLScheduler(r io.Reader, magic string) (*RLScheduler, error) {
	var k *learn.Seq
	nh := len(KernelSizes)
	if magic == weightsMagicResidual {
		nh++
	}
	temp := 0.0
	err := learn.ReadWeights(r, magic, nh, func(h []uint32) ([]*learn.Param, error) {
		if magic == weightsMagicResidual {
			temp = float64(math.Float32frombits(h[nh-1]))
			if !(temp > 0) || math.IsInf(temp, 0) {
				return nil, fmt.Errorf("residual temperature %g", temp)
			}
		}
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
	if magic == weightsMagicResidual {
		return &RLScheduler{Kernel: k, FeatureSet: FeatureSet2, Residual: ResidualF1, Temperature: temp}, nil
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
