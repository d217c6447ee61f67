package slurmsched

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/optsched/optsched/model/hostlist"
)

// Check verifies plan p against the state it was made from by rules
// derived from the raw squeue and sinfo records alone, sharing no code
// with Decide (N-version checking): a plan it rejects must not run.
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
	return errors.Join(checkStarts(st, sc, p.Starts)...)
}

// checkStarts returns the violations of starts against st, each start
// counted with all the starts before it.
func checkStarts(st *State, sc *Scope, starts []*Start) []error {
	c := newChecker(st, sc)
	var errs []error
	for _, s := range starts {
		errs = append(errs, c.add(s, true)...)
	}
	return errs
}

// A checker holds the raw records by id and what the starts it accepted
// use on each node.
type checker struct {
	sc    *Scope
	jobs  map[string]*Job
	nodes map[string]*Node
	used  map[string]*nodeUse
	seen  map[string]bool
}

// nodeUse is what a node has allocated plus the accepted starts on it.
type nodeUse struct {
	cpus, mem int64
	starts    int
	exclusive bool
}

func newChecker(st *State, sc *Scope) *checker {
	c := &checker{sc: sc, jobs: make(map[string]*Job, len(st.Jobs)), nodes: make(map[string]*Node, len(st.Nodes)),
		used: map[string]*nodeUse{}, seen: map[string]bool{}}
	for i := range st.Jobs {
		c.jobs[strconv.FormatInt(st.Jobs[i].ID, 10)] = &st.Jobs[i]
	}
	for i := range st.Nodes {
		c.nodes[st.Nodes[i].Name] = &st.Nodes[i]
	}
	// A job optsched placed and released that Slurm has not started yet
	// (pending, priority above 0, AdminComment PlacedMark, a ReqNodeList)
	// will use its nodes, which sinfo does not count yet: it is counted
	// as a start already accepted on each of them.
	for i := range st.Jobs {
		j := &st.Jobs[i]
		if j.State != "PENDING" || j.Priority <= 0 || j.AdminComment != PlacedMark || j.RequiredNodes == "" || j.RequiredNodes == "(null)" {
			continue
		}
		names, err := hostlist.Expand(j.RequiredNodes)
		if err != nil {
			continue
		}
		k := max(j.NodeCount, 1)
		cpus := max((j.CPUs+k-1)/k, j.MinCPUsPerNode, 1)
		var mem int64
		if j.MemPerNode != nil {
			mem = *j.MemPerNode
		} else if j.MemPerCPU != nil {
			mem = *j.MemPerCPU * cpus
		}
		for _, name := range names {
			n := c.nodes[name]
			if n == nil {
				continue
			}
			u := c.used[name]
			if u == nil {
				u = &nodeUse{cpus: n.AllocCPUs, mem: n.AllocMemory}
				c.used[name] = u
			}
			u.starts++
			if j.Shared != nil && *j.Shared == "none" {
				u.exclusive = true
				u.cpus += n.CPUs
				u.mem += n.RealMemory
			} else {
				u.cpus += cpus
				u.mem += mem
			}
		}
	}
	return c
}

