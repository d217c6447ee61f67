package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/pbs"
)

// pbsState is one snapshot of a PBS server, parsed: what a cycle decides
// from.
type pbsState struct {
	jobs  *pbs.Jobs
	nodes *pbs.Nodes
	// queues is nil when the execution queues were named on the command
	// line (--exec-queues) instead of read from qstat -Q -f.
	queues *pbs.Queues
	// now is the decision time: qstat's timestamp, else pbsnodes', else
	// the clock.
	now int64
	// digest is the SHA-256 of the input documents.
	digest string
}

// pbsScope says which part of the server optsched schedules.
type pbsScope struct {
	// execQueues, when not nil, lists the only queues whose jobs are
	// candidates.
	execQueues map[string]bool
	// owned, when not nil, lists the only vnodes optsched may start jobs
	// on (--nodes).
	owned map[string]bool
	// levels are the vnode resources naming switch levels; topologyConf
	// is the text of a Slurm topology.conf (overrides levels).
	levels       []string
	topologyConf string
	// period is the waiting period of NWP, in seconds.
	period int64
}

// defaultWalltime stands in for a job without Resource_List.walltime: a
// year, so that it never looks short.
const defaultWalltime = 365 * 24 * 3600

// knownConsumables are consumable vnode resources even when no vnode has
// assigned any yet.
var knownConsumables = map[string]bool{"ncpus": true, "mem": true, "vmem": true, "ngpus": true, "nmics": true, "naccelerators": true}

// notNodeResources are chunk resources that are not vnode capacities or
// properties: MPI rank and thread counts.
var notNodeResources = map[string]bool{"mpiprocs": true, "ompthreads": true}

// vnode is one vnode as a cycle sees it.
type vnode struct {
	n *pbs.Node
	// id is the vnode's id in the topology.
	id int
	// free: the state is exactly "free". idle: free, no jobs, nothing
	// assigned and named by no running job: a whole vnode to give away.
	free, idle bool
}

// chunkReq is one unit (one chunk of the select statement) of a job.
type chunkReq struct {
	// amounts are the numeric resources of the chunk, ncpus defaulting
	// to 1 as PBS's does; labels the string-valued ones.
	amounts model.Resources
	labels  map[string]string
	// written are the amounts as the user gave them (no default ncpus;
	// mpiprocs and ompthreads included) and wlabels the string-valued
	// resources: what a qrun -H chunk repeats, since qrun -H with
	// resources replaces the job's select with the one it spells.
	written model.Resources
	wlabels map[string]string
}

// candidate is a queued job optsched may start this cycle.
type candidate struct {
	job *pbs.Job
	// units has one entry per unit; chunks one per chunk of the select
	// (units repeat them, Count times each).
	units    []chunkReq
	chunks   []chunkReq
	nwp      int
	submit   int64
	walltime int64
	// whole: every unit takes a vnode of its own, so the job goes to the
	// topology-aware window solve; path says why it goes where it goes.
	whole bool
	path  string
}

// cluster is the scheduling view of a state.
type cluster struct {
	st    *pbsState
	scope *pbsScope
	topo  *model.Topology
	// topoNote says how the topology was built.
	topoNote string
	// vnodes are the owned vnodes in topology order; byName indexes them.
	vnodes []*vnode
	byName map[string]*vnode
	// consumable lists the resources whose amounts are capacities;
	// checked lists the resources and labels some owned vnode has (others
	// are not vnode matters and are not checked).
	consumable map[string]bool
	checked    map[string]bool
	// running are the running jobs on owned vnodes.
	running []model.RunningJob
	// cands are the candidate jobs in document order; skipped the queued
	// jobs that are not candidates, with reasons.
	cands   []*candidate
	skipped []pbsReason
	// ignored counts vnodes of pbsnodes outside optsched's part.
	ignored int
	// ref caches reference(); exclAll, misfit, minCPUs and maxCPUs cache
	// facts about it for classify (by place; by queue and chunk).
	ref              []*vnode
	exclAll          map[pbs.Place]bool
	misfit           map[string]string
	minCPUs, maxCPUs int64
	notes            []string

	// never caches neverFits by fitKey, exclFree cpEligible's first
	// free vnode on which a place is exclusive ("" for none).
	never    map[string]string
	exclFree map[pbs.Place]string
}

