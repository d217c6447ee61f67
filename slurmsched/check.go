package slurmsched

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/optsched/optsched/model/hostlist"
	"github.com/optsched/optsched/sched"
)

// Check verifies plan p against the state it was made from by the rules
// of sched.Check, on a view derived from the raw squeue and sinfo records
// alone (view, below), sharing no code with Decide (N-version checking):
// a plan it rejects must not run.
//
//   - each start names a job of the state, pending, held with priority
//     0 (JobHeldUser or BadConstraints), not an array's pending tasks, in
//     a partition the scope owns; no job starts twice;
//   - its nodes are distinct nodes of the state and of the scope, as many
//     as the job's node count, each in the job's partition, not in its
//     excluded list, idle or mixed with no state flag (not drained,
//     draining, down, reserved, in maintenance);
//   - on every node, the CPUs and memory already allocated plus those of
//     the starts on it stay within the node's CPUs and memory, where a
//     start of n CPUs over k nodes counts ceil(n/k) CPUs (at least the
//     job's minimum per node) on each, and its memory per node, or per
//     CPU times those CPUs; an exclusive start needs a node with nothing
//     allocated and no other start;
//   - a job optsched released that Slurm has not started yet (pending,
//     priority above 0, its AdminComment optsched's mark, a ReqNodeList)
//     counts on its nodes as a start already made.
//
// Its error lists every violation.
func Check(st *State, sc *Scope, p *Plan) error {
	v := view(st, sc, p.Starts)
	var errs []error
	for _, x := range sched.Check(v, corePlan(p.Starts)) {
		errs = append(errs, words(x))
	}
	return errors.Join(errs...)
}

// view derives the scheduler-neutral view of Check and Recheck from the
// raw records: the nodes with their CPUs ("cpus") and memory ("mem", MB),
// the jobs optsched released that Slurm has not started yet (in flight),
// and the jobs the starts name (array tasks included), each with why it
// may not start, if it may not.
func view(st *State, sc *Scope, starts []*Start) *sched.View {
	v := &sched.View{Nodes: make([]sched.Node, len(st.Nodes))}
	// Nodes alike share their (read-only) amounts.
	amounts := map[[2]int64]sched.Resources{}
	res := func(cpus, mem int64) sched.Resources {
		r, ok := amounts[[2]int64{cpus, mem}]
		if !ok {
			r = sched.Resources{"cpus": cpus, "mem": mem}
			amounts[[2]int64{cpus, mem}] = r
		}
		return r
	}
	for i := range st.Nodes {
		n := &st.Nodes[i]
		state := strings.ToUpper(n.State)
		down := ""
		if (state != "IDLE" && state != "MIXED") || len(n.Flags) > 0 {
			down = n.State + flagText(n.Flags)
		}
		v.Nodes[i] = sched.Node{Name: n.Name,
			Capacity: res(n.CPUs, n.RealMemory), InUse: res(n.AllocCPUs, n.AllocMemory),
			Busy: n.AllocCPUs > 0 || n.AllocMemory > 0,
			Down: down, Foreign: len(sc.Nodes) > 0 && !sc.Nodes[n.Name], Pools: n.Partitions}
	}
	// A job optsched placed and released that Slurm has not started yet
	// (pending, priority above 0, AdminComment PlacedMark, a ReqNodeList)
	// will use its nodes, which sinfo does not count yet.
	for i := range st.Jobs {
		j := &st.Jobs[i]
		if j.State != "PENDING" || j.Priority <= 0 || j.AdminComment != PlacedMark || j.RequiredNodes == "" || j.RequiredNodes == "(null)" {
			continue
		}
		names, err := hostlist.Expand(j.RequiredNodes)
		if err != nil {
			continue
		}
		_, cpus, mem := perNode(j)
		for _, name := range names {
			v.InFlight = append(v.InFlight, sched.Alloc{Job: fmt.Sprint(j.ID), Node: name,
				Amounts: sched.Resources{"cpus": cpus, "mem": mem}, Whole: j.Shared != nil && *j.Shared == "none"})
		}
	}
	// The jobs the starts name: a job id names the last record with it;
	// ARRAY_TASK one pending task of an array's record, as Decide names
	// them.
	named := make(map[string]bool, len(starts))
	records := make(map[string]bool, len(starts))
	var ids []string
	for _, s := range starts {
		if !named[s.Job] {
			ids = append(ids, s.Job)
		}
		named[s.Job] = true
		a, _, _ := strings.Cut(s.Job, "_")
		records[s.Job], records[a] = true, true
	}
	byID := map[string]*Job{}
	for i := range st.Jobs {
		if id := strconv.FormatInt(st.Jobs[i].ID, 10); records[id] {
			byID[id] = &st.Jobs[i]
		}
	}
	for _, id := range ids {
		if j := byID[id]; j != nil {
			v.Jobs = append(v.Jobs, viewJob(id, j, sc, ""))
			continue
		}
		a, t, ok := strings.Cut(id, "_")
		rec := byID[a]
		if !ok || rec == nil || rec.ArrayTaskString == "" {
			continue
		}
		if !inTaskString(rec.ArrayTaskString, t) {
			v.Jobs = append(v.Jobs, viewJob(id, rec, sc, fmt.Sprintf("task %s is not pending in array %s (%s)", t, a, rec.ArrayTaskString)))
			continue
		}
		task := *rec
		task.ArrayTaskString = ""
		v.Jobs = append(v.Jobs, viewJob(id, &task, sc, ""))
	}
	return v
}

