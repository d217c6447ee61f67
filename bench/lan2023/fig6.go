package lan2023

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/csp"
)

// The policies of Fig6Exact and RunEpoch.
const (
	// FCFS is first come, first served with lazy releases.
	FCFS = "fcfs"
	// BF is FCFS with EASY backfilling (shadow time computed once per
	// blocked head, backfilled jobs must end strictly before it).
	BF = "bf"
)

// The paper's setting.
const (
	// PaperPods, PaperLeavesPerPod and PaperNodesPerLeaf lay out the
	// paper's 1000-node cluster (model.NewLayout(25, 4, 10)).
	PaperPods         = 25
	PaperLeavesPerPod = 4
	PaperNodesPerLeaf = 10
	// DefaultEpochs and DefaultSlice are Fig. 6's 10 epochs of 300 jobs.
	DefaultEpochs = 10
	DefaultSlice  = 300
	// DefaultMaxJobs caps the multi-node jobs of a window, as in the paper.
	DefaultMaxJobs = 5
)

// DefaultTaus returns Fig. 6's window periods, 10, 20, …, 60 s.
func DefaultTaus() []int64 { return []int64{10, 20, 30, 40, 50, 60} }

// ErrConfig is wrapped by the errors about bad arguments.
var ErrConfig = errors.New("lan2023: bad configuration")

// PaperLayout returns the layout of the paper's cluster.
func PaperLayout() model.LayoutSpec {
	return model.LayoutSpec{Pods: PaperPods, LeavesPerPod: PaperLeavesPerPod, NodesPerLeaf: PaperNodesPerLeaf}
}

// PaperTopology builds the paper's cluster, 25 pods × 4 leaves × 10 nodes.
func PaperTopology() (*model.Topology, error) {
	return model.NewLayout(PaperPods, PaperLeavesPerPod, PaperNodesPerLeaf)
}

// An EpochFigure is one epoch's point of Fig. 6.
type EpochFigure struct {
	// Epoch counts from 1.
	Epoch int `json:"epoch"`
	// FirstJob is the index in the trace of the epoch's first job; Jobs
	// the number of jobs the epoch ran.
	FirstJob int `json:"first_job"`
	Jobs     int `json:"jobs"`
	// MeanCost is the mean lan-code CH cost over the epoch's jobs
	// (one-node jobs count 1); MeanWait the mean wait in seconds.
	MeanCost float64 `json:"mean_cost"`
	MeanWait float64 `json:"mean_wait_s"`
	// Cost and Wait are the integer parts of MeanCost and MeanWait, the
	// figures the published code prints.
	Cost int64 `json:"cost"`
	Wait int64 `json:"wait_s"`
}

// Figure summarises the jobs of epoch (1-based) whose first job is the
// trace's job first.
func Figure(jobs []sim.JobResult, epoch, first int) EpochFigure {
	f := EpochFigure{Epoch: epoch, FirstJob: first, Jobs: len(jobs)}
	if len(jobs) == 0 {
		return f
	}
	var cost, wait int64
	for i := range jobs {
		cost += jobs[i].Cost
		wait += jobs[i].Wait()
	}
	n := int64(len(jobs))
	f.MeanCost, f.MeanWait = float64(cost)/float64(n), float64(wait)/float64(n)
	// Both sums are ≥ 0, so integer division truncates as Python's int()
	// of the published code's float mean does.
	f.Cost, f.Wait = cost/n, wait/n
	return f
}

// checkSlices validates the epochs × slice jobs asked of tr.
func checkSlices(tr *trace.Trace, epochs, slice int) error {
	if tr == nil {
		return fmt.Errorf("%w: no trace", ErrConfig)
	}
	if epochs < 1 || slice < 1 {
		return fmt.Errorf("%w: epochs (%d) and slice (%d) must be at least 1", ErrConfig, epochs, slice)
	}
	if slice > len(tr.Jobs)/epochs {
		return fmt.Errorf("%w: %d epochs of %d jobs need %d jobs, the trace has %d", ErrConfig,
			epochs, slice, int64(epochs)*int64(slice), len(tr.Jobs))
	}
	return nil
}

