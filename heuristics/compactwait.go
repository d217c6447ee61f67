package heuristics

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/optsched/optsched/model"
)

// CompactWait bounds the compact-or-wait rule (DecideCompactWait): how
// long a multi-node job may be held back for a placement within one
// switch before it is spread as it would be without the rule.
//
// The bound of a job is min(Max, Fraction × its requested walltime),
// counted from its submission (or, with PerWait, Max from its submission
// and Fraction × walltime for each predicted wait); Max 0 turns the rule
// off. The rule is the
// bounded form of what PBS's placement sets (pbs_sched waits until one
// group has room) and Slurm's --switches=N@max-time (max_switch_wait) do.
type CompactWait struct {
	// Max caps the wait; 0 turns the rule off.
	Max time.Duration
	// Fraction of the job's requested walltime it may wait at most; 0 or
	// less means DefaultCompactFraction.
	Fraction float64
	// MinNodes is the smallest job the rule holds back (jobs of fewer
	// nodes are placed at once); below 2, DefaultCompactMinNodes.
	MinNodes int
	// SwitchNodes, when above a job's node count, makes the job wait for
	// the smallest switches holding SwitchNodes nodes instead of its own
	// count: with 4 on a tree of pairs in quads, a 2-node job waits for
	// a quad (CH cost 1,500 at most) rather than a pair, and fits now
	// whenever one quad has 2 free nodes.
	SwitchNodes int
	// Elapsed, when above 0, predicts each running job's end from how
	// long it has run instead of its walltime alone: now + Elapsed ×
	// its elapsed time (1 s at least), no later than its walltime's end
	// (PredictEnd). Requested walltimes overstate run times several
	// times on the archive logs, and a job that has run e seconds is
	// about as likely to run e more as to end before (the past predicts
	// the remaining life of heavy-tailed run times); the callers apply
	// it to running jobs, not to the starts of the cycle.
	Elapsed float64
	// PerWait: Fraction bounds each wait the rule predicts (the
	// switch's time less now at most Fraction × walltime), and Max alone
	// the wait since submission; otherwise min(Max, Fraction × walltime)
	// bounds the wait since submission.
	PerWait bool
	// Blind: the job waits out its bound whatever the running jobs'
	// expected ends, as placement sets (pbs_sched waits until one group
	// has room) and Slurm's --switches=N@max-time do; it still names the
	// switch that empties soonest. Requested walltimes overstate run
	// times, so the ends they predict are late, and without Blind the
	// rule often finds the wait too long to start.
	Blind bool
	// Many: every job the rule holds back waits, not just the first of
	// a cycle. Without it the first such job of a cycle (in priority
	// order) waits and holds its switch's idle nodes, and each later one
	// that fits now only across switches is spread; with it, each later
	// one waits too, holding the idle nodes of its own switch that no
	// earlier waiter holds (it gets no reservation of its own), and each
	// job the rule lets start because it fits now within a switch counts
	// its nodes there (CompactDecision.FitNodes) as taken for the later
	// jobs' decisions, so that two jobs do not both count on the same
	// free nodes of one switch — as under placement sets, where each job
	// in turn goes to a set or waits for one. The callers apply it;
	// DecideCompactWait does not read it.
	Many bool
	// Leaves, when not LeavesOff, holds back a job larger than every
	// switch short of the whole tree too (the rule otherwise leaves
	// such a job alone: no one switch can hold it), for a shape on the
	// leaf switches (LeafShape), within the same bounds. Only the leaf
	// level is counted, which is the whole CH cost on a tree of leaves
	// under one root (Slurm's test cluster); on a taller tree the
	// levels above are not looked at by LeavesFewest and LeavesBest (a
	// job that waits so costs O(T × S log S) per decision, T the
	// distinct empty times and S the switches), and are by LeavesTree
	// and LeavesTop (O(T × N × k), N the nodes, k the job's).
	Leaves LeafShape
	// LeavesFraction, when above 0, bounds the wait of a job that only
	// Leaves holds (no switch short of the whole tree can hold it) by
	// its own walltime too: it waits for its shape only while the
	// predicted wait (the shape's empty time less now) is at most
	// LeavesFraction × its requested walltime, on top of the other
	// bounds, whatever the mode (Blind too), so that long jobs wait for
	// their shape and short ones start spread. A job of unknown
	// walltime (0) is not bounded by it. 0 (the default) leaves the
	// lever as it was; the one-switch wait is never affected.
	LeavesFraction float64
}

// A LeafShape is what a job larger than every switch short of the
// whole tree waits for under CompactWait.Leaves. With leaves of L nodes
// and a job of k, the least-cost shape is ⌊k/L⌋ whole leaves and k mod L
// nodes of one more (CH cost 5,166 for 6 nodes on leaves of 4, against
// 5,500 as 3 + 3); generally, the job's nodes taken leaf by leaf, the
// leaves with the most nodes usable by the job first.
type LeafShape int