// perNode is job j's node count and what it uses on each node: ceil(n/k)
// CPUs (at least its minimum per node, at least 1), and its memory per
// node, or per CPU times those CPUs.
func perNode(j *Job) (count, cpus, mem int64) {
	count = max(j.NodeCount, 1)
	cpus = max((j.CPUs+count-1)/count, j.MinCPUsPerNode, 1)
	if j.MemPerNode != nil {
		mem = *j.MemPerNode
	} else if j.MemPerCPU != nil {
		mem = *j.MemPerCPU * cpus
	}
	return count, cpus, mem
}

// viewJob is job j (named id) as the view has it; blocked, when not "",
// is why it may not start whatever its record says.
func viewJob(id string, j *Job, sc *Scope, blocked string) sched.Job {
	if blocked == "" {
		switch {
		case j.State != "PENDING":
			blocked = fmt.Sprintf("job is %s, not PENDING", j.State)
		case j.Priority != 0 || (j.Reason != "JobHeldUser" && j.Reason != "BadConstraints"):
			blocked = fmt.Sprintf("job is not held by the hold guard (priority %d, reason %s): not optsched's", j.Priority, j.Reason)
		case j.ArrayTaskString != "":
			blocked = fmt.Sprintf("job is the pending tasks %s of an array", j.ArrayTaskString)
		case len(sc.Partitions) > 0 && !slices.Contains(sc.Partitions, j.Partition):
			blocked = fmt.Sprintf("partition %s is not optsched's", j.Partition)
		}
	}
	count, cpus, mem := perNode(j)
	vj := sched.Job{ID: id, Blocked: blocked, Chunks: make([]sched.Resources, count),
		Whole: j.Shared != nil && *j.Shared == "none", Pool: j.Partition}
	each := sched.Resources{"cpus": cpus, "mem": mem} // read only: shared by the chunks
	for i := range vj.Chunks {
		vj.Chunks[i] = each
	}
	if j.ExcludedNodes != "" && j.ExcludedNodes != "(null)" {
		names, err := hostlist.Expand(j.ExcludedNodes)
		if err != nil {
			vj.Defect = fmt.Sprintf("excluded nodes %q: %v", j.ExcludedNodes, err)
		}
		vj.Excluded = make(map[string]bool, len(names))
		for _, x := range names {
			vj.Excluded[x] = true
		}
	}
	return vj
}

