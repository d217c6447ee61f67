package learned

import (
	"bytes"
	"cmp"
	_ "embed" // the shipped weights
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/optsched/optsched/bench/rlscheduler"
	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/heuristics/learn"
)

// JoSHH's sizes: Q visible jobs, the cluster's state over T time steps
// of StepSeconds each.
const (
	JQ          = 5
	JT          = 5
	StepSeconds = 3600
	// JobFeatures per visible slot: present, nodes / the cluster's,
	// nodes / the idle nodes, log request, log wait.
	JobFeatures = 5
	// SelectorIn is the job selector's input: JQ slots, JT occupancy
	// values, the backlog and the oldest waiting job's log wait.
	SelectorIn = JQ*JobFeatures + JT + 2
	// AllocIn is the allocation selector's input (see allocFeatures).
	AllocIn = 7
)

// SelectorSizes and AllocSizes are the two networks' layer sizes;
// JCriticSizes the job selector's critic.
var (
	SelectorSizes = []int{SelectorIn, 64, 32, JQ}
	AllocSizes    = []int{AllocIn, 16, 2}
	JCriticSizes  = []int{SelectorIn, 64, 32, 1}
)

// JoSHH is the design's networks: the job selector, the allocation
// selector and, while training, the job selector's critic.
type JoSHH struct {
	Selector, Alloc *learn.Seq
	Critic          *learn.Seq // nil in a policy read from a file
	// Arrival selects the paper's visible set, the first JQ waiting jobs
	// in arrival order (those that do not fit masked), instead of the
	// default (the oldest fitting job and the JQ − 1 shortest fitting
	// others). It is kept in the weights file (its magic).
	Arrival bool
	// Reserve, with the default visible set, holds an EASY reservation
	// for one waiting job (see Reserve); kept in the weights file (its
	// magic). Ignored with Arrival.
	Reserve Reserve
}

// A Reserve names the waiting job the selector must not delay (EASY's
// rule, on requested walltimes): when it does not fit now, nodes are
// reserved for it at the earliest time the running jobs' requested ends
// free enough of them, and only the jobs that fit now and do not delay
// that reservation (they end by then, or use nodes it leaves spare) are
// visible.
type Reserve int

const (
	// ReserveNone reserves nothing: every job that fits is a candidate.
	ReserveNone Reserve = iota
	// ReserveOldest reserves for the oldest waiting job (EASY's head).
	ReserveOldest
	// ReserveShortest reserves for the waiting job of the shortest
	// request (ties by arrival): SJF-EASY's head.
	ReserveShortest
	// ReserveShortestJump is ReserveShortest whose last visible slot,
	// while the head is held, shows the shortest job that fits now but
	// would delay the reservation (its "present" feature −1): choosing it
	// gives up the reservation for this decision. Always choosing the
	// shortest visible job is then greedy shortest-first (sjf-greedy),
	// never choosing the last slot's is SJF-EASY.
	ReserveShortestJump
	// ReserveXFactor reserves for the waiting job of the largest
	// expansion factor so far, (wait + request) / request (ties by
	// arrival): the job whose normalised turnaround grows fastest.
	ReserveXFactor
	// ReserveShortestStrict and ReserveXFactorStrict are ReserveShortest
	// and ReserveXFactor whose held job, once it fits, is the only
	// visible job (it starts, as EASY's head does): the selector chooses
	// only which jobs backfill.
	ReserveShortestStrict
	ReserveXFactorStrict
	// ReserveOldestStrict is ReserveOldest whose held job starts alone
	// once it fits: EASY, the selector choosing which jobs backfill.
	ReserveOldestStrict
	// ReserveOldestGuard is ReserveOldest whose held job, once it fits
	// and has waited as long as its request or MaxWait (12 h), whichever
	// is shorter, is the only visible job: the selector may pass over the
	// oldest job while it fits only until then, so that neither it nor
	// the jobs its reservations hold back starve (easy-oldest's learned
	// policies did).
	ReserveOldestGuard
	// ReserveArea reserves for the waiting job of the smallest area,
	// request × nodes (ties by arrival): SAF-EASY's head. With it the
	// visible jobs after the oldest are those of the smallest areas, not
	// the shortest requests.
	ReserveArea
	// ReserveAreaStrict is ReserveArea whose held job starts alone once
	// it fits: the selector chooses only which jobs backfill.
	ReserveAreaStrict
)