// The leaf shapes.
const (
	// LeavesOff: jobs larger than every switch short of the whole tree
	// are placed at once, as before.
	LeavesOff LeafShape = iota
	// LeavesFewest: the job waits until it fits on as few leaves as its
	// least-cost shape uses (an 8-node job on two leaves of 4, a 6-node
	// job on two leaves, 3 + 3 or 4 + 2).
	LeavesFewest
	// LeavesBest: the job waits until its least-cost shape is free (a
	// 6-node job for one whole leaf and 2 nodes of another): the same
	// count of node pairs within a leaf.
	LeavesBest
	// LeavesTree: the job waits until the free nodes give it its least
	// CH cost on the whole tree, every level counted (on pairs in quads,
	// a 6-vnode job on a whole quad and a pair of another; a 10-vnode
	// job on two whole quads and a pair), not the leaves alone.
	LeavesTree
	// LeavesTop: as LeavesTree, counting only the switches right under
	// the top one (the quads of pairs in quads: whole quads, the rest in
	// one more quad, however it falls on the pairs).
	LeavesTop
	// LeavesBestFewest: LeavesBest when the least-cost shape fits now or
	// is predicted empty within the job's bounds (LeavesFraction too),
	// else LeavesFewest (a 5-node job on leaves of 4 waits for 4 + 1
	// only when that comes soon enough, else for any two leaves). Under
	// the blind mode it is LeavesBest.
	LeavesBestFewest
)

// String names the shape as --compact-wait-leaves does.
func (s LeafShape) String() string {
	switch s {
	case LeavesOff:
		return "off"
	case LeavesFewest:
		return "fewest"
	case LeavesBest:
		return "best"
	case LeavesTree:
		return "tree"
	case LeavesTop:
		return "top"
	case LeavesBestFewest:
		return "best-fewest"
	}
	return fmt.Sprintf("LeafShape(%d)", int(s))
}

// ParseLeafShape parses "off", "fewest", "best", "tree", "top" or
// "best-fewest".
func ParseLeafShape(s string) (LeafShape, error) {
	for _, v := range []LeafShape{LeavesOff, LeavesFewest, LeavesBest, LeavesTree, LeavesTop, LeavesBestFewest} {
		if s == v.String() {
			return v, nil
		}
	}
	return 0, fmt.Errorf("unknown leaf shape %q (want off, fewest, best, tree, top or best-fewest)", s)
}

// Defaults of CompactWait.
const (
	// DefaultCompactFraction: a job waits for one switch at most its
	// requested walltime (the offline replays of bench/compactsim, on
	// slices that are not the judged ones, gave 1 the lowest CH cost
	// without a higher one on any slice; 0.5 rarely fired, since the
	// running jobs' walltimes put their ends late).
	DefaultCompactFraction = 1.0
	// DefaultCompactMinNodes: jobs of 3 nodes or more are held back
	// (the measured CH loss against placement sets was in jobs of 3 and
	// 4 vnodes; a 2-node job on a tree of pairs would wait for a pair).
	DefaultCompactMinNodes = 3
)

// leavesBound is the latest time the shape of a job held by Leaves alone
// may be predicted empty under LeavesFraction (CompactNever when it does
// not apply).
func (cw CompactWait) leavesBound(now, walltime int64) int64 {
	if cw.LeavesFraction <= 0 || walltime <= 0 {
		return CompactNever
	}
	return now + int64(math.Floor(cw.LeavesFraction*float64(walltime)))
}

// On reports whether the rule is on.
func (cw CompactWait) On() bool { return cw.Max > 0 }

// Bound returns the wait bound, in seconds, of a job of the given
// requested walltime (seconds): min(Max, Fraction × walltime), 0 when
// the rule is off.
func (cw CompactWait) Bound(walltime int64) int64 {
	if !cw.On() {
		return 0
	}
	f := cw.Fraction
	if f <= 0 {
		f = DefaultCompactFraction
	}
	b := int64(cw.Max / time.Second)
	if walltime > 0 {
		b = min(b, int64(math.Floor(f*float64(walltime))))
	}
	return max(b, 0)
}

// PredictEnd is the end the rule expects of a job running since start
// whose walltime ends at end: end itself when Elapsed is 0 or the start
// is unknown (0 or after now), else min(end, now + max(1, Elapsed ×
// (now − start))).
func (cw CompactWait) PredictEnd(now, start, end int64) int64 {
	if cw.Elapsed <= 0 || start <= 0 || start > now {
		return end
	}
	return min(end, now+max(1, int64(math.Ceil(cw.Elapsed*float64(now-start)))))
}

