package slurmsched

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/hostlist"
	"github.com/optsched/optsched/model/slurm"
	"github.com/optsched/optsched/solver"
)

// A Scope says what optsched owns.
type Scope struct {
	// Partitions, when not empty, are the only partitions whose held jobs
	// optsched schedules; empty: every partition.
	Partitions []string
	// Nodes, when not empty, are the only nodes optsched starts jobs on.
	Nodes map[string]bool
}

// ownsPartition reports whether the scope owns partition p.
func (sc *Scope) ownsPartition(p string) bool {
	return len(sc.Partitions) == 0 || slices.Contains(sc.Partitions, p)
}

// ownsNode reports whether the scope owns node n.
func (sc *Scope) ownsNode(n string) bool { return len(sc.Nodes) == 0 || sc.Nodes[n] }

// PlacedMark is the AdminComment optsched gives a job it places (users
// cannot set an AdminComment): a held job with a ReqNodeList and this
// mark was placed by a cycle that did not release it, and is optsched's
// to place again; a ReqNodeList without it is the user's --nodelist.
const PlacedMark = "optsched:placed"

// Options adjust Decide.
type Options struct {
	// Solver is the whole-node window solver, built (catalog.Spec); nil:
	// Slurm's tree best fit (heuristics.Slurm) alone, which also takes
	// over when Solver fails or places nothing.
	Solver solver.Solver
	// TimeLimit bounds the window solve (0: 5 s).
	TimeLimit time.Duration
	// DefaultWalltime is the walltime of a job without a time limit
	// (0: 365 days).
	DefaultWalltime time.Duration
	// StarveAfter, when positive, is the wait after which the first job
	// that does not fit now stops the jobs behind it: they wait, so that
	// the nodes it needs drain (0: never; jobs behind always start when
	// they fit).
	StarveAfter time.Duration
	// CompactWait, when on, holds a whole-node job of several nodes that
	// fits now but not within one switch back for a while, when one
	// switch will have room soon (heuristics.DecideCompactWait, on the
	// running jobs' time limits): the idle nodes of that switch are then
	// given to no other job this cycle. One job a cycle waits so.
	CompactWait heuristics.CompactWait
}

// The paths a start takes.
const (
	// PathWhole: whole-node jobs, placed by the topology-aware window
	// solve on idle nodes.
	PathWhole = "whole-node"
	// PathShared: jobs that share nodes, placed by the first fit on free
	// CPUs and memory.
	PathShared = "shared"
)

// A Start is a job the plan starts.
type Start struct {
	Job string `json:"job"`
	// Nodes are the nodes it runs on; NodeList is their hostlist, as
	// given to scontrol.
	Nodes    []string `json:"nodes"`
	NodeList string   `json:"node_list"`
	Path     string   `json:"path"`
	// CPUsPerNode and MemPerNode (MB) are what the planner counted on
	// each node (an exclusive job counts the whole node).
	CPUsPerNode int64 `json:"cpus_per_node"`
	MemPerNode  int64 `json:"mem_per_node_mb"`
}

// A Reason says why a job does not start in this cycle.
type Reason struct {
	Job    string `json:"job"`
	Reason string `json:"reason"`
}

// A Plan is one cycle's decision. What Apply does with it is an Outcome,
// a value apart; PlanDoc is the JSON form of the two.
type Plan struct {
	Starts   []*Start
	Deferred []Reason
	// Dropped are the starts Recheck removed because the state read
	// again no longer allows them.
	Dropped []Reason
	// Solver names the solver that placed the whole-node jobs, Objective
	// their total CH cost (nil without whole-node starts).
	Solver    string
	Objective *int64
	Notes     []string
	// Digest is the state's.
	Digest string
}

// usable reports whether a node may take new jobs: idle or mixed, with no
// state flag (DRAIN, MAINT, RESERVED, …); the reason otherwise.
func usable(n *Node) (bool, string) {
	switch strings.ToLower(n.State) {
	case "idle", "mixed":
	default:
		return false, "state " + n.State
	}
	if len(n.Flags) > 0 {
		return false, "state flags " + strings.Join(n.Flags, ",")
	}
	return true, ""
}

