package cp

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/optsched/optsched/model"
)

// A Model is a window read as a scheduling problem on a time grid.
type Model struct {
	Window *model.Window
	// Grid is the granularity g in seconds; slot s is Window.Time + s·g.
	Grid int64
	// Resources names the resources, the index of every vector below.
	Resources []string
	// Nodes are the usable nodes: idle, or freed by a running job.
	Nodes []Node
	// Jobs are the waiting jobs that can start, in window order.
	Jobs []Job
	// Deferred are the waiting jobs that can never start, with the reason.
	Deferred []model.Deferral
	// Scale makes the objective weights integers: ω_i = Scale / ewt_{q_i}.
	Scale int64
	// ExactWeights is false when the expected waits have no common
	// multiple small enough; the weights are then rounded and the
	// objective Σ ω_i s_i only approximates Eq. (2).
	ExactWeights bool
	// CHWeight is W, the weight of the CH term (SetCHWeight; 0: Eq. (2)
	// alone), and CHKappa its integer coefficient κ in the weighted
	// objective Σ ω_i s_i + κ·Σ_i (CH_i − 1).
	CHWeight float64
	CHKappa  int64
	// GridExact reports that walltimes, running jobs' ends and reservation
	// bounds are all multiples of Grid from the window time, so that an
	// optimum on the grid is an optimum over all start times.
	GridExact bool

	// profiles caches, per node, the running uses at each slot a running
	// job ends (option's release times).
	profiles []*runProfile
}

// A runProfile is a node's running uses over its release slots: at
// slots[i] (0, then the running jobs' ends, ascending and distinct), the
// running jobs with a later end use use[i] in all, and some of them is
// exclusive (excl[i]) or any runs at all (busy[i]).
type runProfile struct {
	slots      []int
	use        [][]int64
	excl, busy []bool
}

// profile returns node ni's runProfile.
func (m *Model) profile(ni int) *runProfile {
	if m.profiles == nil {
		m.profiles = make([]*runProfile, len(m.Nodes))
	}
	if p := m.profiles[ni]; p != nil {
		return p
	}
	nd := &m.Nodes[ni]
	runs := slices.Clone(nd.Running)
	slices.SortFunc(runs, func(a, b Run) int { return a.EndSlot - b.EndSlot })
	p := &runProfile{slots: []int{0}}
	for _, r := range runs {
		if r.EndSlot != p.slots[len(p.slots)-1] {
			p.slots = append(p.slots, r.EndSlot)
		}
	}
	// The runs active at slot s are those ending after it: a suffix of
	// runs, summed from the last.
	p.use = make([][]int64, len(p.slots))
	p.excl = make([]bool, len(p.slots))
	p.busy = make([]bool, len(p.slots))
	use := make([]int64, len(m.Resources))
	excl := false
	r := len(runs)
	for i := len(p.slots) - 1; i >= 0; i-- {
		for r > 0 && runs[r-1].EndSlot > p.slots[i] {
			r--
			for l, v := range runs[r].Use {
				use[l] += v
			}
			excl = excl || runs[r].Excl
		}
		p.use[i] = slices.Clone(use)
		p.excl[i], p.busy[i] = excl, r < len(runs)
	}
	m.profiles[ni] = p
	return p
}

// fitsAt is fitsBesideRunning at p.slots[i].
func (p *runProfile) fitsAt(j *Job, nd *Node, k, i int) bool {
	if p.excl[i] || j.Excl && p.busy[i] {
		return false
	}
	for l, u := range p.use[i] {
		if u+int64(k)*j.Req[l] > nd.Cap[l] {
			return false
		}
	}
	return true
}

// A Node is a usable node.
type Node struct {
	// ID is the topology's node id.
	ID int
	// Cap is the capacity of each resource.
	Cap []int64
	// Running are the running jobs on the node.
	Running []Run
	// Reserved are the node's reservations, [start, end) in seconds.
	Reserved [][2]int64
	// Class numbers the node's symmetry class: nodes of one class have the
	// same capacities, running uses and reservations, so exchanging them
	// in a schedule keeps it feasible and its objective.
	Class int
}

// A Run is a running job's use of a node until the slot EndSlot: it is
// running at slot s when s < EndSlot.
type Run struct {
	ID      string
	EndSlot int
	// Use is what the job uses of each resource; Excl keeps every other
	// job off the node.
	Use  []int64
	Excl bool
}

