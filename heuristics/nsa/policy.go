package nsa

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/heuristics/learn"
	"github.com/optsched/optsched/model"
)

// Channels of the state, [Lan23] §V-B1: per position of the current idle
// sequence, the node's leaf switch and pod (ids normalised to [0, 1]), the
// current job's size n_j/n_max, and the mean size of the other jobs still
// to place /n_max; with the Idle option a fifth channel, 1 on real
// positions and 0 on padding, as the published code's machine-state
// channel.
const (
	chLeaf = iota
	chPod
	chSize
	chOthers
	chIdle
)

// DefaultQ is q, the number of positions of the idle sequence the state
// shows (and the number of actions): 100, as SA's Q.
const DefaultQ = 100

// DefaultNMax is n_max, the job size that normalises the size channels:
// 40, the largest job of the paper's trace.
const DefaultNMax = 40

// A Policy is the actor of NSA: a network that maps the state of one
// repair step to a distribution over the first q positions of the idle
// sequence (the reinserted job's start). Its Forward pass is not safe for
// concurrent use; NSA clones the network per solve.
type Policy struct {
	// Net is the actor network: β × q inputs, q outputs.
	Net *Net
	// Idle adds the fifth "idle" channel (β = 5 instead of 4).
	Idle bool
	// NMax is n_max, the size normaliser.
	NMax int
	// fused is Net with its consecutive Linear layers multiplied out,
	// made on first use by NSA (Net must not change after that).
	fused     *Net
	fusedOnce sync.Once
	// infer is the exact fast forward pass of fused (nil: none), made
	// with it; choosers clone it.
	infer *infer

	// Relative normalises the leaf and pod ids within the state instead
	// of over the whole cluster: the k-th distinct leaf (pod) among the
	// shown positions gets k/(number shown − 1), so neighbouring switches
	// differ by far more than 1/(leaves − 1).
	Relative bool
}

// Beta returns β, the number of channels: 4, or 5 with Idle.
func (p *Policy) Beta() int { return beta(p.Idle) }

func beta(idle bool) int {
	if idle {
		return 5
	}
	return 4
}

// NewPolicy returns an untrained policy of arch over q positions with
// near-uniform initial action probabilities.
func NewPolicy(arch Arch, q int, idle, relative bool, nmax int, rng *rand.Rand) (*Policy, error) {
	if nmax < 1 {
		return nil, fmt.Errorf("nsa: n_max must be at least 1, got %d", nmax)
	}
	net, err := NewNet(arch, beta(idle), q, q, 0.01, rng)
	if err != nil {
		return nil, err
	}
	return &Policy{Net: net, Idle: idle, NMax: nmax, Relative: relative}, nil
}

// topoFeatures gives the normalised leaf and pod ids of the nodes of a
// topology: the rank of the node's leaf switch (pod switch) in node order,
// divided by the number of leaves (pods) minus one.
//
// class numbers the distinct (leaf, pod) feature pairs: two nodes of the
// same class are shown to the policy alike, so a state is determined by
// the classes of its positions (the memo key of chooser). The leaf switch
// determines the pod, so a class is a leaf switch, numbered in node order.
//
// The values are kept per switch, not per node: a solve reads them for
// its idle positions only, and filling tables of every node cost most of a
// solve's start on a 10⁶-node topology (measured by bench limits).
type topoFeatures struct {
	topo          *model.Topology
	leafOf, podOf []float64 // by switch: its normalised rank as a leaf (pod)
	classOf       []uint32  // by leaf switch
}

func (f *topoFeatures) leaf(id int) float64 { return f.leafOf[f.topo.Group(id, 0)] }
func (f *topoFeatures) pod(id int) float64  { return f.podOf[f.topo.Group(id, 1)] }
func (f *topoFeatures) class(id int) uint32 { return f.classOf[f.topo.Group(id, 0)] }

