package pbsched

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/pbs"
	"github.com/optsched/optsched/sched"
)

// ErrUnsafePlan is wrapped by Check's errors: a plan that must not be
// acted on.
var ErrUnsafePlan = errors.New("pbs: unsafe plan")

// Check is the last gate before any qrun: it re-derives from the raw PBS
// documents, sharing no code with the placement (Decide), that every
// start is allowed. The rules that every server shares (the job may
// start, the vnodes exist and take it, capacity, whole vnodes) are
// sched.Check's, on a view that checkView derives from the documents
// alone; the rules of PBS's own documents (the window's allocation, the
// chunks against the select, properties, hosts, the reservation) are
// this package's. It applies every rule of CheckRules and returns nil or
// an error listing every problem found, each prefixed with its rule's
// name, wrapping ErrUnsafePlan.
func Check(st *State, scope *Scope, p *Plan) error {
	in := newCheckInput(st, scope, p)
	var problems []error
	add := func(rule string) func(format string, args ...any) {
		return func(format string, args ...any) {
			problems = append(problems, fmt.Errorf(rule+": "+format, args...))
		}
	}
	ruleWindow(in, add("window"))
	for _, x := range sched.Check(in.view(), in.corePlan()) {
		problems = append(problems, in.words(x))
	}
	ruleChunks(in, add("chunks"))
	ruleProperties(in, add("properties"))
	ruleReservation(in, add("reservation"))
	ruleHosts(in, add("hosts"))
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrUnsafePlan, errors.Join(problems...))
}

// checkRules names Check's rules and what each says, in the order they
// report (sched.Check's in the middle, worded as job, chunks, vnode,
// capacity and whole).
var checkRules = [][2]string{
	{"window", "the whole-node starts are exactly the allocations that model.Check accepts on their window"},
	{"job", "the job exists, is queued (Q), is not an array, sits in a started execution queue (and in --exec-queues when given), and starts once"},
	{"chunks", "one vnode chunk per unit of the select, each repeating the unit's resources and properties"},
	{"vnode", "every vnode exists, is optsched's (--nodes), is in state free exactly, and belongs to no other queue"},
	{"capacity", "on every vnode, in use (resources_assigned, or what running jobs' exec_vnode names there when pbsnodes lags, whichever is larger) plus planned stays within available, for each resource some owned vnode has that a start adds to; a unit without ncpus counts one CPU"},
	{"whole", "a vnode given whole (a whole-node job, or a job exclusive there by its place or the vnode's sharing) runs nothing, has nothing assigned and gets no other start"},
	{"properties", "the vnode has every property the unit names"},
	{"reservation", "backfill: the job the plan reserves for waits, and every start behind it (in the selection order, recomputed) ends by its shadow time or takes only the extra vnodes, both recomputed from the running jobs' stime + walltime (sched.CheckHold; on the vnodes of its switch only, for a job waiting for one switch); lan2023: no reservation"},
	{"hosts", "place=scatter: a host per chunk; pack: one host; group=r: one value of r; exclhost: the host runs nothing else; no start on a host a running job holds exclusively"},
}

// CheckRules lists the names and descriptions of Check's rules, in order.
func CheckRules() [][2]string { return slices.Clone(checkRules) }

// checkInput is the raw documents indexed once for the rules.
type checkInput struct {
	st    *State
	scope *Scope
	p     *Plan
	jobs  map[string]*pbs.Job
	nodes map[string]*pbs.Node
	// known are the resources and properties some owned vnode has;
	// consumable the capacities (assigned on some owned vnode, or the
	// usual ones).
	known, consumable map[string]bool
	// named are the vnodes in some running job's exec_vnode; inExec what
	// the exec_vnodes name there.
	named  map[string]bool
	inExec map[string]model.Resources
}

func newCheckInput(st *State, scope *Scope, p *Plan) *checkInput {
	in := &checkInput{st: st, scope: scope, p: p, jobs: map[string]*pbs.Job{}, nodes: map[string]*pbs.Node{},
		known: map[string]bool{}, named: map[string]bool{}, inExec: map[string]model.Resources{},
		consumable: map[string]bool{"ncpus": true, "mem": true, "vmem": true, "ngpus": true, "nmics": true, "naccelerators": true}}
	for i := range st.Jobs.Jobs {
		in.jobs[st.Jobs.Jobs[i].ID] = &st.Jobs.Jobs[i]
	}
	for i := range st.Nodes.Nodes {
		n := &st.Nodes.Nodes[i]
		in.nodes[n.Name] = n
		if scope.Owned == nil || scope.Owned[n.Name] {
			for k := range n.Available {
				in.known[k] = true
			}
			for k := range n.Text {
				in.known[k] = true
			}
			for k := range n.Assigned {
				in.consumable[k] = true
			}
		}
	}
	for i := range st.Jobs.Jobs {
		for _, c := range st.Jobs.Jobs[i].ExecVnode {
			for _, u := range c {
				in.named[u.Vnode] = true
				if in.inExec[u.Vnode] == nil {
					in.inExec[u.Vnode] = model.Resources{}
				}
				for k, v := range u.Amounts {
					in.inExec[u.Vnode][k] += v
				}
			}
		}
	}
	return in
}