// add checks start s against the records and the starts accepted before
// it, and returns its violations. The start's use is counted when it has
// none, or always with always (Check counts every start, so that each
// node's excess is reported where it arises).
func (c *checker) add(s *Start, always bool) []error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("start of job %s: %s", s.Job, fmt.Sprintf(format, a...)))
	}
	j := c.jobs[s.Job]
	if a, t, ok := strings.Cut(s.Job, "_"); ok && j == nil {
		// One pending task of an array's record.
		if rec := c.jobs[a]; rec != nil && rec.ArrayTaskString != "" {
			if !inTaskString(rec.ArrayTaskString, t) {
				bad("task %s is not pending in array %s (%s)", t, a, rec.ArrayTaskString)
				return errs
			}
			task := *rec
			task.ArrayTaskString = ""
			j = &task
		}
	}
	switch {
	case j == nil:
		bad("no such job in squeue")
		return errs
	case c.seen[s.Job]:
		bad("started twice")
		return errs
	case j.State != "PENDING":
		bad("job is %s, not PENDING", j.State)
		return errs
	case j.Priority != 0 || (j.Reason != "JobHeldUser" && j.Reason != "BadConstraints"):
		bad("job is not held by the hold guard (priority %d, reason %s): not optsched's", j.Priority, j.Reason)
		return errs
	case j.ArrayTaskString != "":
		bad("job is the pending tasks %s of an array", j.ArrayTaskString)
		return errs
	}
	if len(c.sc.Partitions) > 0 {
		owned := false
		for _, q := range c.sc.Partitions {
			owned = owned || q == j.Partition
		}
		if !owned {
			bad("partition %s is not optsched's", j.Partition)
			return errs
		}
	}
	count := j.NodeCount
	if count < 1 {
		count = 1
	}
	if int64(len(s.Nodes)) != count {
		bad("%d node(s) for a job of %d", len(s.Nodes), count)
		return errs
	}
	if s.NodeList != "" {
		if got, err := hostlist.Expand(s.NodeList); err != nil || strings.Join(got, ",") != strings.Join(s.Nodes, ",") {
			bad("node list %q is not its nodes %v", s.NodeList, s.Nodes)
			return errs
		}
	}
	perCPU := (j.CPUs + count - 1) / count
	if perCPU < j.MinCPUsPerNode {
		perCPU = j.MinCPUsPerNode
	}
	if perCPU < 1 {
		perCPU = 1
	}
	var perMem int64
	if j.MemPerNode != nil {
		perMem = *j.MemPerNode
	} else if j.MemPerCPU != nil {
		perMem = *j.MemPerCPU * perCPU
	}
	excl := j.Shared != nil && *j.Shared == "none"
	var excludedNodes []string
	if j.ExcludedNodes != "" && j.ExcludedNodes != "(null)" {
		var err error
		if excludedNodes, err = hostlist.Expand(j.ExcludedNodes); err != nil {
			bad("excluded nodes %q: %v", j.ExcludedNodes, err)
			return errs
		}
	}
	// after is each node's use with this start on it.
	after := make(map[string]nodeUse, len(s.Nodes))
	for _, name := range s.Nodes {
		n := c.nodes[name]
		_, twice := after[name]
		switch {
		case n == nil:
			bad("no such node %s in sinfo", name)
			continue
		case twice:
			bad("node %s listed twice", name)
			continue
		case len(c.sc.Nodes) > 0 && !c.sc.Nodes[name]:
			bad("node %s is not optsched's", name)
			continue
		}
		inPart := false
		for _, q := range n.Partitions {
			inPart = inPart || q == j.Partition
		}
		if !inPart {
			bad("node %s is not in partition %s", name, j.Partition)
		}
		for _, x := range excludedNodes {
			if x == name {
				bad("node %s is excluded by the job", name)
			}
		}
		state := strings.ToUpper(n.State)
		if (state != "IDLE" && state != "MIXED") || len(n.Flags) > 0 {
			bad("node %s is %s%s, not up for new jobs", name, n.State, flagText(n.Flags))
		}
		u := nodeUse{cpus: n.AllocCPUs, mem: n.AllocMemory}
		if prev := c.used[name]; prev != nil {
			u = *prev
		}
		u.starts++
		if excl {
			u.exclusive = true
			u.cpus += n.CPUs
			u.mem += n.RealMemory
		} else {
			u.cpus += perCPU
			u.mem += perMem
		}
		if u.cpus > n.CPUs {
			bad("node %s would use %d of its %d CPUs", name, u.cpus, n.CPUs)
		}
		if u.mem > n.RealMemory {
			bad("node %s would use %d of its %d MB", name, u.mem, n.RealMemory)
		}
		if u.exclusive && (u.starts > 1 || n.AllocCPUs > 0 || n.AllocMemory > 0) {
			bad("node %s is not free for an exclusive job", name)
		}
		after[name] = u
	}
	if len(errs) == 0 || always {
		c.seen[s.Job] = true
		for name, u := range after {
			u := u
			c.used[name] = &u
		}
	}
	return errs
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
// before them; the others move to p.Dropped with the reason.
func Recheck(fresh *State, sc *Scope, p *Plan) {
	c := newChecker(fresh, sc)
	var kept []*Start
	for _, s := range p.Starts {
		if errs := c.add(s, false); len(errs) > 0 {
			p.Dropped = append(p.Dropped, Reason{s.Job, "dropped before acting: " + errors.Join(errs...).Error()})
			continue
		}
		kept = append(kept, s)
	}
	p.Starts = kept
}