// corePlan is the starts as sched's plan: a start whose node list does
// not expand to its nodes carries that defect.
func corePlan(starts []*Start) sched.Plan {
	p := sched.Plan{Starts: make([]sched.Start, len(starts))}
	for i, s := range starts {
		cs := sched.Start{Job: s.Job, Nodes: s.Nodes, Spec: s.NodeList}
		if s.NodeList != "" {
			if got, err := hostlist.Expand(s.NodeList); err != nil || strings.Join(got, ",") != strings.Join(s.Nodes, ",") {
				cs.Defect = fmt.Sprintf("node list %q is not its nodes %v", s.NodeList, s.Nodes)
			}
		}
		p.Starts[i] = cs
	}
	return p
}

// words is a violation in Slurm's terms.
func words(x sched.Violation) error {
	var what string
	switch x.Kind {
	case sched.NoJob:
		what = "no such job in squeue"
	case sched.Twice:
		what = "started twice"
	case sched.Blocked, sched.StartDefect, sched.JobDefect:
		what = x.Text
	case sched.ChunkCount:
		what = fmt.Sprintf("%d node(s) for a job of %d", x.Got, x.Want)
	case sched.NoNode:
		what = fmt.Sprintf("no such node %s in sinfo", x.Node)
	case sched.NodeTwice:
		what = fmt.Sprintf("node %s listed twice", x.Node)
	case sched.Foreign:
		what = fmt.Sprintf("node %s is not optsched's", x.Node)
	case sched.NotInPool:
		what = fmt.Sprintf("node %s is not in partition %s", x.Node, x.Text)
	case sched.Excluded:
		what = fmt.Sprintf("node %s is excluded by the job", x.Node)
	case sched.Down:
		what = fmt.Sprintf("node %s is %s, not up for new jobs", x.Node, x.Text)
	case sched.Over:
		unit := "CPUs"
		if x.Resource == "mem" {
			unit = "MB"
		}
		what = fmt.Sprintf("node %s would use %d of its %d %s", x.Node, x.Got, x.Want, unit)
	case sched.NotWhole:
		what = fmt.Sprintf("node %s is not free for an exclusive job", x.Node)
	default:
		what = fmt.Sprintf("rule %d broken on node %s", x.Kind, x.Node)
	}
	return fmt.Errorf("start of job %s: %s", x.Job, what)
}

// inTaskString reports whether task t is one of an array record's pending
// tasks ("1-3,7", "1-9:2", "1-100%%4").
func inTaskString(tasks, t string) bool {
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return false
	}
	tasks, _, _ = strings.Cut(tasks, "%")
	for _, part := range strings.Split(tasks, ",") {
		r, st, _ := strings.Cut(part, ":")
		lo, hi, isRange := strings.Cut(r, "-")
		l, err1 := strconv.ParseInt(lo, 10, 64)
		h := l
		var err2 error
		if isRange {
			h, err2 = strconv.ParseInt(hi, 10, 64)
		}
		step := int64(1)
		if st != "" {
			if s, err := strconv.ParseInt(st, 10, 64); err == nil && s > 0 {
				step = s
			}
		}
		if err1 == nil && err2 == nil && n >= l && n <= h && (n-l)%step == 0 {
			return true
		}
	}
	return false
}

func flagText(flags []string) string {
	if len(flags) == 0 {
		return ""
	}
	return "+" + strings.Join(flags, "+")
}

// Recheck keeps, in order, the starts of p that the state read again
// (fresh) still allows by Check's rules together with the starts kept
// before them (sched.Recheck); the others move to p.Dropped with the
// reason.
func Recheck(fresh *State, sc *Scope, p *Plan) {
	_, dropped := sched.Recheck(view(fresh, sc, p.Starts), corePlan(p.Starts))
	drop := make(map[int]bool, len(dropped))
	for _, d := range dropped {
		drop[d.Index] = true
		errs := make([]error, len(d.Violations))
		for i, x := range d.Violations {
			errs[i] = words(x)
		}
		p.Dropped = append(p.Dropped, Reason{d.Start.Job, "dropped before acting: " + errors.Join(errs...).Error()})
	}
	var kept []*Start
	for i, s := range p.Starts {
		if !drop[i] {
			kept = append(kept, s)
		}
	}
	p.Starts = kept
}