// units returns the select units of job j, one per chunk count.
func (in *checkInput) units(j *pbs.Job) []model.Chunk {
	sel := j.Select
	if sel == nil {
		sel = model.Select{{Count: max(j.NodeCount, 1)}}
	}
	var flat []model.Chunk
	for _, ch := range sel {
		for range ch.Count {
			flat = append(flat, ch)
		}
	}
	return flat
}

// eachChunk calls fn for every chunk of every start whose job is in qstat
// and whose chunks match its select units one to one (the job and chunks
// rules report the others), with the vnode when pbsnodes has it.
func (in *checkInput) eachChunk(fn func(s *Start, j *pbs.Job, i int, vc VChunk, unit model.Chunk, n *pbs.Node)) {
	for _, s := range in.p.Starts {
		j := in.jobs[s.Job]
		if j == nil {
			continue
		}
		units := in.units(j)
		if len(units) != len(s.Chunks) {
			continue
		}
		for i, vc := range s.Chunks {
			fn(s, j, i, vc, units[i], in.nodes[vc.Vnode])
		}
	}
}

func ruleWindow(in *checkInput, add func(string, ...any)) {
	p := in.p
	if p.Window == nil {
		return
	}
	if err := model.Check(p.Window, p.Allocs); err != nil {
		add("whole-node allocation: %v", err)
	}
	want := map[string][]string{}
	for _, a := range p.Allocs {
		want[p.Window.Jobs[a.Job].ID] = p.Window.NodeNames(a.Nodes)
	}
	for _, s := range p.Starts {
		if s.Path != PathWhole {
			continue
		}
		nodes, ok := want[s.Job]
		if !ok || !slices.Equal(nodes, chunkVnodes(s.Chunks)) {
			add("job %s: whole-node start on %v is not the checked allocation %v", s.Job, chunkVnodes(s.Chunks), nodes)
		}
		delete(want, s.Job)
	}
	for _, j := range slices.Sorted(maps.Keys(want)) {
		add("job %s: allocated by the window solve but not in the plan", j)
	}
}