// Fig6Exact replays epochs consecutive slices of slice jobs of tr (jobs
// 0…slice−1, slice…2·slice−1, …), each from an idle cluster of the paper's
// layout, under policy FCFS or BF, and returns each epoch's figures.
func Fig6Exact(tr *trace.Trace, policy string, epochs, slice int) ([]EpochFigure, error) {
	if err := checkSlices(tr, epochs, slice); err != nil {
		return nil, err
	}
	topo, err := PaperTopology()
	if err != nil {
		return nil, err
	}
	out := make([]EpochFigure, 0, epochs)
	for e := range epochs {
		first := e * slice
		jobs, err := RunEpoch(topo, model.DefaultCostModel, tr.Jobs[first:first+slice], policy)
		if err != nil {
			return nil, fmt.Errorf("%s epoch %d: %w", policy, e+1, err)
		}
		out = append(out, Figure(jobs, e+1, first))
	}
	return out, nil
}

// RunEpoch replays jobs, sorted by submit time, from an idle cluster topo
// under policy FCFS or BF, as the published code of [Lan23] does (see the
// package documentation), pricing each job with cost. It returns each
// job's outcome, in the order of jobs. Every start is checked with
// model.Check. A job larger than the cluster is an error.
func RunEpoch(topo *model.Topology, cost model.CostModel, jobs []trace.Job, policy string) ([]sim.JobResult, error) {
	if topo == nil {
		return nil, fmt.Errorf("%w: no topology", ErrConfig)
	}
	if policy != FCFS && policy != BF {
		return nil, fmt.Errorf("%w: unknown policy %q (want %s or %s)", ErrConfig, policy, FCFS, BF)
	}
	if cost.HopCost == 0 {
		cost = model.DefaultCostModel
	}
	n := topo.NumNodes()
	for i := range jobs {
		j := &jobs[i]
		switch {
		case j.Nodes < 1 || j.Runtime < 1:
			return nil, fmt.Errorf("%w: job %s asks for %d nodes for %d s; both must be at least 1", ErrConfig, j.ID, j.Nodes, j.Runtime)
		case j.Nodes > n:
			return nil, fmt.Errorf("%w: job %s asks for %d nodes, the cluster has %d", ErrConfig, j.ID, j.Nodes, n)
		case i > 0 && j.Submit < jobs[i-1].Submit:
			return nil, fmt.Errorf("%w: jobs are not sorted by submit time (job %s at %d after job %s at %d)", ErrConfig,
				j.ID, j.Submit, jobs[i-1].ID, jobs[i-1].Submit)
		}
	}
	if len(jobs) == 0 {
		return nil, nil
	}
	e := &engine{topo: topo, cost: cost, jobs: jobs, busy: make([]bool, n), nIdle: n,
		res: make([]sim.JobResult, len(jobs))}
	if err := e.run(policy == BF); err != nil {
		return nil, err
	}
	return e.res, nil
}

// engine is one epoch of the published code's event-driven simulator.
type engine struct {
	topo    *model.Topology
	cost    model.CostModel
	jobs    []trace.Job
	now     int64
	next    int // next job to arrive
	queue   []int
	busy    []bool
	nIdle   int
	running []running
	seq     int // starts so far, the tie-break among equal ends
	res     []sim.JobResult
}

type running struct {
	job   int
	end   int64
	seq   int
	nodes []int
}

// before orders running jobs by end, then start order: the order of the
// published code's stable sort by end.
func before(a, b *running) bool {
	return a.end < b.end || a.end == b.end && a.seq < b.seq
}

func (e *engine) run(backfill bool) error {
	e.now = e.jobs[0].Submit
	e.queue = append(e.queue, 0)
	e.next = 1
	for len(e.queue) > 0 {
		head := e.queue[0]
		need := e.jobs[head].Nodes
		if need > e.nIdle {
			shadow := int64(0)
			if backfill {
				shadow = e.shadow(need)
			}
			for need > e.nIdle {
				if backfill {
					if err := e.backfill(shadow); err != nil {
						return err
					}
				}
				if err := e.step(); err != nil {
					return err
				}
			}
		}
		if err := e.start(head); err != nil {
			return err
		}
		e.queue = slices.DeleteFunc(e.queue, func(j int) bool { return j == head })
		for len(e.queue) == 0 && e.next < len(e.jobs) {
			if err := e.step(); err != nil {
				return err
			}
		}
	}
	return nil
}