// strict reports whether r's held job starts as soon as it fits.
func (r Reserve) strict() bool {
	return r == ReserveShortestStrict || r == ReserveXFactorStrict || r == ReserveOldestStrict || r == ReserveAreaStrict
}

// area reports whether r ranks the visible jobs (after the oldest) and
// its held job by request × nodes.
func (r Reserve) area() bool { return r == ReserveArea || r == ReserveAreaStrict }

// rankKey is the key the visible jobs after the oldest are kept by,
// smallest first: the request, or with an area window request × nodes.
func rankKey(j sim.QueuedJob, area bool) float64 {
	if area {
		return float64(j.Request) * float64(j.Nodes)
	}
	return float64(j.Request)
}

// String names the reservation as train sched's --window does.
func (r Reserve) String() string {
	switch r {
	case ReserveNone:
		return "fitting"
	case ReserveOldest:
		return "easy-oldest"
	case ReserveShortest:
		return "easy-shortest"
	case ReserveShortestJump:
		return "easy-shortest-jump"
	case ReserveXFactor:
		return "easy-xfactor"
	case ReserveShortestStrict:
		return "easy-shortest-strict"
	case ReserveXFactorStrict:
		return "easy-xfactor-strict"
	case ReserveOldestStrict:
		return "easy-oldest-strict"
	case ReserveOldestGuard:
		return "easy-oldest-guard"
	case ReserveArea:
		return "easy-area"
	case ReserveAreaStrict:
		return "easy-area-strict"
	}
	return fmt.Sprintf("reserve(%d)", int(r))
}

// ParseJoSHHWindow parses a window's name as train sched's --window and
// JoSHH.Window name it: "arrival" (the paper's first 5 waiting jobs) or
// a Reserve's String.
func ParseJoSHHWindow(name string) (arrival bool, r Reserve, err error) {
	if name == "arrival" {
		return true, ReserveNone, nil
	}
	for r := range ReserveAreaStrict + 1 {
		if r.String() == name {
			return false, r, nil
		}
	}
	return false, 0, fmt.Errorf("no JoSHH window %q (have arrival, fitting, easy-oldest, easy-shortest, easy-xfactor, easy-area, each also -strict, easy-oldest-guard, easy-shortest-jump)", name)
}

// reservation returns, as a function, whether job k of v.Queue may start
// now without delaying the reservation of r's head (nil: every job may);
// ends is scratch; h is the head's index. The head's shadow time is the earliest requested end
// of the running jobs at which enough nodes are free, and its spare nodes
// those free then beyond its own, as bench/sim's EASY computes them.
func reservation(v *sim.View, r Reserve, ends []sim.RunningView) (allowed func(k int) bool, h int, _ []sim.RunningView) {
	if r == ReserveNone || len(v.Queue) == 0 {
		return nil, 0, ends
	}
	switch r {
	case ReserveShortest, ReserveShortestJump, ReserveShortestStrict:
		for k, j := range v.Queue {
			if j.Request < v.Queue[h].Request {
				h = k
			}
		}
	case ReserveArea, ReserveAreaStrict:
		for k, j := range v.Queue {
			if rankKey(j, true) < rankKey(v.Queue[h], true) {
				h = k
			}
		}
	case ReserveXFactor, ReserveXFactorStrict:
		xf := func(j sim.QueuedJob) float64 {
			return float64(max(v.Now-j.Submit, 0)+j.Request) / float64(max(j.Request, 1))
		}
		best := xf(v.Queue[0])
		for k, j := range v.Queue {
			if f := xf(j); f > best {
				h, best = k, f
			}
		}
	}
	head := v.Queue[h]
	if head.Nodes <= v.Idle {
		return nil, h, ends
	}
	ends = append(ends[:0], v.Running...)
	slices.SortFunc(ends, func(a, b sim.RunningView) int { return cmp.Compare(a.Start+a.Request, b.Start+b.Request) })
	shadow, extra, free := int64(math.MaxInt64), 0, v.Idle
	for _, e := range ends {
		free += e.Nodes
		if free >= head.Nodes {
			shadow, extra = e.Start+e.Request, free-head.Nodes
			break
		}
	}
	return func(k int) bool {
		j := v.Queue[k]
		return v.Now+j.Request <= shadow || j.Nodes <= extra
	}, h, ends
}