// Owned reports whether optsched owns job j under sc: pending in an
// owned partition, held with priority 0 (JobHeldUser, as the hold guard
// leaves it, or BadConstraints, as Slurm leaves a placement that could
// not run). The record of an array's pending tasks is owned too: Decide
// schedules each task (scontrol splits it off when it is placed).
func (sc *Scope) Owned(j *Job) bool {
	return j.State == "PENDING" && j.Priority == 0 &&
		(j.Reason == "JobHeldUser" || j.Reason == "BadConstraints") &&
		sc.ownsPartition(j.Partition)
}

// demand is what a job needs on each of its nodes.
type demand struct {
	k          int
	cpus, mem  int64
	whole      bool
	wall       int64
	unplacable string
}

// jobDemand computes what job j needs on each node; maxCPUs is the most
// CPUs of a usable owned node (a job that needs them all is a whole-node
// job).
func jobDemand(j *Job, maxCPUs int64, defWall int64) demand {
	d := demand{k: int(max(j.NodeCount, 1)), wall: defWall}
	if j.TimeLimit != nil && *j.TimeLimit > 0 {
		d.wall = *j.TimeLimit * 60
	}
	d.cpus = max((j.CPUs+int64(d.k)-1)/int64(d.k), j.MinCPUsPerNode, 1)
	switch {
	case j.MemPerNode != nil:
		d.mem = *j.MemPerNode
	case j.MemPerCPU != nil:
		d.mem = *j.MemPerCPU * d.cpus
	}
	d.whole = j.Exclusive() || (maxCPUs > 0 && d.cpus >= maxCPUs)
	switch {
	case j.Dependency != "" && j.Dependency != "(null)":
		d.unplacable = "waits for a dependency (" + j.Dependency + "); optsched does not evaluate dependencies"
	case j.Features != "" && j.Features != "(null)":
		d.unplacable = "asks for node features (" + j.Features + "), which optsched does not match yet"
	case j.TresPerNode != "" || j.TresPerJob != "":
		d.unplacable = "asks for GRES/TRES (" + j.TresPerNode + j.TresPerJob + "), which optsched does not count yet"
	case strings.Contains(j.Partition, ","):
		d.unplacable = "was submitted to several partitions (" + j.Partition + ")"
	case j.RequiredNodes != "" && j.Reason != "BadConstraints" && j.AdminComment != PlacedMark:
		d.unplacable = "asks for nodes by name (--nodelist " + j.RequiredNodes + "); optsched leaves such jobs alone"
	}
	return d
}

// free is a node's room as the planner counts it.
type free struct {
	n         *Node
	cpus, mem int64
	idle      bool
	leaf      int
}

// InFlight reports whether j is a start of optsched's that Slurm has not
// run yet: placed (PlacedMark, a ReqNodeList) and released, still
// pending. Slurm starts such a job within about a second when its nodes
// are free, but sinfo does not count its nodes as allocated until then.
func InFlight(j *Job) bool {
	return j.State == "PENDING" && j.Priority > 0 && j.AdminComment == PlacedMark && j.RequiredNodes != ""
}

// holdInFlight takes from nodes what the jobs optsched released and
// Slurm has not started yet will use (their whole nodes when exclusive),
// so that no cycle places a second job on them meanwhile: Slurm would
// then run the two one after the other. It returns a note when any
// holds nodes.
func holdInFlight(st *State, nodes []*free, maxCPUs, defWall int64) []string {
	byName := make(map[string]*free, len(nodes))
	for _, f := range nodes {
		byName[f.n.Name] = f
	}
	held := 0
	for i := range st.Jobs {
		j := &st.Jobs[i]
		if !InFlight(j) {
			continue
		}
		names, err := expand(j.RequiredNodes)
		if err != nil {
			continue // its nodes are not known; Check names the job if it matters
		}
		d := jobDemand(j, maxCPUs, defWall)
		held++
		for _, name := range names {
			f := byName[name]
			if f == nil {
				continue
			}
			f.idle = false
			if d.whole {
				f.cpus, f.mem = 0, 0
				continue
			}
			f.cpus = max(f.cpus-d.cpus, 0)
			f.mem = max(f.mem-d.mem, 0)
		}
	}
	if held == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d job(s) released by optsched and not started by Slurm yet hold their nodes", held)}
}