// A Job is a waiting job of the model.
type Job struct {
	// Index is the job's index in Window.Jobs.
	Index int
	ID    string
	// Units is u_i; Req the per-unit requirement r_{i,l}.
	Units int
	Req   []int64
	// Whole: a job of whole nodes (no select): one unit per node, exclusive.
	Whole bool
	// Excl: shares none of its nodes while it runs.
	Excl bool
	// Pack: all units on one node.
	Pack bool
	// Dur is D_i = ⌈walltime/g⌉, in slots.
	Dur int
	// Weight is ω_i.
	Weight int64
	// EST is the earliest slot at which the job fits alone beside the
	// running jobs and the reservations.
	EST int
	// Options are the nodes the job may use.
	Options []Option
}

// An Option is a node on which a job may place units.
type Option struct {
	// Node indexes Model.Nodes.
	Node int
	// MaxUnits bounds the job's units on the node (capacity on the empty
	// node, place=scatter, whole nodes, pack).
	MaxUnits int
	// Release[k−1] is the earliest slot at which k units fit beside the
	// node's running jobs.
	Release []int
	// Forbid lists start slots [lo, hi] excluded by the node's
	// reservations.
	Forbid [][2]int
}

// Build reads w as a scheduling problem on a grid of g seconds (g ≥ 1).
func Build(w *model.Window, g int64) (*Model, error) {
	return BuildContext(context.Background(), w, g)
}

// BuildContext is Build that gives up with ctx's error when ctx ends: its
// work grows with the jobs times the usable nodes (an option per pair),
// which on large windows takes longer than a time limit.
func BuildContext(ctx context.Context, w *model.Window, g int64) (*Model, error) {
	if g < 1 {
		return nil, fmt.Errorf("cp: granularity must be at least 1 s, got %d", g)
	}
	m := &Model{Window: w, Grid: g, GridExact: true}
	t0 := w.Time
	onGrid := func(x int64) bool { return (x-t0)%g == 0 }

	// Resources: every name any capacity, use or requirement mentions.
	m.Resources = model.ResourceNames(w)
	vec := func(r model.Resources, f int64) []int64 {
		v := make([]int64, len(m.Resources))
		for i, k := range m.Resources {
			v[i] = r[k] * f
		}
		return v
	}

	// Usable nodes, their running jobs and reservations.
	n := w.Topology.NumNodes()
	index := make([]int, n)
	for k := range index {
		index[k] = -1
	}
	usable := make([]bool, n)
	for _, k := range w.Idle {
		usable[k] = true
	}
	for _, r := range w.Running {
		for _, k := range r.Nodes {
			usable[k] = true
		}
	}
	for k := range n {
		if !usable[k] {
			continue
		}
		var capv []int64
		if w.Resources != nil {
			capv = vec(w.Resources[k], 1)
		} else {
			capv = make([]int64, len(m.Resources))
		}
		index[k] = len(m.Nodes)
		m.Nodes = append(m.Nodes, Node{ID: k, Cap: capv})
	}
	for _, r := range w.Running {
		m.GridExact = m.GridExact && onGrid(r.End)
		for _, k := range r.Nodes {
			run := Run{ID: r.ID, EndSlot: int(ceilDiv(r.End-t0, g)), Excl: r.Select == nil || r.Place.Exclusive}
			switch {
			case r.Select == nil:
				run.Use = make([]int64, len(m.Resources))
			case r.Units != nil && len(r.Select) == 1:
				run.Use = vec(r.Select[0].Amounts, int64(r.Units[k]))
			default:
				run.Use = make([]int64, len(m.Resources))
				for _, c := range r.Select {
					for i, v := range vec(c.Amounts, int64(c.Count)) {
						run.Use[i] += v
					}
				}
			}
			nd := &m.Nodes[index[k]]
			nd.Running = append(nd.Running, run)
		}
	}
	for _, r := range w.Reservations {
		m.GridExact = m.GridExact && (r.Start <= t0 || onGrid(r.Start)) && onGrid(r.End)
		for _, k := range r.Nodes {
			if index[k] >= 0 {
				nd := &m.Nodes[index[k]]
				nd.Reserved = append(nd.Reserved, [2]int64{r.Start, r.End})
			}
		}
	}
	classes := map[string]int{}
	for i := range m.Nodes {
		nd := &m.Nodes[i]
		slices.SortFunc(nd.Reserved, func(a, b [2]int64) int { return cmpPair(a, b) })
		if len(m.Nodes) == 1 {
			break // one node, one class (0): no key to build over its running jobs
		}
		runs := make([]string, len(nd.Running))
		for r, run := range nd.Running {
			runs[r] = fmt.Sprint(run.EndSlot, run.Use, run.Excl)
		}
		slices.Sort(runs)
		key := fmt.Sprint(nd.Cap, runs, nd.Reserved)
		c, ok := classes[key]
		if !ok {
			c = len(classes)
			classes[key] = c
		}
		nd.Class = c
	}

	// Jobs.
	m.Jobs = make([]Job, 0, len(w.Jobs))
	for ji := range w.Jobs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		wj := &w.Jobs[ji]
		j := Job{Index: ji, ID: wj.ID, Excl: wj.Place.Exclusive, Pack: wj.Place.Arrangement == model.ArrangePack,
			Dur: int(ceilDiv(wj.Walltime, g))}
		m.GridExact = m.GridExact && wj.Walltime%g == 0
		scatter := wj.Place.Arrangement == model.ArrangeScatter
		switch {
		case wj.Select == nil:
			j.Units, j.Whole, j.Excl, scatter = wj.Nodes, true, true, true
			j.Req = make([]int64, len(m.Resources))
		case len(wj.Select) != 1:
			m.Deferred = append(m.Deferred, model.Deferral{Job: ji,
				Reason: fmt.Sprintf("its select has %d chunks; the time-and-resource model needs one", len(wj.Select))})
			continue
		case len(wj.Select[0].Labels) > 0:
			m.Deferred = append(m.Deferred, model.Deferral{Job: ji,
				Reason: "its select has string-valued resources, which the time-and-resource model does not support"})
			continue
		default:
			j.Units = wj.Select[0].Count
			j.Req = vec(wj.Select[0].Amounts, 1)
		}
		total := 0
		j.Options = make([]Option, 0, min(len(m.Nodes), 8))
		for ni := range m.Nodes {
			o, ok := m.option(&j, ni, scatter)
			if !ok {
				continue
			}
			if j.Pack && o.MaxUnits < j.Units {
				continue
			}
			j.Options = append(j.Options, o)
			total += o.MaxUnits
		}
		if total < j.Units || len(j.Options) == 0 {
			m.Deferred = append(m.Deferred, model.Deferral{Job: ji,
				Reason: fmt.Sprintf("its %d units never fit on the usable nodes (capacities, place=%s)", j.Units, wj.Place.Arrange())})
			continue
		}
		est, ok := m.earliest(&j)
		if !ok {
			return nil, fmt.Errorf("cp: job %s fits on the empty nodes but at no event slot (a bug)", wj.ID)
		}
		j.EST = est
		m.Jobs = append(m.Jobs, j)
	}
	m.weights()
	return m, nil
}