// earliest returns the index in e.running of the next job to end, or −1.
func (e *engine) earliest() int {
	k := -1
	for i := range e.running {
		if k < 0 || before(&e.running[i], &e.running[k]) {
			k = i
		}
	}
	return k
}

// step advances time by one event: the next arrival, queued, if it comes
// no later than the earliest end of a running job, else that end, which
// releases that job's nodes.
func (e *engine) step() error {
	k := e.earliest()
	if e.next < len(e.jobs) && (k < 0 || e.jobs[e.next].Submit <= e.running[k].end) {
		e.now = max(e.now, e.jobs[e.next].Submit)
		e.queue = append(e.queue, e.next)
		e.next++
		return nil
	}
	if k < 0 {
		return fmt.Errorf("lan2023: at t=%d %d jobs wait but nothing runs or arrives", e.now, len(e.queue))
	}
	r := e.running[k]
	e.now = max(e.now, r.end)
	for _, id := range r.nodes {
		e.busy[id] = false
	}
	e.nIdle += len(r.nodes)
	e.running = slices.Delete(e.running, k, k+1)
	return nil
}

// shadow returns the head's shadow time: the end of the running job, in
// end order, after which need nodes are free.
func (e *engine) shadow(need int) int64 {
	order := make([]*running, len(e.running))
	for i := range e.running {
		order[i] = &e.running[i]
	}
	slices.SortFunc(order, func(a, b *running) int {
		if before(a, b) {
			return -1
		}
		if before(b, a) {
			return 1
		}
		return 0
	})
	free, t := e.nIdle, e.now
	for _, r := range order {
		free += len(r.nodes)
		t = r.end
		if free >= need {
			break
		}
	}
	return t
}

// backfill starts, in submit order, every queued job that fits now and
// ends strictly before shadow.
func (e *engine) backfill(shadow int64) error {
	for _, j := range slices.Clone(e.queue) {
		job := &e.jobs[j]
		if e.now+job.Runtime < shadow && job.Nodes <= e.nIdle {
			if err := e.start(j); err != nil {
				return err
			}
			e.queue = slices.DeleteFunc(e.queue, func(q int) bool { return q == j })
		}
	}
	return nil
}

// start runs job j now on the lowest idle node ids, after checking the
// allocation with model.Check against the cluster's state.
func (e *engine) start(j int) error {
	job := &e.jobs[j]
	nodes := make([]int, 0, job.Nodes)
	idle := make([]int, 0, e.nIdle)
	for id, b := range e.busy {
		if !b {
			idle = append(idle, id)
			if len(nodes) < job.Nodes {
				nodes = append(nodes, id)
			}
		}
	}
	w := &model.Window{Time: e.now, Topology: e.topo, Idle: idle, Cost: e.cost,
		Jobs: []model.Job{{ID: job.ID, Nodes: job.Nodes, Walltime: job.Runtime, Submit: job.Submit, Queue: model.DefaultQueue}}}
	for i := range e.running {
		r := &e.running[i]
		w.Running = append(w.Running, model.RunningJob{ID: "run-" + e.jobs[r.job].ID, Nodes: r.nodes, End: r.end})
	}
	if err := model.Check(w, []model.Allocation{{Job: 0, Nodes: nodes, Start: e.now}}); err != nil {
		return fmt.Errorf("t=%d: %w", e.now, err)
	}
	for _, id := range nodes {
		e.busy[id] = true
	}
	e.nIdle -= len(nodes)
	end := e.now + job.Runtime
	e.running = append(e.running, running{job: j, end: end, seq: e.seq, nodes: nodes})
	e.seq++
	e.res[j] = sim.JobResult{ID: job.ID, Submit: job.Submit, Start: e.now, End: end, Nodes: nodes,
		Cost: e.cost.Cost(e.topo, nodes)}
	return nil
}