// Decide plans one cycle: which owned held jobs start now, and where. It
// takes the usable nodes (usableNodes) and the owned jobs in submission
// order (ownedJobs); each job is deferred, placed by the first fit
// (selection.take), or kept for the whole-node window, which is solved
// at the end (placeWhole).
func Decide(ctx context.Context, st *State, sc *Scope, opt Options) (*Plan, error) {
	if opt.TimeLimit <= 0 {
		opt.TimeLimit = 5 * time.Second
	}
	defWall := int64(365 * 24 * 3600)
	if opt.DefaultWalltime > 0 {
		defWall = int64(opt.DefaultWalltime / time.Second)
	}
	p := &Plan{Digest: st.Digest}
	topo, err := topologyOf(st)
	if err != nil {
		return nil, err
	}
	nodes, maxCPUs := usableNodes(st, sc, topo, p)
	p.Notes = append(p.Notes, holdInFlight(st, nodes, maxCPUs, defWall)...)
	sel := newSelection(st, sc, opt, nodes, maxCPUs, p)
	sel.topo, sel.nodes, sel.maxCPUs, sel.defWall = topo, nodes, maxCPUs, defWall
	for _, j := range ownedJobs(st, sc, p) {
		sel.take(j, jobDemand(j, maxCPUs, defWall))
	}
	if len(sel.whole) > 0 {
		if err := placeWhole(ctx, st, topo, nodes, sel.whole, opt, p); err != nil {
			return nil, err
		}
	}
	for _, s := range p.Starts {
		slices.Sort(s.Nodes)
		s.NodeList = hostlist.Compress(s.Nodes)
	}
	return p, nil
}

// usableNodes returns the nodes optsched may use, in topology order, and
// the most CPUs of one; a node in no switch is noted and left out.
func usableNodes(st *State, sc *Scope, topo *model.Topology, p *Plan) (nodes []*free, maxCPUs int64) {
	for i := range st.Nodes {
		n := &st.Nodes[i]
		if !sc.ownsNode(n.Name) {
			continue
		}
		if ok, _ := usable(n); !ok {
			continue
		}
		id, ok := topo.Lookup(n.Name)
		if !ok {
			p.Notes = append(p.Notes, "node "+n.Name+" is in no switch of the topology: not used")
			continue
		}
		f := &free{n: n, cpus: n.CPUs - n.AllocCPUs, mem: n.RealMemory - n.AllocMemory, leaf: id}
		f.idle = n.AllocCPUs == 0 && n.AllocMemory == 0
		nodes = append(nodes, f)
		maxCPUs = max(maxCPUs, n.CPUs)
	}
	slices.SortFunc(nodes, func(a, b *free) int { return cmp.Compare(a.leaf, b.leaf) })
	return nodes, maxCPUs
}

// ownedJobs returns the owned jobs in submission order, an array's
// pending tasks one job each (an array whose tasks do not parse is
// deferred).
func ownedJobs(st *State, sc *Scope, p *Plan) []*Job {
	var jobs []*Job
	for i := range st.Jobs {
		j := &st.Jobs[i]
		switch {
		case !sc.Owned(j):
		case j.ArrayTaskString != "":
			tasks, err := ArrayTasks(j.ArrayTaskString, MaxArrayTasks)
			if err != nil {
				p.Deferred = append(p.Deferred, Reason{j.IDString(), err.Error()})
				continue
			}
			for _, t := range tasks {
				c := *j
				c.ArrayTaskString, c.isTask, c.task = "", true, t
				jobs = append(jobs, &c)
			}
		default:
			jobs = append(jobs, j)
		}
	}
	slices.SortStableFunc(jobs, func(a, b *Job) int {
		return cmp.Or(cmp.Compare(a.SubmitTime, b.SubmitTime), cmp.Compare(a.ID, b.ID))
	})
	return jobs
}

// A wholeJob is a whole-node job kept for the window solve.
type wholeJob struct {
	j *Job
	d demand
}

// neverKey caches neverFits by what it reads of a job.
type neverKey struct {
	part, excluded string
	cpus, mem      int64
	k              int
}