func ruleChunks(in *checkInput, add func(string, ...any)) {
	// The count of chunks is sched.Check's (ChunkCount).
	in.eachChunk(func(s *Start, j *pbs.Job, i int, vc VChunk, unit model.Chunk, _ *pbs.Node) {
		// The chunk repeats the unit's resources, no more, no fewer.
		for _, k := range slices.Sorted(maps.Keys(unit.Amounts)) {
			if v := unit.Amounts[k]; vc.Amounts[k] != v {
				add("job %s: chunk %d on %s has %s=%d, the select asks %d", j.ID, i+1, vc.Vnode, k, vc.Amounts[k], v)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(vc.Amounts)) {
			if _, ok := unit.Amounts[k]; !ok {
				add("job %s: chunk %d on %s adds %s, which the select does not ask", j.ID, i+1, vc.Vnode, k)
			}
		}
		if !maps.Equal(vc.Labels, unit.Labels) && len(vc.Labels)+len(unit.Labels) > 0 {
			add("job %s: chunk %d on %s has properties %v, the select asks %v", j.ID, i+1, vc.Vnode, vc.Labels, unit.Labels)
		}
	})
}

func ruleProperties(in *checkInput, add func(string, ...any)) {
	in.eachChunk(func(s *Start, j *pbs.Job, i int, vc VChunk, unit model.Chunk, n *pbs.Node) {
		if n == nil {
			return
		}
		// A numeric value of a resource that is not a capacity is a
		// property to match (tier1=7).
		for _, k := range slices.Sorted(maps.Keys(vc.Amounts)) {
			if k == "mpiprocs" || k == "ompthreads" || in.consumable[k] {
				continue
			}
			if v := vc.Amounts[k]; in.known[k] && n.Text[k] != fmt.Sprint(v) {
				add("job %s: vnode %s has %s=%q, the select asks %d", j.ID, n.Name, k, n.Text[k], v)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(unit.Labels)) {
			want := unit.Labels[k]
			if (k == "host" || k == "vnode") && want == n.Name || !in.known[k] {
				continue
			}
			have, ok := n.Text[k]
			if !ok || !(have == want || strings.EqualFold(have, want) && (strings.EqualFold(have, "true") || strings.EqualFold(have, "false"))) {
				add("job %s: vnode %s has %s=%q, the select asks %q", j.ID, n.Name, k, have, want)
			}
		}
	})
}

func ruleHosts(in *checkInput, add func(string, ...any)) {
	checkHosts(in.st, in.p.Starts, in.jobs, in.named, add)
}

// checkHosts checks what a job's place says of hosts (a host is a
// vnode's resources_available.host, else its name; a multi-vnode host
// has several vnodes):
//
//   - place=scatter puts each chunk on a host of its own; place=pack all
//     chunks on one host; place=group=r all chunks on vnodes with one
//     value of r;
//   - a start that is exclusive on a host (place=exclhost, or the vnode's
//     sharing force_exclhost, or default_exclhost without place=shared)
//     is the only start on it, and no vnode of the host runs a job, has
//     resources assigned or is in a running job's exec_vnode;
//   - no start goes to a host that a running job holds exclusively.
func checkHosts(st *State, starts []*Start, jobs map[string]*pbs.Job, named map[string]bool, add func(string, ...any)) {
	host := map[string]string{}
	members := map[string][]*pbs.Node{}
	for i := range st.Nodes.Nodes {
		n := &st.Nodes.Nodes[i]
		h, ok := n.Text["host"]
		if !ok || h == "" {
			h = n.Name
		}
		host[n.Name] = h
		members[h] = append(members[h], n)
	}
	nodeByName := map[string]*pbs.Node{}
	for i := range st.Nodes.Nodes {
		nodeByName[st.Nodes.Nodes[i].Name] = &st.Nodes.Nodes[i]
	}
	hostExcl := func(n *pbs.Node, pl pbs.Place) bool {
		switch n.Sharing {
		case "force_exclhost":
			return true
		case "default_exclhost":
			return pl.Sharing != "shared"
		case "ignore_excl", "force_excl":
			return false
		}
		return pl.Sharing == "exclhost"
	}
	// Hosts held exclusively by running jobs.
	heldBy := map[string]string{}
	for i := range st.Jobs.Jobs {
		j := &st.Jobs.Jobs[i]
		for _, ch := range j.ExecVnode {
			for _, u := range ch {
				if n := nodeByName[u.Vnode]; n != nil && hostExcl(n, j.Place) {
					heldBy[host[u.Vnode]] = j.ID
				}
			}
		}
	}
	startsOn := map[string][]string{} // host -> jobs starting there
	exclHosts := map[string]string{}  // host -> job holding it whole
	for _, s := range starts {
		j := jobs[s.Job]
		if j == nil {
			continue
		}
		hosts := map[string]bool{}
		var order []string
		for _, c := range s.Chunks {
			h, ok := host[c.Vnode]
			if !ok {
				continue
			}
			if hosts[h] && j.Place.Arrangement == "scatter" {
				add("job %s: place=scatter, but two chunks on host %s", j.ID, h)
			}
			if !hosts[h] {
				order = append(order, h)
			}
			hosts[h] = true
			if hostExcl(nodeByName[c.Vnode], j.Place) {
				exclHosts[h] = j.ID
			}
		}
		if j.Place.Arrangement == "pack" && len(hosts) > 1 {
			add("job %s: place=pack, but chunks on hosts %v", j.ID, order)
		}
		if g := j.Place.Group; g != "" {
			vals := map[string]bool{}
			for _, c := range s.Chunks {
				if n := nodeByName[c.Vnode]; n != nil {
					vals[n.Text[g]] = true
				}
			}
			if len(vals) != 1 || vals[""] {
				add("job %s: place=group=%s, but its vnodes have %s values %v", j.ID, g, g, slices.Sorted(maps.Keys(vals)))
			}
		}
		for _, h := range order {
			startsOn[h] = append(startsOn[h], j.ID)
			if by, ok := heldBy[h]; ok {
				add("job %s: host %s is held exclusively by running job %s", j.ID, h, by)
			}
		}
	}
	for _, h := range slices.Sorted(maps.Keys(exclHosts)) {
		j := exclHosts[h]
		if len(startsOn[h]) > 1 {
			add("host %s: held exclusively by job %s but also given to %v", h, j, startsOn[h])
		}
		for _, n := range members[h] {
			busy := len(n.Jobs) > 0 || named[n.Name]
			for _, v := range n.Assigned {
				busy = busy || v != 0
			}
			if busy {
				add("host %s: held exclusively by job %s but its vnode %s runs jobs or has resources assigned", h, j, n.Name)
			}
		}
	}
}

func chunkVnodes(chunks []VChunk) []string {
	out := make([]string, len(chunks))
	for i, c := range chunks {
		out[i] = c.Vnode
	}
	return out
}