func (cw CompactWait) minNodes() int {
	if cw.MinNodes < 2 {
		return DefaultCompactMinNodes
	}
	return cw.MinNodes
}

// CompactNever stands, in CompactInput.EmptyAt, for a node whose empty
// time is not known (down, offline, busy with no end).
const CompactNever = math.MaxInt64

// CompactInput is what DecideCompactWait reads of one job and the
// cluster.
type CompactInput struct {
	Topo *model.Topology
	// Now is the cycle's time; Submit the job's submission (Unix
	// seconds); Walltime its requested walltime (seconds).
	Now, Submit, Walltime int64
	// Nodes is how many whole nodes the job needs.
	Nodes int
	// Free[id] reports whether node id may be given to the job now (idle,
	// usable, not taken by the jobs before it). Nodes past its end are
	// not free.
	Free []bool
	// EmptyAt[id] is when node id will be empty by the running jobs'
	// expected ends (walltime or time limit based; Now for a free node),
	// CompactNever when unknown or never. Nodes past its end never are.
	EmptyAt []int64
}

// CompactDecision is the rule's answer for one job.
type CompactDecision struct {
	// Wait is true when the job is to be deferred this cycle.
	Wait bool
	// Switch is the switch it waits for (-1 when it does not wait),
	// Nodes its nodes (ids, in order), At when Nodes of them will be
	// empty, Extra how many more of them are empty by At.
	Switch int
	Nodes  []int
	At     int64
	Extra  int
	// Fit is, when the job fits now within one switch that can hold it,
	// the one of the fewest free nodes (then the lowest index), and
	// FitNodes its first Nodes free nodes; -1 and nil otherwise. Callers
	// with CompactWait.Many count FitNodes as taken for the later jobs
	// of the cycle.
	Fit      int
	FitNodes []int
	// Bound is the job's wait bound (s); Waited how long it has waited.
	Bound, Waited int64
	// Reason says why it waits, or why the rule let it be placed.
	Reason string
}

// CompactSwitches are the switches a job of k nodes can wait for: the
// smallest switches holding k nodes or more (none of whose child
// switches does), short of one holding every node of the topology
// (waiting for it is waiting to fit at all).
func CompactSwitches(t *model.Topology, k int) []int {
	return compactSwitches(t, k, switchSizes(t))
}

func compactSwitches(t *model.Topology, k int, size []int) []int {
	var out []int
	for i := range t.NumSwitches() {
		if size[i] < k || size[i] >= t.NumNodes() {
			continue
		}
		minimal := true
		for _, ch := range t.Switch(i).Switches {
			minimal = minimal && size[ch] < k
		}
		if minimal {
			out = append(out, i)
		}
	}
	return out
}

// switchSizes counts the nodes under each switch.
func switchSizes(t *model.Topology) []int {
	size := make([]int, t.NumSwitches())
	for id := range t.NumNodes() {
		for _, s := range t.Ancestors(id) {
			size[s]++
		}
	}
	return size
}

// nodesUnder lists the node ids under each of the switches sws, in one
// pass over the nodes.
func nodesUnder(t *model.Topology, sws []int) map[int][]int {
	want := make(map[int32]bool, len(sws))
	for _, s := range sws {
		want[int32(s)] = true
	}
	out := make(map[int][]int, len(sws))
	for id := range t.NumNodes() {
		for _, a := range t.Ancestors(id) {
			if want[a] {
				out[int(a)] = append(out[int(a)], id)
			}
		}
	}
	return out
}