// A selection goes through the owned jobs in order: it defers a job that
// cannot start now, places one that shares nodes by a first fit, and
// keeps a whole-node job for the window while enough idle nodes are left
// for the whole-node jobs before it.
type selection struct {
	st  *State
	sc  *Scope
	opt Options
	p   *Plan
	// idleLeft counts the idle nodes; byFree lists the partly used nodes
	// by their free CPUs; idleNodes the idle ones, with idleFrom past
	// those used since.
	idleLeft  int
	byFree    [][]*free
	idleNodes []*free
	idleFrom  int
	// whole are the whole-node jobs kept, wholeNeed their nodes.
	whole     []wholeJob
	wholeNeed int
	never     map[neverKey]string
	// stopped, once set, defers every job behind a starving one.
	stopped string
	// topo, nodes, maxCPUs and defWall are Decide's, for the compact
	// wait; compactHeld: a job waits for one switch this cycle.
	topo        *model.Topology
	nodes       []*free
	maxCPUs     int64
	defWall     int64
	compactHeld bool
	// compactTaken (CompactWait.Many): the nodes (topology ids) a job
	// before counts on within one switch, which the rule does not count
	// as free for the later jobs.
	compactTaken map[int]bool
}

func newSelection(st *State, sc *Scope, opt Options, nodes []*free, maxCPUs int64, p *Plan) *selection {
	s := &selection{st: st, sc: sc, opt: opt, p: p, byFree: make([][]*free, maxCPUs+1), never: map[neverKey]string{}}
	for _, f := range nodes {
		switch {
		case f.idle:
			s.idleLeft++
			s.idleNodes = append(s.idleNodes, f)
		case f.cpus > 0:
			s.byFree[f.cpus] = append(s.byFree[f.cpus], f)
		}
	}
	return s
}

// waitFor is called for a job that fits in optsched's nodes but not now:
// once it has starved, the jobs behind it wait.
func (s *selection) waitFor(j *Job) {
	st, opt := s.st, s.opt
	if opt.StarveAfter > 0 && s.stopped == "" && st.Now-j.SubmitTime >= int64(opt.StarveAfter/time.Second) {
		s.stopped = fmt.Sprintf("queued behind job %s, which has waited %v (--starve-after %v): the jobs behind it wait until it starts", j.IDString(), time.Duration(st.Now-j.SubmitTime)*time.Second, opt.StarveAfter)
	}
}

// holdForSwitch applies the compact wait (Options.CompactWait) to
// whole-node job j of demand d, which fits now: when it should wait for
// one switch, the idle nodes of that switch are held for it this cycle,
// it is deferred with the rule's reason, and holdForSwitch reports true.
func (s *selection) holdForSwitch(j *Job, d demand) bool {
	opt := s.opt
	if !opt.CompactWait.On() || s.compactHeld && !opt.CompactWait.Many || d.k < 2 {
		return false
	}
	dec, hold := compactWait(opt.CompactWait, s.st, s.sc, s.topo, s.nodes, s.p.Starts, j, d, s.maxCPUs, s.defWall, s.compactTaken)
	if opt.CompactWait.Many && s.compactTaken == nil {
		s.compactTaken = map[int]bool{}
	}
	if !dec.Wait && opt.CompactWait.Many {
		for _, id := range dec.FitNodes {
			s.compactTaken[id] = true
		}
	}
	// The whole-node jobs before it must still find their idle nodes
	// outside the switch.
	if !dec.Wait || s.idleLeft-len(hold)-s.wholeNeed < 0 {
		return false
	}
	for _, f := range hold {
		f.idle = false
		s.idleLeft--
	}
	s.compactHeld = true
	s.p.Deferred = append(s.p.Deferred, Reason{j.IDString(), dec.Reason + fmt.Sprintf("; its %d idle node(s) there are held for it this cycle", len(hold))})
	return true
}

// take decides job j of demand d.
func (s *selection) take(j *Job, d demand) {
	p := s.p
	id := j.IDString()
	if s.stopped != "" {
		p.Deferred = append(p.Deferred, Reason{id, s.stopped})
		return
	}
	if d.unplacable != "" {
		p.Deferred = append(p.Deferred, Reason{id, d.unplacable})
		return
	}
	key := neverKey{j.Partition, j.ExcludedNodes, d.cpus, d.mem, d.k}
	why, ok := s.never[key]
	if !ok {
		why = neverFits(s.st, s.sc, j, d)
		s.never[key] = why
	}
	if why != "" {
		p.Deferred = append(p.Deferred, Reason{id, "can never run on optsched's nodes: " + why})
		return
	}
	if d.whole {
		if s.idleLeft-s.wholeNeed < d.k {
			p.Deferred = append(p.Deferred, Reason{id, fmt.Sprintf("needs %d idle node(s); %d are idle and not taken by the jobs before it", d.k, max(s.idleLeft-s.wholeNeed, 0))})
			s.waitFor(j)
			return
		}
		if s.holdForSwitch(j, d) {
			return
		}
		s.wholeNeed += d.k
		s.whole = append(s.whole, wholeJob{j, d})
		return
	}
	pick := s.firstFit(j, d)
	if len(pick) < d.k {
		p.Deferred = append(p.Deferred, Reason{id, fmt.Sprintf("needs %d node(s) with %d free CPUs and %d MB free memory each; %d have them now", d.k, d.cpus, d.mem, len(pick))})
		s.waitFor(j)
		return
	}
	st := &Start{Job: id, Path: PathShared, CPUsPerNode: d.cpus, MemPerNode: d.mem}
	for _, f := range pick {
		if f.idle {
			s.idleLeft--
			f.idle = false
		}
		f.cpus -= d.cpus
		f.mem -= d.mem
		if f.cpus > 0 {
			s.byFree[f.cpus] = append(s.byFree[f.cpus], f)
		}
		st.Nodes = append(st.Nodes, f.n.Name)
	}
	p.Starts = append(p.Starts, st)
}