// option returns job j's option on node ni; ok is false when no unit of
// the job ever fits there.
func (m *Model) option(j *Job, ni int, scatter bool) (Option, bool) {
	nd := &m.Nodes[ni]
	maxUnits := j.Units
	for l, r := range j.Req {
		if r > 0 {
			maxUnits = min(maxUnits, int(min(int64(math.MaxInt32), nd.Cap[l]/r)))
		}
	}
	if scatter {
		maxUnits = min(maxUnits, 1)
	}
	if j.Pack {
		maxUnits = min(maxUnits, j.Units)
	}
	if maxUnits < 1 {
		return Option{}, false
	}
	o := Option{Node: ni, MaxUnits: maxUnits}
	// Release[k−1]: the first slot, 0 or a running job's end, from which
	// k units fit beside the running jobs still there (uses only fall, so
	// the slot for k+1 units is no earlier than for k).
	p := m.profile(ni)
	i := 0
	for k := 1; k <= maxUnits; k++ {
		for i < len(p.slots) && !p.fitsAt(j, nd, k, i) {
			i++
		}
		if i == len(p.slots) {
			return Option{}, false // cannot happen after the last end
		}
		o.Release = append(o.Release, p.slots[i])
	}
	wall := m.Window.Jobs[j.Index].Walltime
	t0, g := m.Window.Time, m.Grid
	for _, rv := range nd.Reserved {
		// Overlap: t0 + s·g < end and start < t0 + s·g + wall.
		lo := floorDiv(rv[0]-wall-t0, g) + 1
		hi := ceilDiv(rv[1]-t0, g) - 1
		if hi >= 0 && hi >= lo {
			o.Forbid = append(o.Forbid, [2]int{int(max(0, lo)), int(hi)})
		}
	}
	return o, true
}

// fitsBesideRunning reports whether k units of j fit on nd at slot s
// beside the running jobs there then.
func (m *Model) fitsBesideRunning(j *Job, nd *Node, k, s int) bool {
	use := make([]int64, len(m.Resources))
	for _, r := range nd.Running {
		if s < r.EndSlot {
			if r.Excl || j.Excl {
				return false
			}
			for l, v := range r.Use {
				use[l] += v
			}
		}
	}
	for l := range use {
		if use[l]+int64(k)*j.Req[l] > nd.Cap[l] {
			return false
		}
	}
	return true
}