// pbsReason is a job and why something about it.
type pbsReason struct {
	Job    string `json:"job"`
	Reason string `json:"reason"`
}

// buildCluster turns a parsed state into the scheduling view: the
// topology over the owned vnodes, their idle/free status, the running
// jobs, and the candidate jobs classified for the whole-node or the
// partial-node path. Input that cannot be trusted is an error naming the
// job or vnode and the attribute.
func buildCluster(st *pbsState, scope *pbsScope) (*cluster, error) {
	c := &cluster{st: st, scope: scope, byName: map[string]*vnode{}, consumable: map[string]bool{}, checked: map[string]bool{}}
	var owned []*pbs.Node
	for i := range st.nodes.Nodes {
		n := &st.nodes.Nodes[i]
		if scope.owned != nil && !scope.owned[n.Name] {
			c.ignored++
			continue
		}
		owned = append(owned, n)
	}
	if len(owned) == 0 {
		return nil, fmt.Errorf("pbsnodes: none of the %d vnodes is optsched's to schedule (check --nodes)", len(st.nodes.Nodes))
	}
	if a, b := st.jobs.Timestamp, st.nodes.Timestamp; a > 0 && b > 0 && max(a-b, b-a) > 300 {
		c.notes = append(c.notes, fmt.Sprintf("qstat and pbsnodes were taken %d s apart: the state may be stale", max(a-b, b-a)))
	}
	if err := c.buildTopology(owned); err != nil {
		return nil, err
	}
	inTopo := owned[:0:0]
	for _, n := range owned {
		if _, ok := c.topo.Lookup(n.Name); ok {
			inTopo = append(inTopo, n)
		} else {
			c.ignored++
		}
	}
	// Vnodes named by a running job's exec_vnode are busy whatever
	// pbsnodes says (the two documents are read a moment apart).
	busy := map[string]bool{}
	for i := range st.jobs.Jobs {
		for _, v := range pbs.Vnodes(st.jobs.Jobs[i].ExecVnode) {
			busy[v] = true
		}
	}
	for _, n := range inTopo {
		id, _ := c.topo.Lookup(n.Name)
		v := &vnode{n: n, id: id, free: n.Free()}
		v.idle = v.free && len(n.Jobs) == 0 && !busy[n.Name] && allZero(n.Assigned)
		c.vnodes = append(c.vnodes, v)
		c.byName[n.Name] = v
		for k := range n.Assigned {
			c.consumable[k] = true
		}
		for k := range n.Text {
			c.checked[k] = true
		}
		for k := range n.Available {
			c.checked[k] = true
		}
	}
	for k := range knownConsumables {
		c.consumable[k] = true
	}
	slices.SortFunc(c.vnodes, func(a, b *vnode) int { return a.id - b.id })
	if err := c.readRunning(); err != nil {
		return nil, err
	}
	return c, c.readCandidates()
}

// buildTopology builds the switch tree over the owned vnodes: from
// topology.conf when given, else from the level resources, else flat.
func (c *cluster) buildTopology(owned []*pbs.Node) error {
	names := make([]string, len(owned))
	for i, n := range owned {
		names[i] = n.Name
	}
	if c.scope.topologyConf != "" {
		t, err := model.ParseSlurmTopology(c.scope.topologyConf)
		if err != nil {
			return fmt.Errorf("--topology-conf: %w", err)
		}
		c.topo = t
		c.topoNote = fmt.Sprintf("topology.conf: %d switches, %d levels", t.NumSwitches(), t.Height())
		missing := 0
		for _, n := range names {
			if _, ok := t.Lookup(n); !ok {
				missing++
			}
		}
		if missing > 0 {
			c.notes = append(c.notes, fmt.Sprintf("%d owned vnodes are not in topology.conf and are left alone", missing))
		}
		if missing == len(names) {
			return fmt.Errorf("--topology-conf: none of the %d owned vnodes is in topology.conf (vnode names must match its Nodes= lists)", len(names))
		}
		return nil
	}
	nodes := make([]pbs.Node, len(owned))
	for i, n := range owned {
		nodes[i] = *n
	}
	t, err := pbs.TierTopology(nodes, c.scope.levels)
	switch {
	case err == nil:
		c.topo = t
		c.topoNote = fmt.Sprintf("vnode resources %s: %d switches, %d levels", strings.Join(c.scope.levels, ", "), t.NumSwitches(), t.Height())
		return nil
	case err != pbs.ErrNoTiers:
		return err
	}
	if c.topo, err = pbs.FlatTopology(names); err != nil {
		return fmt.Errorf("pbsnodes: %w", err)
	}
	c.topoNote = "flat: no vnode has " + strings.Join(c.scope.levels, " or ") + " and no --topology-conf was given"
	c.notes = append(c.notes, "no topology: every pair of vnodes is taken to be equally far apart ("+c.topoNote+")")
	return nil
}