// Window names the policy's visible set as train sched's --window does:
// arrival, or the reservation's (fitting without one).
func (p *JoSHH) Window() string {
	if p.Arrival {
		return "arrival"
	}
	return p.Reserve.String()
}

// NewJoSHH returns untrained networks (PyTorch's initialisation, the
// actors' last layers scaled by 0.01: near-uniform first choices).
func NewJoSHH(rng *rand.Rand) *JoSHH {
	s, _ := learn.NewMLP("selector", SelectorSizes, learn.ActReLU, 0.01, rng)
	a, _ := learn.NewMLP("alloc", AllocSizes, learn.ActReLU, 0.01, rng)
	c, _ := learn.NewMLP("critic", JCriticSizes, learn.ActReLU, 1, rng)
	return &JoSHH{Selector: s, Alloc: a, Critic: c}
}

// jobState writes the job selector's input for v into x and returns the
// visible jobs, as queue indexes, among those that fit in the idle nodes
// now: the oldest (slot 0), then the JQ − 1 others of the shortest
// requests (ties by arrival), shortest first (see docs/learned.md for
// why not the first JQ waiting jobs).
//
// With arrival, the visible jobs are instead the first JQ waiting jobs
// in arrival order, those that fit now (the paper's window: a job that
// does not fit keeps its slot and blocks the jobs behind it).
//
// With a reservation (reserve, not with arrival), only the jobs that do
// not delay the reserved job's start are visible (see Reserve; with
// ReserveShortestJump the last slot may hold one that does), and the last
// input is the reserved job's log wait instead of the oldest's; ends is
// scratch for it.
func jobState(x []float64, valid []int, v *sim.View, norm Norm, arrival bool, reserve Reserve, ends *[]sim.RunningView) []int {
	clear(x)
	valid = valid[:0]
	var allowed func(int) bool
	h, limit, jump := 0, JQ, -1
	area := !arrival && reserve.area()
	if !arrival && reserve != ReserveNone {
		if ends == nil {
			ends = new([]sim.RunningView)
		}
		allowed, h, *ends = reservation(v, reserve, *ends)
		if allowed != nil && reserve == ReserveShortestJump {
			limit = JQ - 1
		}
		if allowed == nil && len(v.Queue) > 0 && (reserve.strict() ||
			reserve == ReserveOldestGuard && v.Now-v.Queue[h].Submit >= min(v.Queue[h].Request, MaxWait)) {
			// The held job fits: it alone is visible.
			allowed = func(k int) bool { return k == h }
		}
	}
	for q, j := range v.Queue {
		if arrival {
			if q >= JQ {
				break
			}
			if j.Nodes <= v.Idle {
				valid = append(valid, q)
			}
			continue
		}
		if j.Nodes > v.Idle {
			continue
		}
		if allowed != nil && !allowed(q) {
			if limit < JQ && (jump < 0 || j.Request < v.Queue[jump].Request) {
				jump = q
			}
			continue
		}
		if len(valid) == 0 {
			valid = append(valid, q) // the oldest fitting job
			continue
		}
		// Insert q among the shortest kept (slots 1..), dropping the
		// longest past JQ.
		at, key := len(valid), rankKey(j, area)
		for at > 1 && rankKey(v.Queue[valid[at-1]], area) > key {
			at--
		}
		if at >= limit {
			continue
		}
		if len(valid) < limit {
			valid = append(valid, 0)
		}
		copy(valid[at+1:], valid[at:len(valid)-1])
		valid[at] = q
	}
	lreq := math.Log1p(norm.MaxRequest)
	lwait := math.Log1p(MaxWait)
	for i, q := range valid {
		j := v.Queue[q]
		row := x[i*JobFeatures : (i+1)*JobFeatures]
		row[0] = 1
		row[1] = float64(j.Nodes) / float64(v.Nodes)
		row[2] = float64(j.Nodes) / float64(max(v.Idle, 1))
		row[3] = min(math.Log1p(float64(j.Request))/lreq, 1)
		row[4] = min(math.Log1p(float64(max(v.Now-j.Submit, 0)))/lwait, 1)
	}
	if jump >= 0 {
		// The last slot: the shortest job that would delay the
		// reservation, marked present −1.
		valid = append(valid, jump)
		j := v.Queue[jump]
		row := x[(len(valid)-1)*JobFeatures : len(valid)*JobFeatures]
		row[0] = -1
		row[1] = float64(j.Nodes) / float64(v.Nodes)
		row[2] = float64(j.Nodes) / float64(max(v.Idle, 1))
		row[3] = min(math.Log1p(float64(j.Request))/lreq, 1)
		row[4] = min(math.Log1p(float64(max(v.Now-j.Submit, 0)))/lwait, 1)
	}
	// The cluster over JT steps: the share of the nodes busy at now +
	// k·StepSeconds by the running jobs' requested ends.
	c := x[JQ*JobFeatures:]
	for _, r := range v.Running {
		end := r.Start + r.Request
		for k := range JT {
			if k == 0 || end > v.Now+int64(k)*StepSeconds {
				c[k] += float64(r.Nodes) / float64(v.Nodes)
			}
		}
	}
	// The backlog (the other waiting jobs) and the oldest job's wait, or
	// with a reservation the reserved job's.
	x[SelectorIn-2] = min(float64(len(v.Queue)-len(valid))/50, 1)
	if len(v.Queue) > 0 {
		x[SelectorIn-1] = min(math.Log1p(float64(max(v.Now-v.Queue[h].Submit, 0)))/lwait, 1)
	}
	return valid
}

