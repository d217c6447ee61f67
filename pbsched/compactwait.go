package pbsched

import (
	"slices"
	"strings"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model/pbs"
)

// compactWait asks the compact-or-wait rule (heuristics.DecideCompactWait)
// about cand, a whole-node job of several vnodes that fits now by count:
// whether it is to wait for one switch rather than be spread. free says
// which vnodes are idle and untaken now; claims are the named claims of
// the starts before it. It returns the decision and the names of the
// switch's vnodes when the job waits. A job does not wait when the
// whole-node jobs before it (need vnodes, anywhere) would then have too
// few idle vnodes outside the switch (idleLeft counts the idle vnodes
// left). taken are the vnodes the rule counts as taken by the jobs
// before cand (CompactWait.Many): neither free for it nor known to
// empty.
func (c *cluster) compactWait(cw heuristics.CompactWait, cand *candidate, fit *fitState, claims []claim, need, idleLeft int, taken map[string]bool) (heuristics.CompactDecision, []string) {
	in := heuristics.CompactInput{Topo: c.topo, Now: c.st.Now, Submit: cand.submit, Walltime: cand.walltime, Nodes: len(cand.units),
		Free: make([]bool, c.topo.NumNodes()), EmptyAt: make([]int64, c.topo.NumNodes())}
	for i := range in.EmptyAt {
		in.EmptyAt[i] = heuristics.CompactNever
	}
	times := c.emptyTimes(claims)
	// With cw.Elapsed, a vnode whose last end is a running job's is empty
	// when the latest of its running jobs' predicted ends comes.
	predicted := map[string]int64{}
	running := map[string]bool{}
	if cw.Elapsed > 0 {
		for i := range c.st.Jobs.Jobs {
			j := &c.st.Jobs.Jobs[i]
			if len(j.ExecVnode) == 0 {
				continue
			}
			running[j.ID] = true
			p := cw.PredictEnd(c.st.Now, j.STime, c.runningEnd(j))
			for _, name := range pbs.Vnodes(j.ExecVnode) {
				predicted[name] = max(predicted[name], p)
			}
		}
	}
	for _, v := range c.vnodes {
		if taken[v.n.Name] {
			continue // CompactNever
		}
		in.Free[v.id] = fit.idleNow(v)
		if e, ok := times[v.n.Name]; ok && !in.Free[v.id] {
			in.EmptyAt[v.id] = e.t
			if p, ok := predicted[v.n.Name]; ok && running[e.by] {
				in.EmptyAt[v.id] = min(e.t, p)
			}
		} else if in.Free[v.id] {
			in.EmptyAt[v.id] = c.st.Now
		}
	}
	d := heuristics.DecideCompactWait(cw, in)
	if !d.Wait {
		return d, nil
	}
	var names []string
	hold := 0
	for _, id := range d.Nodes {
		names = append(names, c.topo.Name(id))
		if in.Free[id] {
			hold++
		}
	}
	if need > idleLeft-hold {
		d.Wait = false
		d.Reason = "the jobs before it need the idle vnodes of switch " + c.topo.Switch(d.Switch).Name + ": spread across switches"
		return d, nil
	}
	return d, names
}

// namedClaims are the claims that name their vnodes (the anonymous ones,
// whole-node jobs the window places later, are left out: the window does
// not use a switch a job waits for).
func namedClaims(cl []claim) []claim {
	return slices.DeleteFunc(cl, func(c claim) bool { return len(c.nodes) == 0 })
}

// withinSet splits a Reservation's Within list.
func withinSet(within string) map[string]bool {
	if within == "" {
		return nil
	}
	set := map[string]bool{}
	for _, n := range strings.Split(within, ",") {
		set[n] = true
	}
	return set
}
