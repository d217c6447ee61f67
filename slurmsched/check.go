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
//     allocated and no other start.
//
// Its error lists every violation.
func Check(st *State, sc *Scope, p *Plan) error {
	return errors.Join(checkStarts(st, sc, p.Starts)...)
}

// checkStarts returns the violations of starts against st.
func checkStarts(st *State, sc *Scope, starts []*Start) []error {
	var errs []error
	bad := func(job, format string, a ...any) {
		errs = append(errs, fmt.Errorf("start of job %s: %s", job, fmt.Sprintf(format, a...)))
	}
	jobs := map[string]*Job{}
	for i := range st.Jobs {
		jobs[strconv.FormatInt(st.Jobs[i].ID, 10)] = &st.Jobs[i]
	}
	nodes := map[string]*Node{}
	for i := range st.Nodes {
		nodes[st.Nodes[i].Name] = &st.Nodes[i]
	}
	type use struct {
		cpus, mem int64
		starts    int
		exclusive bool
	}
	used := map[string]*use{}
	seen := map[string]bool{}
	for _, s := range starts {
		j := jobs[s.Job]
		if a, t, ok := strings.Cut(s.Job, "_"); ok && j == nil {
			// One pending task of an array's record.
			if rec := jobs[a]; rec != nil && rec.ArrayTaskString != "" {
				if inTaskString(rec.ArrayTaskString, t) {
					task := *rec
					task.ArrayTaskString = ""
					j = &task
				} else {
					bad(s.Job, "task %s is not pending in array %s (%s)", t, a, rec.ArrayTaskString)
					continue
				}
			}
		}
		if j == nil {
			bad(s.Job, "no such job in squeue")
			continue
		}
		if seen[s.Job] {
			bad(s.Job, "started twice")
			continue
		}
		seen[s.Job] = true
		if j.State != "PENDING" {
			bad(s.Job, "job is %s, not PENDING", j.State)
			continue
		}
		if j.Priority != 0 || (j.Reason != "JobHeldUser" && j.Reason != "BadConstraints") {
			bad(s.Job, "job is not held by the hold guard (priority %d, reason %s): not optsched's", j.Priority, j.Reason)
			continue
		}
		if j.ArrayTaskString != "" {
			bad(s.Job, "job is the pending tasks %s of an array", j.ArrayTaskString)
			continue
		}
		if len(sc.Partitions) > 0 {
			owned := false
			for _, q := range sc.Partitions {
				owned = owned || q == j.Partition
			}
			if !owned {
				bad(s.Job, "partition %s is not optsched's", j.Partition)
				continue
			}
		}
		count := j.NodeCount
		if count < 1 {
			count = 1
		}
		if int64(len(s.Nodes)) != count {
			bad(s.Job, "%d node(s) for a job of %d", len(s.Nodes), count)
			continue
		}
		if s.NodeList != "" {
			if got, err := hostlist.Expand(s.NodeList); err != nil || strings.Join(got, ",") != strings.Join(s.Nodes, ",") {
				bad(s.Job, "node list %q is not its nodes %v", s.NodeList, s.Nodes)
				continue
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
				bad(s.Job, "excluded nodes %q: %v", j.ExcludedNodes, err)
				continue
			}
		}
		onNode := map[string]bool{}
		for _, name := range s.Nodes {
			n := nodes[name]
			switch {
			case n == nil:
				bad(s.Job, "no such node %s in sinfo", name)
				continue
			case onNode[name]:
				bad(s.Job, "node %s listed twice", name)
				continue
			case len(sc.Nodes) > 0 && !sc.Nodes[name]:
				bad(s.Job, "node %s is not optsched's", name)
				continue
			}
			onNode[name] = true
			inPart := false
			for _, q := range n.Partitions {
				inPart = inPart || q == j.Partition
			}
			if !inPart {
				bad(s.Job, "node %s is not in partition %s", name, j.Partition)
			}
			for _, x := range excludedNodes {
				if x == name {
					bad(s.Job, "node %s is excluded by the job", name)
				}
			}
			st := strings.ToUpper(n.State)
			if (st != "IDLE" && st != "MIXED") || len(n.Flags) > 0 {
				bad(s.Job, "node %s is %s%s, not up for new jobs", name, n.State, flagText(n.Flags))
			}
			u := used[name]
			if u == nil {
				u = &use{cpus: n.AllocCPUs, mem: n.AllocMemory}
				used[name] = u
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
				bad(s.Job, "node %s would use %d of its %d CPUs", name, u.cpus, n.CPUs)
			}
			if u.mem > n.RealMemory {
				bad(s.Job, "node %s would use %d of its %d MB", name, u.mem, n.RealMemory)
			}
			if u.exclusive && (u.starts > 1 || n.AllocCPUs > 0 || n.AllocMemory > 0) {
				bad(s.Job, "node %s is not free for an exclusive job", name)
			}
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
	var kept []*Start
	for _, s := range p.Starts {
		if errs := checkStarts(fresh, sc, append(kept[:len(kept):len(kept)], s)); len(errs) > 0 {
			p.Dropped = append(p.Dropped, Reason{s.Job, "dropped before acting: " + errors.Join(errs...).Error()})
			continue
		}
		kept = append(kept, s)
	}
	p.Starts = kept
}