// WindowOptions tune Fig6Window; the zero value is the paper's setting.
type WindowOptions struct {
	// Solver solves each window; nil is solver/csp (exact).
	Solver solver.Solver
	// MaxJobs caps the multi-node jobs per window; 0 is DefaultMaxJobs.
	MaxJobs int
	// TimeLimit bounds each window's solve; 0 is none, which keeps the
	// figures independent of the machine.
	TimeLimit time.Duration
	// Workers is the number of simulations run at once; 0 is GOMAXPROCS.
	Workers int
	// Tick, when set, is called after each (τ, epoch) simulation, from
	// the workers' goroutines (a progress bar; bench.Bar is safe for
	// that).
	Tick func()
}

// TauFigures are Fig. 6's points of one window period.
type TauFigures struct {
	// Tau is the window period, in seconds.
	Tau    int64         `json:"tau_s"`
	Epochs []EpochFigure `json:"epochs"`
	// Windows counts the windows solved over all epochs.
	Windows int `json:"windows"`
}

// Fig6Window runs bench/sim's window policy, every τ of taus (seconds),
// on the same epochs × slice jobs of tr as Fig6Exact, each epoch from an
// idle cluster of the paper's layout, and returns each τ's figures in the
// order of taus. The simulations run opt.Workers at a time; the figures
// do not depend on that when opt.TimeLimit is 0.
func Fig6Window(ctx context.Context, tr *trace.Trace, taus []int64, epochs, slice int, opt WindowOptions) ([]TauFigures, error) {
	if err := checkSlices(tr, epochs, slice); err != nil {
		return nil, err
	}
	for _, tau := range taus {
		if tau < 1 {
			return nil, fmt.Errorf("%w: window period τ = %d s is not positive", ErrConfig, tau)
		}
	}
	if opt.MaxJobs < 0 || opt.TimeLimit < 0 || opt.Workers < 0 {
		return nil, fmt.Errorf("%w: negative MaxJobs, TimeLimit or Workers", ErrConfig)
	}
	if opt.Solver == nil {
		opt.Solver = csp.Solver{}
	}
	if opt.MaxJobs == 0 {
		opt.MaxJobs = DefaultMaxJobs
	}
	if opt.Workers == 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	topo, err := PaperTopology()
	if err != nil {
		return nil, err
	}
	out := make([]TauFigures, len(taus))
	windows := make([][]int, len(taus))
	for i, tau := range taus {
		out[i] = TauFigures{Tau: tau, Epochs: make([]EpochFigure, epochs)}
		windows[i] = make([]int, epochs)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type task struct{ tau, epoch int }
	tasks := make(chan task)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	for range opt.Workers {
		wg.Go(func() {
			for t := range tasks {
				first := t.epoch * slice
				part := &trace.Trace{Jobs: tr.Jobs[first : first+slice]}
				cfg := sim.Config{Topology: topo, TopologySpec: model.TopologySpec{Layout: new(PaperLayout())},
					Cost: model.DefaultCostModel, Policy: "window", Tau: taus[t.tau], Solver: opt.Solver,
					MaxJobs: opt.MaxJobs, TimeLimit: opt.TimeLimit, Check: true}
				res, err := sim.Run(ctx, part, cfg)
				if err == nil && (res.Dropped > 0 || len(res.Jobs) != slice) {
					err = fmt.Errorf("lan2023: ran %d of %d jobs (%d larger than the cluster)", len(res.Jobs), slice, res.Dropped)
				}
				if err != nil {
					fail(fmt.Errorf("window τ=%d s epoch %d: %w", taus[t.tau], t.epoch+1, err))
					continue
				}
				out[t.tau].Epochs[t.epoch] = Figure(res.Jobs, t.epoch+1, first)
				windows[t.tau][t.epoch] = res.Windows
				if opt.Tick != nil {
					opt.Tick()
				}
			}
		})
	}
feed:
	for i := range taus {
		for e := range epochs {
			select {
			case tasks <- task{i, e}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(tasks)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		for _, w := range windows[i] {
			out[i].Windows += w
		}
	}
	return out, nil
}

// Stats summarise a series of epochs as Fig. 6's box plots do.
type Stats struct {
	// MeanCost and MeanWait average the epochs' mean CH cost and wait;
	// MedianCost and MedianWait are their medians.
	MeanCost   float64 `json:"mean_cost"`
	MedianCost float64 `json:"median_cost"`
	MeanWait   float64 `json:"mean_wait_s"`
	MedianWait float64 `json:"median_wait_s"`
}

// Summarise returns the statistics of figs' MeanCost and MeanWait.
func Summarise(figs []EpochFigure) Stats {
	cost := make([]float64, len(figs))
	wait := make([]float64, len(figs))
	for i, f := range figs {
		cost[i], wait[i] = f.MeanCost, f.MeanWait
	}
	return Stats{MeanCost: mean(cost), MedianCost: median(cost), MeanWait: mean(wait), MedianWait: median(wait)}
}

func mean(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	x = slices.Clone(x)
	slices.Sort(x)
	m := len(x) / 2
	if len(x)%2 == 1 {
		return x[m]
	}
	return (x[m-1] + x[m]) / 2
}

// A Published figure is one epoch's integer mean CH cost and mean wait as
// the authors' code printed it.
type Published struct {
	Cost int64 `json:"cost"`
	Wait int64 `json:"wait_s"`
}

// published holds the per-epoch figures of the authors' result files
// simanneal/comm_wait_cost_{FCFS,BF,10,…,60}.txt at
// https://github.com/lzk23/hpcschedule, the data Fig. 6 plots. The paper
// quotes epoch 1 of FCFS and BF, 35077 and 93. The window runs used NSA
// and wall-clock solve times (see the package documentation): they
// reproduce only in shape.
var published = map[string][]Published{
	FCFS: {{35077, 93}, {35382, 207}, {35509, 195}, {35123, 36}, {32324, 100},
		{35506, 399}, {36387, 71}, {33129, 4}, {34388, 251}, {36199, 298}},
	BF: {{35077, 93}, {35354, 204}, {35432, 195}, {34904, 35}, {32619, 97},
		{35415, 394}, {36387, 71}, {33129, 4}, {34359, 250}, {36249, 290}},
	"10": {{31350, 105}, {32107, 237}, {32336, 225}, {30779, 49}, {29262, 119},
		{31782, 426}, {33943, 91}, {28823, 13}, {31227, 273}, {31910, 318}},
	"20": {{31470, 114}, {32217, 255}, {31918, 242}, {31168, 56}, {28944, 129},
		{31595, 434}, {32881, 106}, {29409, 20}, {31100, 289}, {31853, 336}},
	"30": {{31051, 121}, {31882, 271}, {31857, 260}, {30791, 64}, {28607, 141},
		{31620, 454}, {33142, 118}, {28454, 26}, {30651, 309}, {32056, 353}},
	"40": {{30554, 133}, {32318, 292}, {31687, 283}, {30711, 73}, {28704, 162},
		{31476, 462}, {32217, 133}, {28224, 35}, {30491, 316}, {32074, 367}},
	"50": {{31201, 148}, {31579, 312}, {31530, 308}, {30511, 90}, {28224, 179},
		{31150, 487}, {32610, 152}, {28244, 42}, {30182, 338}, {31568, 391}},
	"60": {{31395, 161}, {30557, 337}, {31879, 316}, {30836, 94}, {27832, 202},
		{31215, 498}, {31851, 166}, {28709, 50}, {30193, 365}, {31518, 403}},
}

// PublishedExact returns the authors' figures for policy FCFS or BF, one
// per epoch of 300 jobs (10), or nil for another policy.
func PublishedExact(policy string) []Published {
	if policy != FCFS && policy != BF {
		return nil
	}
	return slices.Clone(published[policy])
}

// PublishedWindow returns the authors' figures for the window period tau
// (10, 20, …, 60 s), one per epoch (10), or nil for another period.
func PublishedWindow(tau int64) []Published {
	return slices.Clone(published[strconv.FormatInt(tau, 10)])
}

// PublishedAt returns the published figure of epoch (1-based) in list,
// if there is one; the figures only hold for 300-job slices.
func PublishedAt(list []Published, epoch, slice int) (Published, bool) {
	if slice != DefaultSlice || epoch < 1 || epoch > len(list) {
		return Published{}, false
	}
	return list[epoch-1], true
}

// A Report gathers Fig. 6's figures for printing and export.
type Report struct {
	// Trace names the trace file.
	Trace  string `json:"trace"`
	Epochs int    `json:"epochs"`
	Slice  int    `json:"slice"`
	// FCFS and BF are Fig6Exact's figures, Window Fig6Window's (empty
	// when no τ was asked for); Solver and MaxJobs describe the windows.
	FCFS    []EpochFigure `json:"fcfs"`
	BF      []EpochFigure `json:"bf"`
	Window  []TauFigures  `json:"window,omitempty"`
	Solver  string        `json:"solver,omitempty"`
	MaxJobs int           `json:"max_jobs,omitempty"`
}

// published returns the authors' figure for the series (FCFS, BF or a τ
// in seconds as text) at epoch, if the report's slices are Fig. 6's.
func (r *Report) published(series string, epoch int) (Published, bool) {
	return PublishedAt(published[series], epoch, r.Slice)
}

// exactMismatches lists the epochs of figs whose figures differ from the
// published ones, and counts the epochs compared.
func (r *Report) exactMismatches(series string, figs []EpochFigure) (diffs []string, compared int) {
	for _, f := range figs {
		p, ok := r.published(series, f.Epoch)
		if !ok {
			continue
		}
		compared++
		if p.Cost != f.Cost || p.Wait != f.Wait {
			diffs = append(diffs, fmt.Sprintf("epoch %d (ours %d / %d, published %d / %d)", f.Epoch, f.Cost, f.Wait, p.Cost, p.Wait))
		}
	}
	return diffs, compared
}

// WriteMarkdown writes r as markdown tables: per epoch, FCFS and BF beside
// the published figures, with a plain statement of where they differ;
// then, when r has window figures, their summary against FCFS and BF, the
// shape of the τ sweep, and the per-epoch figures of every series.
func WriteMarkdown(w io.Writer, r *Report) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "## Fig. 6 — FCFS and BF (exact)\n\n")
	fmt.Fprintf(b, "Trace %s: %d epochs of %d consecutive jobs, each from an idle %d-node cluster (%d pods × %d leaves × %d nodes); "+
		"integer parts of the mean lan-code CH cost and the mean wait (s) over each epoch's jobs.\n\n",
		r.Trace, r.Epochs, r.Slice, PaperPods*PaperLeavesPerPod*PaperNodesPerLeaf, PaperPods, PaperLeavesPerPod, PaperNodesPerLeaf)
	b.WriteString("| epoch | jobs | FCFS cost | FCFS wait | published FCFS | BF cost | BF wait | published BF |\n")
	b.WriteString("|---:|---|---:|---:|---|---:|---:|---|\n")
	cell := func(series string, f *EpochFigure) string {
		p, ok := r.published(series, f.Epoch)
		switch {
		case !ok:
			return "—"
		case p.Cost == f.Cost && p.Wait == f.Wait:
			return fmt.Sprintf("%d / %d (same)", p.Cost, p.Wait)
		}
		return fmt.Sprintf("%d / %d (**differs**)", p.Cost, p.Wait)
	}
	for i := range max(len(r.FCFS), len(r.BF)) {
		var row [2][3]string
		epoch, jobs := 0, ""
		for s, figs := range [2][]EpochFigure{r.FCFS, r.BF} {
			row[s] = [3]string{"—", "—", "—"}
			if i < len(figs) {
				f := &figs[i]
				epoch, jobs = f.Epoch, fmt.Sprintf("%d–%d", f.FirstJob, f.FirstJob+f.Jobs-1)
				row[s] = [3]string{strconv.FormatInt(f.Cost, 10), strconv.FormatInt(f.Wait, 10), cell([]string{FCFS, BF}[s], f)}
			}
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", epoch, jobs,
			row[0][0], row[0][1], row[0][2], row[1][0], row[1][1], row[1][2])
	}
	b.WriteString("\n")
	for _, s := range []struct {
		name string
		figs []EpochFigure
	}{{"FCFS", r.FCFS}, {"BF", r.BF}} {
		diffs, compared := r.exactMismatches(strings.ToLower(s.name), s.figs)
		switch {
		case compared == 0:
			fmt.Fprintf(b, "%s: no published figures to compare with (they exist for 300-job slices, epochs 1–10).\n", s.name)
		case len(diffs) == 0:
			fmt.Fprintf(b, "%s: all %d epochs compared equal the published figures.\n", s.name, compared)
		default:
			fmt.Fprintf(b, "%s: %d of %d epochs compared DIFFER from the published figures: %s.\n", s.name, len(diffs), compared, strings.Join(diffs, "; "))
		}
	}
	b.WriteString("\nPublished: the authors' result files simanneal/comm_wait_cost_FCFS.txt and comm_wait_cost_BF.txt " +
		"(github.com/lzk23/hpcschedule), the data of Fig. 6; the paper quotes epoch 1, 35077 and 93, for both.\n")
	if len(r.Window) > 0 {
		writeWindowMarkdown(b, r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// series is one row of the window summary: a policy or a τ.
type series struct {
	name string
	key  string // key of published
	figs []EpochFigure
	wins int
}

func (r *Report) series() []series {
	out := []series{{name: "FCFS", key: FCFS, figs: r.FCFS, wins: -1}, {name: "BF", key: BF, figs: r.BF, wins: -1}}
	for _, t := range r.Window {
		out = append(out, series{name: fmt.Sprintf("τ = %d s", t.Tau), key: strconv.FormatInt(t.Tau, 10), figs: t.Epochs, wins: t.Windows})
	}
	return out
}

// publishedStats averages the published figures of the epochs in figs.
func (r *Report) publishedStats(s series) (cost, wait float64, ok bool) {
	n := 0
	for _, f := range s.figs {
		p, found := r.published(s.key, f.Epoch)
		if !found {
			return 0, 0, false
		}
		cost += float64(p.Cost)
		wait += float64(p.Wait)
		n++
	}
	if n == 0 {
		return 0, 0, false
	}
	return cost / float64(n), wait / float64(n), true
}

func writeWindowMarkdown(b *strings.Builder, r *Report) {
	fmt.Fprintf(b, "\n## Fig. 6 — window-based against FCFS and BF\n\n")
	fmt.Fprintf(b, "Window policy of bench/sim: every τ a window of at most %d multi-node jobs solved by %s, "+
		"lan-code cost, on the same %d epochs. Statistics over the epochs' means; "+
		"published: the authors' result files (NSA windows, wall-clock solve time added to the waits), for the shape only.\n\n",
		r.MaxJobs, r.Solver, r.Epochs)
	b.WriteString("| series | mean cost | median cost | mean wait (s) | median wait (s) | windows | published mean cost | published mean wait (s) |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	all := r.series()
	for _, s := range all {
		st := Summarise(s.figs)
		wins := "—"
		if s.wins >= 0 {
			wins = strconv.Itoa(s.wins)
		}
		pc, pw := "—", "—"
		if c, w, ok := r.publishedStats(s); ok {
			pc, pw = fmt.Sprintf("%.1f", c), fmt.Sprintf("%.1f", w)
		}
		fmt.Fprintf(b, "| %s | %.1f | %.1f | %.1f | %.1f | %s | %s | %s |\n", s.name, st.MeanCost, st.MedianCost, st.MeanWait, st.MedianWait, wins, pc, pw)
	}
	b.WriteString("\n")
	b.WriteString(shape(all) + "\n")
	b.WriteString("\nPer epoch, cost / wait (s):\n\n| epoch |")
	for _, s := range all {
		fmt.Fprintf(b, " %s |", s.name)
	}
	b.WriteString("\n|---:|" + strings.Repeat("---|", len(all)) + "\n")
	for i := range r.Epochs {
		fmt.Fprintf(b, "| %d |", i+1)
		for _, s := range all {
			if i < len(s.figs) {
				fmt.Fprintf(b, " %d / %d |", s.figs[i].Cost, s.figs[i].Wait)
			} else {
				b.WriteString(" — |")
			}
		}
		b.WriteString("\n")
	}
}

// shape states in words whether the window series show Fig. 6's shape:
// lower cost and longer wait than FCFS and BF, the cost falling and the
// wait rising as τ grows.
func shape(all []series) string {
	if len(all) < 3 {
		return ""
	}
	stats := func(s series) Stats { return Summarise(s.figs) }
	fcfs, bf := stats(all[0]), stats(all[1])
	win := all[2:]
	below, longer, falls, rises := true, true, true, true
	for i, s := range win {
		st := stats(s)
		below = below && st.MeanCost < min(fcfs.MeanCost, bf.MeanCost)
		longer = longer && st.MeanWait > max(fcfs.MeanWait, bf.MeanWait)
		if i > 0 {
			prev := stats(win[i-1])
			falls = falls && st.MeanCost < prev.MeanCost
			rises = rises && st.MeanWait > prev.MeanWait
		}
	}
	yes := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "**no**"
	}
	return fmt.Sprintf("Shape (mean over epochs): every τ costs less than FCFS and BF: %s; every τ waits longer than FCFS and BF: %s; "+
		"cost falls as τ grows: %s; wait rises as τ grows: %s.", yes(below), yes(longer), yes(falls), yes(rises))
}

// WriteCSV writes one row per series and epoch: policy (fcfs, bf or
// window), tau_s (0 for fcfs and bf), epoch, first_job, jobs, mean_cost,
// mean_wait_s, cost, wait_s, published_cost and published_wait_s (empty
// when unknown).
func WriteCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"policy", "tau_s", "epoch", "first_job", "jobs", "mean_cost", "mean_wait_s", "cost", "wait_s", "published_cost", "published_wait_s"})
	for _, s := range r.series() {
		policy, tau := s.key, "0"
		if s.wins >= 0 {
			policy, tau = "window", s.key
		}
		for _, f := range s.figs {
			pc, pw := "", ""
			if p, ok := r.published(s.key, f.Epoch); ok {
				pc, pw = strconv.FormatInt(p.Cost, 10), strconv.FormatInt(p.Wait, 10)
			}
			cw.Write([]string{policy, tau, strconv.Itoa(f.Epoch), strconv.Itoa(f.FirstJob), strconv.Itoa(f.Jobs),
				strconv.FormatFloat(f.MeanCost, 'f', -1, 64), strconv.FormatFloat(f.MeanWait, 'f', -1, 64),
				strconv.FormatInt(f.Cost, 10), strconv.FormatInt(f.Wait, 10), pc, pw})
		}
	}
	cw.Flush()
	return cw.Error()
}

// A Fig6Run is what RunFig6 computes: the trace's name, its epochs of
// slice jobs, the periods τ of the window policy (none: FCFS and BF
// only) and its solver, named for the report.
type Fig6Run struct {
	Trace         string
	Epochs, Slice int
	Taus          []int64
	SolverName    string
	Window        WindowOptions
}

// RunFig6 computes Fig. 6 on tr: the exact FCFS and BF figures of every
// epoch, then the window policy's at every τ (Fig6Window). It returns the
// report and the time each part took.
func RunFig6(ctx context.Context, tr *trace.Trace, run Fig6Run) (r *Report, exact, windows time.Duration, err error) {
	t0 := time.Now()
	r = &Report{Trace: run.Trace, Epochs: run.Epochs, Slice: run.Slice}
	if r.FCFS, err = Fig6Exact(tr, FCFS, run.Epochs, run.Slice); err != nil {
		return nil, 0, 0, err
	}
	if r.BF, err = Fig6Exact(tr, BF, run.Epochs, run.Slice); err != nil {
		return nil, 0, 0, err
	}
	exact = time.Since(t0)
	if len(run.Taus) > 0 {
		r.Solver, r.MaxJobs = run.SolverName, DefaultMaxJobs
		if r.Window, err = Fig6Window(ctx, tr, run.Taus, run.Epochs, run.Slice, run.Window); err != nil {
			return nil, 0, 0, err
		}
	}
	return r, exact, time.Since(t0) - exact, nil
}