func allZero(r model.Resources) bool {
	for _, v := range r {
		if v != 0 {
			return false
		}
	}
	return true
}

// readRunning collects the running jobs on owned vnodes for the window.
func (c *cluster) readRunning() error {
	for i := range c.st.jobs.Jobs {
		j := &c.st.jobs.Jobs[i]
		if len(j.ExecVnode) == 0 {
			continue
		}
		var ids []int
		for _, name := range pbs.Vnodes(j.ExecVnode) {
			if v, ok := c.byName[name]; ok {
				ids = append(ids, v.id)
			}
		}
		if len(ids) == 0 {
			continue
		}
		wall := j.Walltime
		if wall == 0 {
			wall = defaultWalltime
		}
		start := j.STime
		if start == 0 {
			start = c.st.now
		}
		c.running = append(c.running, model.RunningJob{ID: j.ID, Nodes: ids, End: max(start+wall, c.st.now+1)})
	}
	return nil
}

// readCandidates picks the queued jobs optsched may start and classifies
// them; the other queued jobs are skipped with a reason.
func (c *cluster) readCandidates() error {
	for i := range c.st.jobs.Jobs {
		j := &c.st.jobs.Jobs[i]
		if j.State != "Q" {
			continue
		}
		if why := c.notCandidate(j); why != "" {
			c.skipped = append(c.skipped, pbsReason{j.ID, why})
			continue
		}
		cand, err := c.newCandidate(j)
		if err != nil {
			return err
		}
		c.cands = append(c.cands, cand)
	}
	return nil
}

// notCandidate says why a queued job is not optsched's to start, or "".
func (c *cluster) notCandidate(j *pbs.Job) string {
	if j.Array {
		return "job array: qrun cannot start an array as a whole (its subjobs are not listed without qstat -t)"
	}
	if c.scope.execQueues != nil && !c.scope.execQueues[j.Queue] {
		return fmt.Sprintf("queue %s is not one optsched schedules (--exec-queues)", j.Queue)
	}
	if c.st.queues != nil {
		q, ok := c.st.queues.Lookup(j.Queue)
		switch {
		case !ok:
			return fmt.Sprintf("queue %s is not in the queue list", j.Queue)
		case !q.Execution():
			return fmt.Sprintf("queue %s is a routing queue, not an execution queue", j.Queue)
		case !q.Started:
			return fmt.Sprintf("queue %s is not started", j.Queue)
		}
	}
	return ""
}