// allocFeatures writes the allocation selector's input for a job of n
// nodes and request req: its share of the cluster, its size in leaves
// (capped at 4), whether a leaf or a pod holds it, the idle share, its log
// request and the largest idle leaf's share of a leaf.
func allocFeatures(a []float64, v *sim.View, n int, req int64, norm Norm) {
	maxLeaf, maxPod := 0, 0
	for _, f := range v.LeafIdle {
		maxLeaf = max(maxLeaf, f)
	}
	for _, f := range v.PodIdle {
		maxPod = max(maxPod, f)
	}
	ls := float64(max(v.LeafSize, 1))
	a[0] = float64(n) / float64(v.Nodes)
	a[1] = min(float64(n)/ls, 4) / 4
	a[2], a[3] = 0, 0
	if n <= maxLeaf {
		a[2] = 1
	}
	if n <= maxPod {
		a[3] = 1
	}
	a[4] = float64(v.Idle) / float64(v.Nodes)
	a[5] = min(math.Log1p(float64(req))/math.Log1p(norm.MaxRequest), 1)
	a[6] = float64(maxLeaf) / ls
}

// strategies are the allocation selector's actions.
var strategies = [2]sim.Strategy{sim.DepthFirst, sim.BreadthFirst}

// A JoSHHChooser is the trained policy as a sim.Selector. Not safe for
// concurrent use.
type JoSHHChooser struct {
	sel, alloc *learn.Seq
	arrival    bool
	reserve    Reserve
	ends       []sim.RunningView
	norm       Norm
	sample     bool
	rng        *rand.Rand
	// Force, when set, places every job with this strategy instead of
	// the allocation selector's (an ablation: the job selector alone).
	Force *sim.Strategy
	x, a  []float64
	z, p  []float64
	valid []int
	// Decisions counts the calls that chose a job.
	Decisions int
}