func newTopoFeatures(t *model.Topology) *topoFeatures {
	ns := t.NumSwitches()
	f := &topoFeatures{topo: t, leafOf: make([]float64, ns), podOf: make([]float64, ns), classOf: make([]uint32, ns)}
	// The switches that hold nodes (every node's leaf switch), by their first node: scanning
	// them in that order meets every switch at the same time as scanning
	// the nodes in id order would.
	type leafAt struct{ sw, first int }
	var leaves []leafAt
	for i := range ns {
		sw := t.Switch(i)
		if len(sw.Nodes) == 0 {
			continue // holds no node directly: no node's leaf switch
		}
		leaves = append(leaves, leafAt{i, slices.Min(sw.Nodes)})
	}
	slices.SortFunc(leaves, func(a, b leafAt) int { return a.first - b.first })
	for up, dst := range [][]float64{f.leafOf, f.podOf} {
		rank := make([]int32, ns)
		for i := range rank {
			rank[i] = -1
		}
		n := 0
		for _, l := range leaves {
			g := t.Group(l.first, up)
			if rank[g] < 0 {
				rank[g] = int32(n)
				n++
			}
		}
		for g, r := range rank {
			if r >= 0 {
				dst[g] = float64(r)
				if n > 1 {
					dst[g] /= float64(n - 1)
				}
			}
		}
	}
	for c, l := range leaves {
		f.classOf[l.sw] = uint32(c)
	}
	return f
}

// encoding is how states are written: q positions, the channels and
// the normalisations.
type encoding struct {
	q              int
	idle, relative bool
	nmax           int
}

func (p *Policy) encoding() encoding {
	return encoding{q: p.Net.Q, idle: p.Idle, relative: p.Relative, nmax: p.NMax}
}

// encode writes the state of one repair step into x (β × q,
// channel-major): the first min(q, len(free)) positions of the idle
// sequence free (positions into idle), the job's size and the sizes of
// the jobs still pending. It returns the number of valid positions.
func (e encoding) encode(x []float64, tf *topoFeatures, idle, free []int, size int, pending []int) int {
	q := e.q
	clear(x)
	n := min(q, len(free))
	sz := float64(size) / float64(e.nmax)
	others := 0.0
	if len(pending) > 0 {
		s := 0
		for _, v := range pending {
			s += v
		}
		others = float64(s) / float64(len(pending)) / float64(e.nmax)
	}
	for i := 0; i < n; i++ {
		id := idle[free[i]]
		x[chLeaf*q+i] = tf.leaf(id)
		x[chPod*q+i] = tf.pod(id)
		x[chSize*q+i] = sz
		x[chOthers*q+i] = others
		if e.idle {
			x[chIdle*q+i] = 1
		}
	}
	if e.relative && n > 0 {
		for _, ch := range []int{chLeaf, chPod} {
			row := x[ch*q : ch*q+n]
			k, prev := 0, row[0]
			for i, v := range row {
				if v != prev {
					k++
					prev = v
				}
				row[i] = float64(k)
			}
			if k > 0 {
				for i := range row {
					row[i] /= float64(k)
				}
			}
		}
	}
	return n
}

// maskedSoftmax is learn.MaskedSoftmax: masked logits (padding, or
// beyond the allowed starts) are set to the lowest value before the
// softmax ([Lan23] §V-B2), so their probability is exactly 0.
func maskedSoftmax(p, logits []float64, valid int) float64 {
	return learn.MaskedSoftmax(p, logits, valid)
}

// pick is learn.Pick: the most probable action (greedy, lowest index
// among ties) or a draw from rng.
func pick(p []float64, valid int, sample bool, rng *rand.Rand) int {
	return learn.Pick(p, valid, sample, rng)
}