// newCandidate expands a queued job's chunks and classifies it.
func (c *cluster) newCandidate(j *pbs.Job) (*candidate, error) {
	cand := &candidate{job: j, walltime: j.Walltime}
	if cand.walltime == 0 {
		cand.walltime = defaultWalltime
	}
	cand.submit = min(max(firstNonZero(j.QTime, j.CTime, c.st.now), 0), c.st.now)
	wait := c.st.now - firstNonZero(j.ETime, j.QTime, j.CTime, c.st.now)
	if j.HasEligibleTime {
		wait = j.EligibleTime
	}
	if wait > 0 && c.scope.period > 0 {
		cand.nwp = int(min(wait/c.scope.period, 1<<31-1))
	}
	sel := j.Select
	if sel == nil {
		// No select: nodect whole vnodes (PBS converts -l nodes= to a
		// select, so this is rare).
		n := max(j.NodeCount, 1)
		sel = model.Select{{Count: n}}
	}
	if sel.Units() > maxWindowUnits {
		return nil, &pbs.Error{Source: "qstat", Object: "job " + j.ID, Field: "Resource_List.select",
			Reason: fmt.Sprintf("%d chunks, more than the %d optsched handles", sel.Units(), maxWindowUnits)}
	}
	for _, ch := range sel {
		u := chunkReq{amounts: model.Resources{}, written: model.Resources{}, labels: map[string]string{}}
		for k, v := range ch.Amounts {
			u.written[k] = v
			if notNodeResources[k] {
				continue
			}
			if c.consumable[k] {
				u.amounts[k] = v
			} else {
				// A numeric value of a non-consumable resource is a
				// property to match (tier1=7).
				u.labels[k] = fmt.Sprint(v)
			}
		}
		for k, v := range ch.Labels {
			u.labels[k] = v
		}
		u.wlabels = ch.Labels
		if _, ok := u.amounts["ncpus"]; !ok {
			u.amounts["ncpus"] = 1
		}
		cand.chunks = append(cand.chunks, u)
		for range ch.Count {
			cand.units = append(cand.units, u)
		}
	}
	cand.whole, cand.path = c.classify(cand)
	return cand, nil
}

// maxWindowUnits bounds the chunks of one job.
const maxWindowUnits = 1 << 16

func firstNonZero(vs ...int64) int64 {
	for _, v := range vs {
		if v != 0 {
			return v
		}
	}
	return 0
}

// exclusiveOn reports whether a job with place p gets vnode n to itself,
// following the vnode sharing attribute ([PBS 2022.1 RG] pbs_node_attributes,
// sharing): force_* always, ignore_excl never, default_excl* unless the
// job asks for shared, default_shared (or unset) when the job asks for
// excl or exclhost.
func exclusiveOn(n *pbs.Node, p pbs.Place) bool {
	switch n.Sharing {
	case "force_excl", "force_exclhost":
		return true
	case "ignore_excl":
		return false
	case "default_excl", "default_exclhost":
		return p.Sharing != "shared"
	}
	return p.Exclusive()
}

// classify decides the path of a candidate: the whole-node window solve
// (SCAS/CSP on the topology) or the partial-node first fit. A job is
// whole-node when each of its units takes a vnode of its own and any idle
// vnode would do for any unit:
//
//   - it has no select (nodect whole vnodes), or it is exclusive on every
//     idle vnode (place=excl or exclhost, or the vnodes' sharing forces
//     it), or every unit asks for all the CPUs of every idle vnode; and
//   - it is not packed (place=pack with more than one unit puts them on
//     one host); and
//   - every unit fits every idle vnode (resources, properties, the
//     vnode's queue).
//
// Every other job is a partial-node job.
func (c *cluster) classify(cand *candidate) (bool, string) {
	j := cand.job
	if j.Place.Arrangement == "pack" && len(cand.units) > 1 {
		return false, "place=pack: all chunks on one host"
	}
	idle := c.reference()
	if c.exclAll == nil {
		// Facts about the reference vnodes that many jobs share.
		c.exclAll, c.misfit = map[pbs.Place]bool{}, map[string]string{}
		c.minCPUs, c.maxCPUs = math.MaxInt64, 0
		for _, v := range idle {
			c.minCPUs = min(c.minCPUs, v.n.Available["ncpus"])
			c.maxCPUs = max(c.maxCPUs, v.n.Available["ncpus"])
		}
	}
	excl, ok := c.exclAll[j.Place]
	if !ok {
		excl = all(idle, func(v *vnode) bool { return exclusiveOn(v.n, j.Place) })
		c.exclAll[j.Place] = excl
	}
	var why string
	switch {
	case j.Select == nil:
		why = fmt.Sprintf("no select: %d whole vnodes", len(cand.units))
	case excl:
		if j.Place.Exclusive() {
			why = "place=" + j.Place.Sharing
		} else {
			why = "the vnodes' sharing makes every chunk exclusive"
		}
	case c.minCPUs > 0 && all(cand.chunks, func(u chunkReq) bool { return u.amounts["ncpus"] >= c.maxCPUs }):
		why = "every chunk takes all the CPUs of a vnode"
	default:
		return false, "chunks share vnodes"
	}
	for _, u := range cand.chunks {
		key := j.Queue + "|" + describeUnit(u)
		r, ok := c.misfit[key]
		if !ok {
			for _, v := range idle {
				if r = unitMisfit(c, v, u, j); r != "" {
					r = fmt.Sprintf("whole vnodes, but not every idle vnode will do (%s: %s)", v.n.Name, r)
					break
				}
			}
			c.misfit[key] = r
		}
		if r != "" {
			return false, r
		}
	}
	return true, why
}