// NewJoSHHChooser returns a chooser of the policy (cloned: choosers can
// run at once): argmax, or with sample draws seeded by seed.
func NewJoSHHChooser(p *JoSHH, norm Norm, sample bool, seed uint64) *JoSHHChooser {
	return &JoSHHChooser{sel: p.Selector.CloneSeq(), alloc: p.Alloc.CloneSeq(), arrival: p.Arrival, reserve: p.Reserve, norm: norm, sample: sample,
		rng: learn.NewRand(seed, 0x6a6f_7368), x: make([]float64, SelectorIn), a: make([]float64, AllocIn),
		z: make([]float64, JQ), p: make([]float64, JQ)}
}

// pickJob runs the job selector on x over the valid slots: the chosen
// slot's position in valid, the compacted logits in z and probabilities
// in p, and log Σ exp.
func pickJob(sel *learn.Seq, x, z, p []float64, valid []int, sample bool, rng *rand.Rand) (int, float64) {
	logits := sel.Forward(x, 1) // slot i is valid[i]; the rest padding
	copy(z, logits[:len(valid)])
	lse := learn.MaskedSoftmax(p[:len(valid)], z[:len(valid)], len(valid))
	return learn.Pick(p, len(valid), sample, rng), lse
}

// Select implements sim.Selector.
func (c *JoSHHChooser) Select(v *sim.View) (int, sim.Strategy) {
	c.valid = jobState(c.x, c.valid, v, c.norm, c.arrival, c.reserve, &c.ends)
	if len(c.valid) == 0 {
		return -1, sim.DepthFirst
	}
	c.Decisions++
	i, _ := pickJob(c.sel, c.x, c.z, c.p, c.valid, c.sample, c.rng)
	q := c.valid[i]
	if c.Force != nil {
		return q, *c.Force
	}
	j := v.Queue[q]
	allocFeatures(c.a, v, j.Nodes, j.Request, c.norm)
	logits := c.alloc.Forward(c.a, 1)
	var pa [2]float64
	learn.MaskedSoftmax(pa[:], logits, 2)
	return q, strategies[learn.Pick(pa[:], 2, c.sample, c.rng)]
}

// joshhMagic heads a JoSHH weights file, joshhArrivalMagic one of the
// arrival-window variant (JoSHH.Arrival) and joshhReserveMagic one of
// each reservation (JoSHH.Reserve); the header is the selector's and the
// allocation selector's sizes.
const (
	joshhMagic        = "JOSHH001"
	joshhArrivalMagic = "JOSHHA01"
)

var joshhReserveMagic = map[Reserve]string{ReserveOldest: "JOSHHO01", ReserveShortest: "JOSHHS01", ReserveShortestJump: "JOSHHJ01", ReserveXFactor: "JOSHHX01",
	ReserveShortestStrict: "JOSHHT01", ReserveXFactorStrict: "JOSHHY01", ReserveOldestStrict: "JOSHHE01",
	ReserveOldestGuard: "JOSHHG01", ReserveArea: "JOSHHR01", ReserveAreaStrict: "JOSHHU01"}

func joshhHeader() []uint32 {
	var h []uint32
	for _, s := range append(append([]int(nil), SelectorSizes...), AllocSizes...) {
		h = append(h, uint32(s))
	}
	return h
}

// WriteJoSHH writes the two actors' weights (float32; gzip).
func WriteJoSHH(w io.Writer, p *JoSHH) error {
	magic := joshhMagic
	switch {
	case p.Arrival && p.Reserve != ReserveNone:
		return fmt.Errorf("learned: the arrival window takes no reservation (%s)", p.Reserve)
	case p.Arrival:
		magic = joshhArrivalMagic
	case p.Reserve != ReserveNone:
		m, ok := joshhReserveMagic[p.Reserve]
		if !ok {
			return fmt.Errorf("learned: unknown reservation %s", p.Reserve)
		}
		magic = m
	}
	return learn.WriteWeights(w, magic, joshhHeader(), append(p.Selector.Params(), p.Alloc.Params()...))
}

