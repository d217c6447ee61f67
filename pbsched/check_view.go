package pbsched

import (
	"fmt"
	"slices"
	"strings"

	"github.com/optsched/optsched/model/pbs"
	"github.com/optsched/optsched/sched"
)

// view derives sched's view of Check and Recheck from the raw documents
// alone: every vnode of pbsnodes with its capacities (resources_available
// of the consumable resources some owned vnode has, mpiprocs and
// ompthreads aside), what is in use there (resources_assigned, or what
// the running jobs' exec_vnode names there when pbsnodes lags, whichever
// is larger), whether it runs anything, its state unless "free", whether
// it is optsched's and its queue; and every job the starts name that
// qstat has, with why it may not start, its select units as chunks (one
// CPU for a unit without ncpus), whether it takes its vnodes whole (a
// whole-node start) or some of them by their sharing and its place.
func (in *checkInput) view() *sched.View {
	v := &sched.View{Nodes: make([]sched.Node, len(in.st.Nodes.Nodes))}
	for i := range in.st.Nodes.Nodes {
		n := &in.st.Nodes.Nodes[i]
		capacity, inUse := sched.Resources{}, sched.Resources{}
		for k := range in.known {
			if !in.counted(k) {
				continue
			}
			capacity[k] = n.Available[k]
			inUse[k] = max(n.Assigned[k], in.inExec[n.Name][k])
		}
		busy := len(n.Jobs) > 0 || in.named[n.Name]
		for _, a := range n.Assigned {
			busy = busy || a != 0
		}
		down := ""
		if s := strings.Join(n.State, ","); s != "free" {
			down = s
		}
		v.Nodes[i] = sched.Node{Name: n.Name, Capacity: capacity, InUse: inUse, Busy: busy, Down: down,
			Foreign: in.scope.Owned != nil && !in.scope.Owned[n.Name]}
		if n.Queue != "" {
			v.Nodes[i].Pools = []string{n.Queue}
		} else {
			v.Nodes[i].AnyPool = true
		}
	}
	at := map[string]int{}
	for _, s := range in.p.Starts {
		if _, ok := at[s.Job]; ok || in.jobs[s.Job] == nil {
			continue
		}
		at[s.Job] = len(v.Jobs)
		v.Jobs = append(v.Jobs, in.viewJob(in.jobs[s.Job]))
	}
	for _, s := range in.p.Starts {
		i, ok := at[s.Job]
		if !ok {
			continue
		}
		vj := &v.Jobs[i]
		vj.Whole = vj.Whole || s.Path == PathWhole
		j := in.jobs[s.Job]
		for _, c := range s.Chunks {
			if n := in.nodes[c.Vnode]; n != nil && exclusiveBy(n.Sharing, j.Place.Sharing) {
				vj.WholeOn[c.Vnode] = true
			}
		}
	}
	return v
}

// counted says whether resource k is a capacity of the view.
func (in *checkInput) counted(k string) bool {
	return in.consumable[k] && k != "mpiprocs" && k != "ompthreads"
}

// viewJob is job j as the view has it.
func (in *checkInput) viewJob(j *pbs.Job) sched.Job {
	var blocked []string
	switch {
	case j.State != "Q":
		blocked = append(blocked, fmt.Sprintf("job %s: state %s, not queued", j.ID, j.State))
	case j.Array || strings.Contains(j.ID, "[]"):
		blocked = append(blocked, fmt.Sprintf("job %s: a job array", j.ID))
	case in.scope.ExecQueues != nil && !in.scope.ExecQueues[j.Queue]:
		blocked = append(blocked, fmt.Sprintf("job %s: queue %s is not in --exec-queues", j.ID, j.Queue))
	}
	if in.st.Queues != nil {
		q, ok := in.st.Queues.Lookup(j.Queue)
		if !ok || !q.Execution() || !q.Started {
			blocked = append(blocked, fmt.Sprintf("job %s: queue %s is not a started execution queue", j.ID, j.Queue))
		}
	}
	vj := sched.Job{ID: j.ID, Blocked: strings.Join(blocked, "; "), Pool: j.Queue, Stack: true, WholeOn: map[string]bool{}}
	for _, u := range in.units(j) {
		r := sched.Resources{}
		for k, a := range u.Amounts {
			if in.counted(k) && in.known[k] {
				r[k] = a
			}
		}
		if _, ok := u.Amounts["ncpus"]; !ok && in.known["ncpus"] {
			r["ncpus"]++
		}
		vj.Chunks = append(vj.Chunks, r)
	}
	return vj
}