// reference returns the vnodes the whole-node rule judges a job by: the
// idle vnodes, which the window solve chooses from, or all owned vnodes
// when none is idle.
func (c *cluster) reference() []*vnode {
	if c.ref == nil {
		for _, v := range c.vnodes {
			if v.idle {
				c.ref = append(c.ref, v)
			}
		}
		if len(c.ref) == 0 {
			c.ref = c.vnodes
		}
	}
	return c.ref
}

func all[T any](xs []T, f func(T) bool) bool {
	for _, x := range xs {
		if !f(x) {
			return false
		}
	}
	return true
}

// unitMisfit says why unit u of job j cannot go on the idle vnode v even
// when nothing else runs there, or "".
func unitMisfit(c *cluster, v *vnode, u chunkReq, j *pbs.Job) string {
	if v.n.Queue != "" && v.n.Queue != j.Queue {
		return "vnode belongs to queue " + v.n.Queue
	}
	for k, want := range u.amounts {
		if !c.checked[k] && !knownConsumables[k] {
			continue
		}
		if have := v.n.Available[k]; have < want {
			return fmt.Sprintf("%s=%s wanted, %s available", k, fmtAmount(k, want), fmtAmount(k, have))
		}
	}
	for k, want := range u.labels {
		if !labelMatches(c, v, k, want) {
			return fmt.Sprintf("%s=%s wanted, vnode has %q", k, want, v.n.Text[k])
		}
	}
	return ""
}

// unitFits reports unitMisfit(c, v, u, j) == "" without writing the
// reason (neverFits asks it of every vnode; TestUnitFitsMatchesMisfit
// keeps the two alike).
func unitFits(c *cluster, v *vnode, u chunkReq, j *pbs.Job) bool {
	if v.n.Queue != "" && v.n.Queue != j.Queue {
		return false
	}
	for k, want := range u.amounts {
		if (c.checked[k] || knownConsumables[k]) && v.n.Available[k] < want {
			return false
		}
	}
	for k, want := range u.labels {
		if !labelMatches(c, v, k, want) {
			return false
		}
	}
	return true
}

// labelMatches reports whether vnode v has property k = want. host and
// vnode match the vnode's name too; a property no owned vnode has is not
// a vnode matter and matches.
func labelMatches(c *cluster, v *vnode, k, want string) bool {
	if (k == "host" || k == "vnode") && want == v.n.Name {
		return true
	}
	if !c.checked[k] {
		return true
	}
	have, ok := v.n.Text[k]
	return ok && (have == want || strings.EqualFold(have, want) && isBoolWord(have))
}

func isBoolWord(s string) bool {
	switch strings.ToLower(s) {
	case "true", "false":
		return true
	}
	return false
}

// fmtAmount writes an amount the way PBS writes it: sizes with the
// largest exact unit (64gb, 1536mb), other resources as integers.
func fmtAmount(k string, v int64) string {
	if k != "mem" && k != "vmem" && k != "pmem" {
		return fmt.Sprint(v)
	}
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"pb", 1 << 50}, {"tb", 1 << 40}, {"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}} {
		if v != 0 && v%u.mult == 0 {
			return fmt.Sprintf("%d%s", v/u.mult, u.suffix)
		}
	}
	return fmt.Sprintf("%db", v)
}