// UnitsAt returns how many units of job j option o can hold at slot s
// alone (beside running jobs and outside reservations).
func (o *Option) UnitsAt(s int) int {
	for _, f := range o.Forbid {
		if f[0] <= s && s <= f[1] {
			return 0
		}
	}
	u := 0
	for k, rel := range o.Release {
		if rel <= s {
			u = k + 1
		}
	}
	return u
}

// FitsAlone reports whether job j fits at slot s with no other waiting job.
func (j *Job) FitsAlone(s int) bool {
	total := 0
	for i := range j.Options {
		u := j.Options[i].UnitsAt(s)
		if j.Pack && u >= j.Units {
			return true
		}
		total += u
	}
	return !j.Pack && total >= j.Units
}

// earliest returns EST: the first slot, among 0, running jobs' ends and
// reservations' ends (the only slots at which fitting alone can begin),
// at which the job fits alone.
func (m *Model) earliest(j *Job) (int, bool) {
	slots := []int{0}
	for _, o := range j.Options {
		slots = append(slots, o.Release...)
		for _, f := range o.Forbid {
			slots = append(slots, f[1]+1)
		}
	}
	slices.Sort(slots)
	for _, s := range slices.Compact(slots) {
		if j.FitsAlone(s) {
			return s, true
		}
	}
	return 0, false
}

// maxScale bounds Scale/ewt, above which the weights are rounded.
const maxScale = 1 << 20

// weights sets ω_i = Scale/ewt_{q_i} (Weights).
func (m *Model) weights() {
	ewts := make([]int64, 0, len(m.Jobs))
	for _, j := range m.Jobs {
		ewts = append(ewts, m.Window.ExpectedWait(m.Window.Jobs[j.Index].Queue))
	}
	var w []int64
	w, m.Scale, m.ExactWeights = Weights(ewts)
	for i := range m.Jobs {
		m.Jobs[i].Weight = w[i]
	}
}

// Weights returns the model's weights of jobs whose queues' expected
// waits are ewts (each ≥ 1): ω_i = Scale/ewt_i with Scale the least
// common multiple of ewts, exact, when Scale/min ewt is at most 2^20;
// otherwise rounded, ω_i = max(1, round(2^20 · min ewt / ewt_i)), and
// Scale 0. A caller that schedules a model's jobs without building it
// (bench/cpolicy's seeds) weights them by this rule too.
func Weights(ewts []int64) (w []int64, scale int64, exact bool) {
	if len(ewts) == 0 {
		return nil, 1, true
	}
	w = make([]int64, len(ewts))
	lcm := int64(1)
	minE := ewts[0]
	exact = true
	for _, e := range ewts {
		minE = min(minE, e)
		lcm = lcm / gcd(lcm, e) * e
		if lcm/minE > maxScale || lcm < 0 {
			exact = false
			break
		}
	}
	if exact && lcm/minE <= maxScale {
		for i, e := range ewts {
			w[i] = lcm / e
		}
		return w, lcm, true
	}
	// Rounded weights: ω = round(2^20 · min ewt / ewt), at least 1.
	for i, e := range ewts {
		w[i] = max(1, int64(math.Round(float64(maxScale)*float64(minE)/float64(e))))
	}
	return w, 0, false
}

// Objective returns Eq. (2), Σ (t + s_i·g − submit_i)/ewt_{q_i}, of the
// start slots s (one per job of m.Jobs).
func (m *Model) Objective(s []int) float64 {
	var sum float64
	for i, j := range m.Jobs {
		wj := &m.Window.Jobs[j.Index]
		sum += float64(m.Window.Time+int64(s[i])*m.Grid-wj.Submit) / float64(m.Window.ExpectedWait(wj.Queue))
	}
	return sum
}

// ObjectiveOfWeighted returns the Eq. (2) value that corresponds to
// Σ ω_i s_i = W, for exact weights: Σ (t − submit_i)/ewt_i + g·W/Scale.
// With the CH term, W is Σ ω_i s_i + κ·Σ_i (CH_i − 1), and the value is
// Eq. (2) + CHWeight·Σ_i CH_i (the 1 per job added here).
func (m *Model) ObjectiveOfWeighted(W float64) float64 {
	c := m.CHWeight * float64(len(m.Jobs))
	for _, j := range m.Jobs {
		wj := &m.Window.Jobs[j.Index]
		c += float64(m.Window.Time-wj.Submit) / float64(m.Window.ExpectedWait(wj.Queue))
	}
	return c + float64(m.Grid)*W/float64(m.Scale)
}

