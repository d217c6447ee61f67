package slurmsched

import (
	"strings"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
)

// compactWait asks the compact-or-wait rule (heuristics.DecideCompactWait)
// about j, a whole-node job of d.k nodes that fits now by count. nodes
// are the usable owned nodes (idle: free to give whole now), sc the
// scope; starts the
// starts planned so far this cycle. When each node will be empty comes
// from the running jobs' ends (end_time: what their time limit allows;
// now + 1 once past), the jobs optsched released that Slurm has not
// started yet (now + their time limit), and the starts (now + theirs). A
// node with CPUs or memory allocated that none of them names has no known
// time; nor has, for this job, a node of another partition, excluded or
// too small, or counted on by a job before it (taken, CompactWait.Many). It returns the decision and, when the job waits, the idle nodes
// of the switch it waits for (the caller holds them for the cycle).
func compactWait(cw heuristics.CompactWait, st *State, sc *Scope, topo *model.Topology, nodes []*free, starts []*Start, j *Job, d demand, maxCPUs, defWall int64, taken map[int]bool) (heuristics.CompactDecision, []*free) {
	now := st.Now
	end := map[string]int64{}
	later := func(names []string, t int64) {
		for _, n := range names {
			end[n] = max(end[n], t)
		}
	}
	walls := map[string]int64{}
	for i := range st.Jobs {
		job := &st.Jobs[i]
		switch {
		case job.State == "RUNNING" || job.State == "COMPLETING" || job.State == "SUSPENDED":
			names, err := expand(job.Nodes)
			if err != nil {
				continue
			}
			t := job.EndTime
			if job.State == "SUSPENDED" || t <= 0 {
				t = heuristics.CompactNever
			} else {
				t = cw.PredictEnd(now, job.StartTime, t)
			}
			later(names, max(t, now+1))
		case InFlight(job):
			names, err := expand(job.RequiredNodes)
			if err != nil {
				continue
			}
			later(names, now+jobDemand(job, maxCPUs, defWall).wall)
		case job.State == "PENDING":
			walls[job.IDString()] = jobDemand(job, maxCPUs, defWall).wall
		}
	}
	for _, s := range starts {
		w, ok := walls[s.Job]
		if !ok {
			w = defWall
		}
		later(s.Nodes, now+w)
	}
	in := heuristics.CompactInput{Topo: topo, Now: now, Submit: j.SubmitTime, Walltime: d.wall, Nodes: d.k,
		Free: make([]bool, topo.NumNodes()), EmptyAt: make([]int64, topo.NumNodes())}
	for i := range in.EmptyAt {
		in.EmptyAt[i] = heuristics.CompactNever
	}
	byID := map[int]*free{}
	for _, f := range nodes {
		byID[f.leaf] = f
	}
	ex, _ := expand(j.ExcludedNodes)
	for i := range st.Nodes {
		n := &st.Nodes[i]
		id, ok := topo.Lookup(n.Name)
		if !ok || taken[id] || !sc.ownsNode(n.Name) || !partitionOf(n, j.Partition) || excludes(ex, n.Name) || n.CPUs < d.cpus || n.RealMemory < d.mem {
			continue // not the job's: never empty for it
		}
		if f := byID[id]; f != nil && f.idle {
			in.Free[id], in.EmptyAt[id] = true, now
			continue
		}
		// Busy: empty when the jobs named there end, unless it is down,
		// drained or otherwise out of use (no known time).
		state := strings.ToLower(n.State)
		if t, named := end[n.Name]; named && len(n.Flags) == 0 && (state == "idle" || state == "mixed" || state == "allocated" || state == "completing") {
			in.EmptyAt[id] = t
		}
	}
	dec := heuristics.DecideCompactWait(cw, in)
	if !dec.Wait {
		return dec, nil
	}
	var hold []*free
	for _, id := range dec.Nodes {
		if f := byID[id]; f != nil && f.idle {
			hold = append(hold, f)
		}
	}
	return dec, hold
}