// firstFit picks up to d.k nodes for a job that shares nodes: partly
// used nodes first (best fit on CPUs: the buckets by free CPUs, lowest
// first), then idle nodes, in topology order, beyond those the
// whole-node jobs before need.
func (s *selection) firstFit(j *Job, d demand) []*free {
	var pick []*free
	ex, _ := expand(j.ExcludedNodes)
	fits := func(f *free) bool {
		return f.cpus >= d.cpus && f.mem >= d.mem && partitionOf(f.n, j.Partition) && !excludes(ex, f.n.Name)
	}
	for c := d.cpus; c < int64(len(s.byFree)) && len(pick) < d.k; c++ {
		for _, f := range s.byFree[c] {
			if len(pick) == d.k {
				break
			}
			// Entries of nodes whose free CPUs changed since are stale.
			if !f.idle && f.cpus == c && fits(f) && !slices.Contains(pick, f) {
				pick = append(pick, f)
			}
		}
	}
	for s.idleFrom < len(s.idleNodes) && !s.idleNodes[s.idleFrom].idle {
		s.idleFrom++
	}
	idleUsed := 0
	for _, f := range s.idleNodes[s.idleFrom:] {
		if len(pick) == d.k || s.idleLeft-idleUsed-s.wholeNeed <= 0 {
			break
		}
		if f.idle && fits(f) {
			pick = append(pick, f)
			idleUsed++
		}
	}
	return pick
}

// placeWhole solves the whole-node window of the jobs kept on the nodes
// still idle and adds their starts (a placement the job's partition,
// exclusions or size refuse waits for the next cycle) and deferrals.
func placeWhole(ctx context.Context, st *State, topo *model.Topology, nodes []*free, whole []wholeJob, opt Options, p *Plan) error {
	var idle []*free
	for _, f := range nodes {
		if f.idle {
			idle = append(idle, f)
		}
	}
	w := &model.Window{Time: st.Now, Topology: topo, Cost: model.DefaultCostModel}
	for _, f := range idle {
		w.Idle = append(w.Idle, f.leaf)
	}
	slices.Sort(w.Idle)
	for _, wj := range whole {
		w.Jobs = append(w.Jobs, model.Job{ID: wj.j.IDString(), Nodes: wj.d.k, Walltime: min(wj.d.wall, model.MaxTime/2),
			Submit: min(wj.j.SubmitTime, st.Now), Queue: wj.j.Partition, Comm: true})
	}
	res, err := solveWindow(ctx, w, opt, p)
	if err != nil {
		return err
	}
	byID := map[int]*free{}
	for _, f := range idle {
		byID[f.leaf] = f
	}
	for _, a := range res.Allocations {
		wj := whole[a.Job]
		s := &Start{Job: wj.j.IDString(), Path: PathWhole, CPUsPerNode: wj.d.cpus, MemPerNode: wj.d.mem}
		ok := true
		for _, id := range a.Nodes {
			f := byID[id]
			if f == nil || !partitionOf(f.n, wj.j.Partition) || excluded(wj.j, f.n.Name) || f.n.CPUs < wj.d.cpus || f.n.RealMemory < wj.d.mem {
				ok = false
			}
		}
		if !ok {
			p.Deferred = append(p.Deferred, Reason{s.Job, "the window solve placed it on a node of another partition, an excluded node or one too small; it waits for the next cycle"})
			continue
		}
		for _, id := range a.Nodes {
			f := byID[id]
			s.Nodes = append(s.Nodes, f.n.Name)
			if wj.j.Exclusive() {
				s.CPUsPerNode, s.MemPerNode = f.n.CPUs, f.n.RealMemory
			}
		}
		p.Starts = append(p.Starts, s)
	}
	for _, df := range res.Deferred {
		p.Deferred = append(p.Deferred, Reason{whole[df.Job].j.IDString(), "whole-node window: " + df.Reason})
	}
	return nil
}