// exclusiveBy says whether a chunk of a job whose place has sharing
// jobSharing holds a vnode of sharing nodeSharing whole.
func exclusiveBy(nodeSharing, jobSharing string) bool {
	switch nodeSharing {
	case "force_excl", "force_exclhost":
		return true
	case "default_excl", "default_exclhost":
		return jobSharing != "shared"
	case "ignore_excl":
		return false
	}
	return jobSharing == "excl" || jobSharing == "exclhost"
}

// corePlan is the plan's starts as sched's: the vnode of each chunk.
func (in *checkInput) corePlan() sched.Plan {
	p := sched.Plan{Starts: make([]sched.Start, len(in.p.Starts))}
	for i, s := range in.p.Starts {
		p.Starts[i] = sched.Start{Job: s.Job, Nodes: chunkVnodes(s.Chunks), Spec: s.ExecVnode()}
	}
	return p
}

// words is a violation in PBS's terms, prefixed with the name of the
// rule of CheckRules it belongs to.
func (in *checkInput) words(x sched.Violation) error {
	switch x.Kind {
	case sched.NoJob:
		return fmt.Errorf("job: job %s: not in qstat", x.Job)
	case sched.Twice:
		return fmt.Errorf("job: job %s: started twice in one cycle", x.Job)
	case sched.Blocked:
		return fmt.Errorf("job: %s", x.Text)
	case sched.ChunkCount:
		return fmt.Errorf("chunks: job %s: %d vnode chunks for %d select units", x.Job, x.Got, x.Want)
	case sched.NoNode:
		return fmt.Errorf("vnode: job %s: vnode %s is not in pbsnodes", x.Job, x.Node)
	case sched.Foreign:
		return fmt.Errorf("vnode: job %s: vnode %s is not optsched's (--nodes)", x.Job, x.Node)
	case sched.NotInPool:
		return fmt.Errorf("vnode: job %s: vnode %s belongs to queue %s", x.Job, x.Node, in.nodes[x.Node].Queue)
	case sched.Down:
		return fmt.Errorf("vnode: job %s: vnode %s is %s, not free", x.Job, x.Node, x.Text)
	case sched.Over:
		return fmt.Errorf("capacity: vnode %s: %s: %d in use and planned (at job %s) > %d available", x.Node, x.Resource, x.Got, x.Job, x.Want)
	case sched.NotWhole:
		return in.notWhole(x)
	}
	return fmt.Errorf("job %s: rule %d broken on vnode %s", x.Job, x.Kind, x.Node)
}

// notWhole words a NotWhole violation: which job holds the vnode whole,
// and what else is there.
func (in *checkInput) notWhole(x sched.Violation) error {
	var users []string
	holder := ""
	for _, s := range in.p.Starts {
		if !slices.Contains(chunkVnodes(s.Chunks), x.Node) {
			continue
		}
		if !slices.Contains(users, s.Job) {
			users = append(users, s.Job)
		}
		j := in.jobs[s.Job]
		if holder == "" && (s.Path == PathWhole || j != nil && exclusiveBy(in.nodes[x.Node].Sharing, j.Place.Sharing)) {
			holder = s.Job
		}
	}
	if len(users) > 1 {
		return fmt.Errorf("whole: vnode %s: held whole by job %s but also given to %v", x.Node, holder, users)
	}
	return fmt.Errorf("whole: vnode %s: held whole by job %s but it runs jobs %v or has resources assigned", x.Node, holder, in.nodes[x.Node].Jobs)
}