// chooser is a heuristics.StartChooser backed by a policy, for one solve.
//
// It memoises the policy's distribution per state: an annealing run
// shows the policy the same state again and again (a rejected move
// restores the solution, and the next move often takes out the same job),
// about nine times in ten on the Table III/IV windows. The state a step
// encodes is a function of the classes (topoFeatures.class) of its first
// q idle positions, the job's size, the sum and count of the pending
// sizes and the number of allowed starts; those, written as varints, are
// the key. A hit returns the probabilities computed for the first
// occurrence — the same numbers, so the choices (and the random draws)
// are exactly those of running the network every time.
type chooser struct {
	pol    *Policy
	net    *Net
	fast   *infer // the exact fast forward pass of net, when there is one
	tf     *topoFeatures
	enc    encoding
	sample bool
	invT   float64 // 1 / sampling temperature
	x, p   []float64
	key    []byte
	memo   map[string][]float64 // state key → probabilities of the valid starts
	// noMemo runs Net.Forward on every step (the tests' reference).
	noMemo bool
}

// chooserMemoMax caps the memoised states of one solve (at most q
// float64s each): past it, new states are computed and not kept.
const chooserMemoMax = 1 << 13

func (p *Policy) chooser(t *model.Topology, sample bool, temperature float64) *chooser {
	q := p.Net.Q
	p.fusedOnce.Do(func() {
		p.fused = p.Net.Fused()
		p.infer = newInfer(p.fused)
	})
	invT := 1.0
	if temperature > 0 {
		invT = 1 / temperature
	}
	return &chooser{pol: p, net: p.fused.Clone(), fast: p.infer.clone(), tf: newTopoFeatures(t), enc: p.encoding(), sample: sample, invT: invT,
		x: make([]float64, p.Beta()*q), p: make([]float64, q), memo: map[string][]float64{}}
}

// stateKey writes into c.key what the encoded state of s is a function
// of (see chooser), given valid allowed starts.
func (c *chooser) stateKey(s *heuristics.RepairStep, valid int) []byte {
	n := min(c.enc.q, len(s.Free))
	sum := 0
	for _, v := range s.Pending {
		sum += v
	}
	k := c.key[:0]
	k = binary.AppendUvarint(k, uint64(valid))
	k = binary.AppendVarint(k, int64(s.Size))
	k = binary.AppendVarint(k, int64(sum))
	k = binary.AppendUvarint(k, uint64(len(s.Pending)))
	k = binary.AppendUvarint(k, uint64(n))
	idle := s.Window.Idle
	for _, f := range s.Free[:n] {
		k = binary.AppendUvarint(k, uint64(c.tf.class(idle[f])))
	}
	c.key = k
	return k
}

// ChooseStart runs the actor on the step's state and returns its action:
// a start among the first min(q, s.Starts) positions of the idle sequence.
func (c *chooser) ChooseStart(s *heuristics.RepairStep) int {
	valid := min(c.enc.q, len(s.Free), s.Starts)
	if valid <= 1 {
		return 0
	}
	if c.noMemo {
		return pick(c.probs(s, valid), valid, c.sample, s.Rand)
	}
	key := c.stateKey(s, valid)
	p, ok := c.memo[string(key)]
	if !ok {
		p = c.probs(s, valid)
		if len(c.memo) < chooserMemoMax {
			p = append([]float64(nil), p[:valid]...)
			c.memo[string(key)] = p
		}
	}
	return pick(p, valid, c.sample, s.Rand)
}

// probs encodes the state of s, runs the network and returns the
// probabilities of the valid starts (c.p, valid until the next call).
func (c *chooser) probs(s *heuristics.RepairStep, valid int) []float64 {
	n := c.enc.encode(c.x, c.tf, s.Window.Idle, s.Free, s.Size, s.Pending)
	var logits []float64
	if c.fast != nil && !c.noMemo {
		logits = c.fast.forward(c.x, n)
	} else {
		logits = c.net.Forward(c.x, 1)
	}
	if c.invT != 1 {
		for i := range logits[:valid] {
			logits[i] *= c.invT
		}
	}
	maskedSoftmax(c.p, logits, valid)
	return c.p
}