// ReadJoSHH reads a weights file WriteJoSHH wrote.
func ReadJoSHH(r io.Reader) (*JoSHH, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	p, err := readJoSHH(bytes.NewReader(data), joshhMagic)
	if err == nil {
		return p, nil
	}
	if q, err2 := readJoSHH(bytes.NewReader(data), joshhArrivalMagic); err2 == nil {
		q.Arrival = true
		return q, nil
	}
	for _, r := range []Reserve{ReserveOldest, ReserveShortest, ReserveShortestJump, ReserveXFactor, ReserveShortestStrict, ReserveXFactorStrict, ReserveOldestStrict, ReserveOldestGuard, ReserveArea, ReserveAreaStrict} {
		if q, err2 := readJoSHH(bytes.NewReader(data), joshhReserveMagic[r]); err2 == nil {
			q.Reserve = r
			return q, nil
		}
	}
	return nil, err
}

func readJoSHH(r io.Reader, magic string) (*JoSHH, error) {
	want := joshhHeader()
	var s, a *learn.Seq
	err := learn.ReadWeights(r, magic, len(want), func(h []uint32) ([]*learn.Param, error) {
		for i := range want {
			if h[i] != want[i] {
				return nil, fmt.Errorf("network sizes %v, this build has %v", h, want)
			}
		}
		rng := learn.NewRand(0, 0)
		s, _ = learn.NewMLP("selector", SelectorSizes, learn.ActReLU, 1, rng)
		a, _ = learn.NewMLP("alloc", AllocSizes, learn.ActReLU, 1, rng)
		return append(s.Params(), a.Params()...), nil
	})
	if err != nil {
		return nil, err
	}
	return &JoSHH{Selector: s, Alloc: a}, nil
}

//go:embed weights/joshh-lublin.bin.gz
var shippedJoSHH []byte

//go:embed weights/joshh-hpc2n.bin.gz
var shippedJoSHHHPC2N []byte

// ShippedJoSHH returns the shipped JoSHH weights, trained on the parts of
// Lublin-1 (instances/traces/lublin_256.swf.gz) outside the protocol's
// ten test sequences.
func ShippedJoSHH() (*JoSHH, error) { return ReadJoSHH(bytes.NewReader(shippedJoSHH)) }

// ShippedJoSHHOf returns the shipped JoSHH weights trained on a shipped
// trace outside the protocol's ten test sequences: "lublin-1"
// (ShippedJoSHH) or "hpc2n".
func ShippedJoSHHOf(trace string) (*JoSHH, error) {
	switch trace {
	case "lublin-1":
		return ShippedJoSHH()
	case "hpc2n":
		return ReadJoSHH(bytes.NewReader(shippedJoSHHHPC2N))
	}
	return nil, fmt.Errorf("learned: no shipped joshh weights %q (have lublin-1, hpc2n)", trace)
}

// TraceOf returns jobs [start, start+n) of w as a bench/sim trace on
// w.MaxNodes nodes: requests where the log has none are the run time.
func TraceOf(w *rlscheduler.Workload, start, n int) *trace.Trace {
	tr := &trace.Trace{Nodes: int(w.MaxNodes), NodesFrom: w.NodesFrom}
	for _, j := range w.Jobs[start : start+n] {
		req := j.Request
		if req <= 0 {
			req = j.Run
		}
		tr.Jobs = append(tr.Jobs, trace.Job{ID: strconv.FormatInt(j.Number, 10), Submit: j.Submit, Runtime: j.Run,
			Walltime: max(req, 1), Nodes: min(w.NodesOf(j), int(w.MaxNodes))})
	}
	slices.SortStableFunc(tr.Jobs, func(a, b trace.Job) int { return cmp.Compare(a.Submit, b.Submit) })
	return tr
}