// DecideCompactWait is the compact-or-wait rule for one multi-node job
// that fits now (the caller has checked that enough nodes are free): it
// waits when all of these hold —
//
//   - the rule is on, and the job has at least MinNodes nodes;
//   - some switch could hold it (CompactSwitches), yet no such switch
//     has Nodes free nodes now (no one-switch placement exists now);
//   - it has waited less than its bound W (Bound; Max with PerWait);
//   - some such switch will have Nodes empty nodes, by EmptyAt, no later
//     than Submit + W — within what is left of the bound — and, with
//     PerWait, no later than Now + Fraction × Walltime.
//
// It then names the switch that is empty soonest (ties: more nodes empty
// by then, then the lower index). Otherwise the job is placed as without
// the rule. A job that no switch short of the whole tree holds is placed
// at once, unless cw.Leaves is on: it then waits, within the same bounds,
// for its shape on the leaf switches (LeafShape). The function is pure: it reads only its arguments.
func DecideCompactWait(cw CompactWait, in CompactInput) CompactDecision {
	d := CompactDecision{Switch: -1, Fit: -1, Waited: max(in.Now-in.Submit, 0)}
	switch {
	case !cw.On():
		d.Reason = "the compact wait is off"
		return d
	case in.Nodes < cw.minNodes():
		d.Reason = fmt.Sprintf("jobs of fewer than %d nodes do not wait for one switch", cw.minNodes())
		return d
	case in.Topo == nil:
		d.Reason = "no topology"
		return d
	}
	d.Bound = cw.Bound(in.Walltime)
	limit := in.Submit + d.Bound
	if cw.PerWait {
		d.Bound = int64(cw.Max / time.Second)
		limit = min(in.Submit+d.Bound, in.Now+cw.Bound(in.Walltime))
	}
	sws := CompactSwitches(in.Topo, max(in.Nodes, cw.SwitchNodes))
	if len(sws) == 0 && (cw.Leaves == LeavesTree || cw.Leaves == LeavesTop) {
		return decideTree(cw, in, d, limit)
	}
	if len(sws) == 0 && cw.Leaves != LeavesOff {
		return decideLeaves(cw, in, d, limit)
	}
	if len(sws) == 0 {
		d.Reason = fmt.Sprintf("no switch short of the whole cluster holds %d nodes", in.Nodes)
		return d
	}
	free := func(id int) bool { return id < len(in.Free) && in.Free[id] }
	empty := func(id int) int64 {
		if id < len(in.EmptyAt) {
			return in.EmptyAt[id]
		}
		return CompactNever
	}
	type cand struct {
		s, freeNow, extra int
		at                int64
		nodes             []int
	}
	var best, fit *cand
	under := nodesUnder(in.Topo, sws)
	for _, s := range sws {
		nodes := under[s]
		c := cand{s: s, nodes: nodes}
		times := make([]int64, 0, len(nodes))
		for _, id := range nodes {
			if free(id) {
				c.freeNow++
			}
			times = append(times, empty(id))
		}
		if c.freeNow >= in.Nodes {
			// Fits now: the switch of the fewest free nodes that holds
			// it (best fit, as placement sets and Slurm's tree take).
			if fit == nil || c.freeNow < fit.freeNow {
				fit = &c
			}
			continue
		}
		slices.Sort(times)
		c.at = times[in.Nodes-1]
		for _, t := range times[in.Nodes:] {
			if t <= c.at {
				c.extra++
			}
		}
		if c.at == CompactNever {
			continue
		}
		if best == nil || c.at < best.at || c.at == best.at && c.extra > best.extra {
			best = &c
		}
	}
	if fit != nil {
		d.Fit = fit.s
		for _, id := range fit.nodes {
			if free(id) && len(d.FitNodes) < in.Nodes {
				d.FitNodes = append(d.FitNodes, id)
			}
		}
		d.Reason = fmt.Sprintf("fits now within switch %s", in.Topo.Switch(fit.s).Name)
		return d
	}
	switch {
	case d.Waited >= d.Bound:
		d.Reason = fmt.Sprintf("has waited %s, its compact-wait bound %s: spread across switches", secs(d.Waited), secs(d.Bound))
		return d
	case best == nil:
		d.Reason = fmt.Sprintf("no switch will ever have %d empty nodes by the running jobs' ends: spread across switches", in.Nodes)
		return d
	case best.at > limit && !cw.Blind:
		d.Reason = fmt.Sprintf("the soonest switch with %d empty nodes (%s, in %s) comes after its compact-wait bound %s: spread across switches",
			in.Nodes, in.Topo.Switch(best.s).Name, secs(best.at-in.Now), secs(d.Bound))
		return d
	}
	d.Wait, d.Switch, d.Nodes, d.At, d.Extra = true, best.s, best.nodes, best.at, best.extra
	d.Reason = fmt.Sprintf("waiting up to %s more (compact-wait bound %s, waited %s) for a one-switch placement: no switch that can hold its %d nodes has them free now; switch %s (%d nodes) will have them empty in %s by the running jobs' %s",
		secs(max(limit-in.Now, 0)), secs(d.Bound), secs(d.Waited), in.Nodes, in.Topo.Switch(best.s).Name, len(best.nodes), secs(max(best.at-in.Now, 0)), cw.basis())
	if best.at > limit {
		d.Reason += ", after the bound (--compact-wait-mode blind: it waits out its bound all the same)"
	}
	return d
}

// basis names what the rule predicted the running jobs' ends from.
func (cw CompactWait) basis() string {
	if cw.Elapsed > 0 {
		return fmt.Sprintf("elapsed times (%g × elapsed, walltime at most)", cw.Elapsed)
	}
	return "walltimes"
}

func secs(s int64) string { return (time.Duration(s) * time.Second).String() }