// solveWindow solves the whole-node window with the configured solver
// and, when it fails or places nothing, with Slurm's tree best fit.
func solveWindow(ctx context.Context, w *model.Window, opt Options, p *Plan) (*solver.WindowResult, error) {
	var tries []solver.Solver
	if opt.Solver != nil {
		tries = append(tries, opt.Solver)
	}
	tries = append(tries, heuristics.Slurm{})
	var failures []error
	for _, s := range tries {
		res, err := solver.SolveWindow(ctx, w, s, solver.Options{TimeLimit: opt.TimeLimit})
		switch {
		case err != nil:
			failures = append(failures, fmt.Errorf("%s: %w", s.Name(), err))
			continue
		case res.Status == solver.Unknown || res.Status == solver.Infeasible:
			failures = append(failures, fmt.Errorf("%s: %s, no allocation", s.Name(), res.Status))
			continue
		}
		if len(failures) > 0 {
			p.Notes = append(p.Notes, fmt.Sprintf("window solver failed (%v); %s placed the whole-node jobs", errors.Join(failures...), s.Name()))
		}
		p.Solver = s.Name()
		// Among placements of equal CH cost, the fullest switches: the
		// empty ones stay whole for later jobs (each job's cost, and so
		// the objective, unchanged).
		heuristics.BestFitMulti(w, res.Allocations)
		heuristics.BestFitSingles(w, res.Allocations)
		obj := w.Cost.TotalCost(w.Topology, res.Allocations)
		p.Objective = &obj
		return res, nil
	}
	return nil, fmt.Errorf("whole-node window: every solver failed: %w", errors.Join(failures...))
}

// Tree returns the switch tree of the state: its Topology text parsed
// (model/slurm.ParseTopology), or one switch over every node when it has
// none.
func (st *State) Tree() (*model.Topology, error) { return topologyOf(st) }

// topologyOf builds the topology of the state: its topology.conf, or one
// switch over every node.
func topologyOf(st *State) (*model.Topology, error) {
	if strings.TrimSpace(st.Topology) != "" {
		t, err := slurm.ParseTopology(st.Topology)
		if err != nil {
			return nil, fmt.Errorf("topology: %w", err)
		}
		return t, nil
	}
	names := make([]string, len(st.Nodes))
	for i, n := range st.Nodes {
		names[i] = n.Name
	}
	if len(names) == 0 {
		return nil, errors.New("sinfo --json: no nodes")
	}
	return model.BuildTopology([]model.SwitchSpec{{Name: "all", Nodes: names}})
}

// partitionOf reports whether node n is in partition p.
func partitionOf(n *Node, p string) bool { return slices.Contains(n.Partitions, p) }

// excluded reports whether job j excludes node name (--exclude).
func excluded(j *Job, name string) bool {
	ex, err := expand(j.ExcludedNodes)
	return err == nil && slices.Contains(ex, name)
}

// excludes reports whether the expanded exclusion list ex holds name.
func excludes(ex []string, name string) bool { return len(ex) > 0 && slices.Contains(ex, name) }

// neverFits says why job j could not run on the scope's nodes even were
// they all free and up ("" when it could).
func neverFits(st *State, sc *Scope, j *Job, d demand) string {
	ex, _ := expand(j.ExcludedNodes)
	n := 0
	for i := range st.Nodes {
		nd := &st.Nodes[i]
		if nd.CPUs >= d.cpus && nd.RealMemory >= d.mem && sc.ownsNode(nd.Name) && partitionOf(nd, j.Partition) && !excludes(ex, nd.Name) {
			if n++; n >= d.k {
				return ""
			}
		}
	}
	if n < d.k {
		return fmt.Sprintf("needs %d node(s) of partition %s with %d CPUs and %d MB each; there are %d", d.k, j.Partition, d.cpus, d.mem, n)
	}
	return ""
}