// Weighted returns Σ ω_i s_i.
func (m *Model) Weighted(s []int) int64 {
	var W int64
	for i, j := range m.Jobs {
		W += j.Weight * int64(s[i])
	}
	return W
}

// Describe writes the model's constraints in the paper's vocabulary, one
// line each, for people and tests.
func (m *Model) Describe() string {
	var b strings.Builder
	name := func(ni int) string { return m.Window.Topology.Name(m.Nodes[ni].ID) }
	fmt.Fprintf(&b, "grid %d s, %d usable nodes, %d jobs, %d deferred, resources %v\n", m.Grid, len(m.Nodes), len(m.Jobs), len(m.Deferred), m.Resources)
	for _, j := range m.Jobs {
		var opts []string
		for _, o := range j.Options {
			opts = append(opts, fmt.Sprintf("%s≤%d", name(o.Node), o.MaxUnits))
		}
		fmt.Fprintf(&b, "alternative(%s, [%s], %d)  synchronize(%s)  s ≥ %d, D = %d, ω = %d\n", j.ID, strings.Join(opts, " "), j.Units, j.ID, j.EST, j.Dur, j.Weight)
	}
	for ni, nd := range m.Nodes {
		for l, c := range nd.Cap {
			fmt.Fprintf(&b, "cumulative(%s, %s ≤ %d)\n", name(ni), m.Resources[l], c)
		}
		if len(nd.Reserved) > 0 {
			fmt.Fprintf(&b, "noOverlap(%s, reserved %v)\n", name(ni), nd.Reserved)
		}
	}
	for _, j := range m.Jobs {
		if j.Excl {
			fmt.Fprintf(&b, "noOverlap(%s exclusive on its nodes)\n", j.ID)
		}
	}
	return b.String()
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return -((-a) / b)
	}
	return (a + b - 1) / b
}

func floorDiv(a, b int64) int64 {
	if a >= 0 {
		return a / b
	}
	return -((-a + b - 1) / b)
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func cmpPair(a, b [2]int64) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Allocations decodes a schedule in model terms — per job of m.Jobs its
// start slot and its units per option — as the window's allocations
// (start in seconds, nodes by topology id, units per node).
func (m *Model) Allocations(slots []int, units [][]int) []model.Allocation {
	out := make([]model.Allocation, 0, len(m.Jobs))
	for i, j := range m.Jobs {
		byNode := map[int]int{}
		var nodes []int
		for o, u := range units[i] {
			if u > 0 {
				id := m.Nodes[j.Options[o].Node].ID
				byNode[id] = u
				nodes = append(nodes, id)
			}
		}
		slices.Sort(nodes)
		out = append(out, model.Allocation{Job: j.Index, Nodes: nodes,
			Start: m.Window.Time + int64(slots[i])*m.Grid, Units: byNode})
	}
	return out
}

// Encode reads allocations of the window's jobs (units allocations, one
// for each job of m.Jobs) as start slots and units per option, the
// inverse of Allocations. It fails when a job has no allocation, starts
// off the grid or before its EST, or puts units where the model allows
// none.
func (m *Model) Encode(allocs []model.Allocation) (slots []int, units [][]int, err error) {
	w := m.Window
	byJob := map[int]*model.Allocation{}
	for k := range allocs {
		byJob[allocs[k].Job] = &allocs[k]
	}
	slots, units = make([]int, len(m.Jobs)), make([][]int, len(m.Jobs))
	for i, j := range m.Jobs {
		a, ok := byJob[j.Index]
		if !ok {
			return nil, nil, fmt.Errorf("job %s is not scheduled", j.ID)
		}
		if (a.Start-w.Time)%m.Grid != 0 || a.Start < w.Time {
			return nil, nil, fmt.Errorf("job %s starts at %d, off the grid", j.ID, a.Start)
		}
		slots[i] = int((a.Start - w.Time) / m.Grid)
		if slots[i] < j.EST {
			return nil, nil, fmt.Errorf("job %s starts at slot %d, before its earliest %d", j.ID, slots[i], j.EST)
		}
		units[i] = make([]int, len(j.Options))
		for id, u := range a.Units {
			o := slices.IndexFunc(j.Options, func(o Option) bool { return m.Nodes[o.Node].ID == id })
			if o < 0 || u > j.Options[o].MaxUnits {
				return nil, nil, fmt.Errorf("job %s: %d units on node %s, which the model does not allow", j.ID, u, w.Topology.Name(id))
			}
			units[i][o] = u
		}
	}
	return slots, units, nil
}
