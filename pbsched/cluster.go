package pbsched

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/pbs"
	"github.com/optsched/optsched/model/slurm"
)

// State is one snapshot of a PBS server, parsed: what a cycle decides
// from.
type State struct {
	Jobs  *pbs.Jobs
	Nodes *pbs.Nodes
	// Queues is nil when the execution queues are named by the scope
	// (Scope.ExecQueues) instead of read from qstat -Q -f.
	Queues *pbs.Queues
	// Now is the decision time: qstat's timestamp, else pbsnodes', else
	// the clock.
	Now int64
	// Digest is the SHA-256 of the input documents.
	Digest string
}

// Scope says which part of the server optsched schedules.
type Scope struct {
	// ExecQueues, when not nil, lists the only queues whose jobs are
	// candidates.
	ExecQueues map[string]bool
	// Owned, when not nil, lists the only vnodes optsched may start jobs
	// on; NodeList (--nodes) sets it when resolved against pbsnodes by
	// ResolveNodes.
	Owned    map[string]bool
	NodeList string
	// notes are remarks on the scope for the plan (--nodes entries that
	// name no vnode).
	notes []string
	// Levels are the vnode resources naming switch levels; TopologyConf
	// is the text of a Slurm topology.conf (overrides Levels).
	Levels       []string
	TopologyConf string
	// Period is the waiting period of NWP, in seconds.
	Period int64
}

// ResolveNodes sets Owned from NodeList, against the vnodes of pbsnodes
// (pbs.ResolveVnodes: names with brackets are taken literally, hostlists
// expanded); entries that name no vnode become a note of the plan. It
// does nothing when NodeList is empty.
func (sc *Scope) ResolveNodes(nodes *pbs.Nodes) error {
	if sc.NodeList == "" {
		return nil
	}
	exists := make(map[string]bool, len(nodes.Nodes)+len(nodes.Invalid))
	for i := range nodes.Nodes {
		exists[nodes.Nodes[i].Name] = true
	}
	for _, bad := range nodes.Invalid {
		exists[bad.Name] = true // named by --nodes, it is an error (buildCluster)
	}
	names, unmatched, err := pbs.ResolveVnodes(sc.NodeList, func(n string) bool { return exists[n] })
	if err != nil {
		return fmt.Errorf("--nodes: %w", err)
	}
	sc.Owned = make(map[string]bool, len(names))
	for _, n := range names {
		sc.Owned[n] = true
	}
	if len(unmatched) > 0 {
		sc.notes = append(sc.notes, fmt.Sprintf("--nodes: %s name no vnode of pbsnodes: %s", plural(len(unmatched), "entry"), abbreviate(unmatched, 5)))
	}
	return nil
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
	st    *State
	scope *Scope
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
	skipped []Reason
	// ignored counts vnodes of pbsnodes outside optsched's part.
	ignored int
	// hostOf maps every vnode of pbsnodes to its host
	// (resources_available.host, else its own name); cpuVnodes counts the
	// vnodes with CPUs of each host. A host with several is a
	// multi-vnode host, where place=scatter and exclhost are about hosts,
	// not vnodes.
	hostOf    map[string]string
	cpuVnodes map[string]int
	hostNodes map[string][]*pbs.Node
	// execUse sums, per vnode, the amounts the running jobs' exec_vnode
	// names there: used whatever pbsnodes' resources_assigned says.
	execUse map[string]model.Resources
	// ref caches reference(); exclAll, misfit, minCPUs and maxCPUs cache
	// facts about it for classify (by place; by queue and chunk).
	ref              []*vnode
	exclAll          map[pbs.Place]bool
	misfit           map[string]string
	minCPUs, maxCPUs int64
	notes            []string

	// never caches neverFits by fitKey, exclFree cpEligible's first
	// free vnode on which a place is exclusive ("" for none).
	never map[string]string
	// multiHost caches anyMultiVnodeHost; hostRulesCache hostRules.
	multiHost      *bool
	hostRulesCache map[hostRulesKey]string
	exclFree       map[pbs.Place]string
	// walls caches wallOf.
	walls map[string]int64
}

// Reason is a job and why something about it.
type Reason struct {
	Job    string `json:"job"`
	Reason string `json:"reason"`
}

// buildCluster turns a parsed state into the scheduling view: the
// topology over the owned vnodes, their idle/free status, the running
// jobs, and the candidate jobs classified for the whole-node or the
// partial-node path. Input that cannot be trusted is an error naming the
// job or vnode and the attribute.
func buildCluster(st *State, scope *Scope) (*cluster, error) {
	c := &cluster{st: st, scope: scope, byName: map[string]*vnode{}, consumable: map[string]bool{}, checked: map[string]bool{},
		notes: slices.Clone(scope.notes)}
	var owned []*pbs.Node
	var noCPUs []string
	// A vnode that does not parse (pbs.ParseNodesLenient) fails the cycle
	// when it is optsched's to manage, and is ignored, with a note, when
	// it is outside --nodes: one badly named vnode elsewhere on the
	// server must not stop the scheduler of this part.
	var invalid []string
	for _, bad := range st.Nodes.Invalid {
		if scope.Owned == nil || scope.Owned[bad.Name] {
			return nil, bad.Err
		}
		c.ignored++
		invalid = append(invalid, bad.Err.Error())
	}
	if len(invalid) > 0 {
		c.notes = append(c.notes, fmt.Sprintf("%s outside --nodes that pbsnodes describes invalidly ignored: %s",
			plural(len(invalid), "vnode"), abbreviate(invalid, 3)))
	}
	for i := range st.Nodes.Nodes {
		n := &st.Nodes.Nodes[i]
		if scope.Owned != nil && !scope.Owned[n.Name] {
			c.ignored++
			continue
		}
		if n.Available["ncpus"] <= 0 {
			// The natural vnode of a multi-vnode host (ncpus=0, no
			// custom resources): no chunk runs there.
			c.ignored++
			noCPUs = append(noCPUs, n.Name)
			continue
		}
		owned = append(owned, n)
	}
	if len(noCPUs) > 0 {
		c.notes = append(c.notes, fmt.Sprintf("%s with no CPUs (resources_available.ncpus 0 or absent, as the natural vnode of a multi-vnode host) ignored: %s",
			plural(len(noCPUs), "vnode"), abbreviate(noCPUs, 5)))
	}
	if len(owned) == 0 {
		if len(noCPUs) > 0 {
			return nil, fmt.Errorf("pbsnodes: none of the %d vnodes is optsched's to schedule: the ones it may use have no CPUs (%s)", len(st.Nodes.Nodes), abbreviate(noCPUs, 5))
		}
		return nil, fmt.Errorf("pbsnodes: none of the %d vnodes is optsched's to schedule (check --nodes)", len(st.Nodes.Nodes))
	}
	if a, b := st.Jobs.Timestamp, st.Nodes.Timestamp; a > 0 && b > 0 && max(a-b, b-a) > 300 {
		c.notes = append(c.notes, fmt.Sprintf("qstat and pbsnodes were taken %d s apart: the state may be stale", max(a-b, b-a)))
	}
	c.hostOf, c.cpuVnodes, c.hostNodes = map[string]string{}, map[string]int{}, map[string][]*pbs.Node{}
	for i := range st.Nodes.Nodes {
		n := &st.Nodes.Nodes[i]
		h := n.Text["host"]
		if h == "" {
			h = n.Name
		}
		c.hostOf[n.Name] = h
		c.hostNodes[h] = append(c.hostNodes[h], n)
		if n.Available["ncpus"] > 0 {
			c.cpuVnodes[h]++
		}
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
	// What they use there counts as used even when pbsnodes shows
	// nothing assigned (execUse).
	busy := map[string]bool{}
	c.execUse = map[string]model.Resources{}
	for i := range st.Jobs.Jobs {
		for _, ch := range st.Jobs.Jobs[i].ExecVnode {
			for _, u := range ch {
				busy[u.Vnode] = true
				r := c.execUse[u.Vnode]
				if r == nil {
					r = model.Resources{}
					c.execUse[u.Vnode] = r
				}
				for k, a := range u.Amounts {
					r[k] += a
				}
				if _, ok := u.Amounts["ncpus"]; !ok && len(u.Amounts) == 0 {
					// A bare vnode name in exec_vnode: at least a CPU.
					r["ncpus"] = max(r["ncpus"], 1)
				}
			}
		}
	}
	// A running job exclusive on a multi-vnode host holds every vnode of
	// it, also those its exec_vnode does not name.
	hostHeld := map[string]string{}
	for i := range st.Jobs.Jobs {
		j := &st.Jobs.Jobs[i]
		for _, name := range pbs.Vnodes(j.ExecVnode) {
			h := c.hostOf[name]
			if n := c.nodeNamed(name); n != nil && c.multiVnodeHost(h) && hostExclusiveOn(n, j.Place) {
				hostHeld[h] = j.ID
			}
		}
	}
	held := 0
	for _, n := range inTopo {
		id, _ := c.topo.Lookup(n.Name)
		v := &vnode{n: n, id: id, free: n.Free()}
		if _, ok := hostHeld[c.hostOf[n.Name]]; ok && v.free {
			v.free = false
			held++
		}
		v.idle = v.free && len(n.Jobs) == 0 && !busy[n.Name] && allZero(n.Assigned)
		c.vnodes = append(c.vnodes, v)
		c.byName[n.Name] = v
		for k := range n.Assigned {
			c.consumable[k] = true
			c.checked[k] = true
		}
		for k := range n.Text {
			c.checked[k] = true
		}
		for k := range n.Available {
			c.checked[k] = true
		}
	}
	if held > 0 {
		c.notes = append(c.notes, fmt.Sprintf("%s on hosts held exclusively (exclhost) by running jobs taken as not free", plural(held, "free vnode")))
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
	t, note, missing, err := c.scope.Topology(owned)
	if err != nil {
		return err
	}
	c.topo, c.topoNote = t, note
	switch {
	case c.scope.TopologyConf != "" && missing > 0:
		c.notes = append(c.notes, fmt.Sprintf("%d owned vnodes are not in topology.conf and are left alone", missing))
	case c.scope.TopologyConf == "" && strings.HasPrefix(note, "flat"):
		c.notes = append(c.notes, "no topology: every pair of vnodes is taken to be equally far apart ("+note+")")
	}
	return nil
}

// Topology builds the switch tree over the vnodes owned, as Decide reads
// it: from TopologyConf when given, else from the Levels resources, else
// flat (every pair equally far apart; the note then starts with "flat").
// note says which, for people; missing counts the owned vnodes that
// topology.conf does not list.
func (sc *Scope) Topology(owned []*pbs.Node) (t *model.Topology, note string, missing int, err error) {
	names := make([]string, len(owned))
	for i, n := range owned {
		names[i] = n.Name
	}
	if sc.TopologyConf != "" {
		t, err := slurm.ParseTopology(sc.TopologyConf)
		if err != nil {
			return nil, "", 0, fmt.Errorf("--topology-conf: %w", err)
		}
		for _, n := range names {
			if _, ok := t.Lookup(n); !ok {
				missing++
			}
		}
		if missing == len(names) {
			return nil, "", missing, fmt.Errorf("--topology-conf: none of the %d owned vnodes is in topology.conf (vnode names must match its Nodes= lists)", len(names))
		}
		return t, fmt.Sprintf("topology.conf: %d switches, %d levels", t.NumSwitches(), t.Height()), missing, nil
	}
	nodes := make([]pbs.Node, len(owned))
	for i, n := range owned {
		nodes[i] = *n
	}
	t, err = pbs.TierTopology(nodes, sc.Levels)
	switch {
	case err == nil:
		return t, fmt.Sprintf("vnode resources %s: %d switches, %d levels", strings.Join(sc.Levels, ", "), t.NumSwitches(), t.Height()), 0, nil
	case err != pbs.ErrNoTiers:
		return nil, "", 0, err
	}
	if t, err = pbs.FlatTopology(names); err != nil {
		return nil, "", 0, fmt.Errorf("pbsnodes: %w", err)
	}
	return t, "flat: no vnode has " + strings.Join(sc.Levels, " or ") + " and no --topology-conf was given", 0, nil
}

// used returns what is in use on v: per resource, the larger of
// resources_assigned and the running jobs' exec_vnode amounts there (the
// two documents are read a moment apart, and pbsnodes may lag qstat).
func (c *cluster) used(v *vnode) model.Resources {
	r := maps.Clone(v.n.Assigned)
	if r == nil {
		r = model.Resources{}
	}
	for k, a := range c.execUse[v.n.Name] {
		r[k] = max(r[k], a)
	}
	return r
}

func allZero(r model.Resources) bool {
	for _, v := range r {
		if v != 0 {
			return false
		}
	}
	return true
}

// runningEnd is when running job j is expected to end: stime (now when
// unknown) plus its walltime (a year without one), and after now.
func (c *cluster) runningEnd(j *pbs.Job) int64 {
	wall := j.Walltime
	if wall == 0 {
		wall = defaultWalltime
	}
	start := j.STime
	if start == 0 {
		start = c.st.Now
	}
	return max(start+wall, c.st.Now+1)
}

// readRunning collects the running jobs on owned vnodes for the window.
func (c *cluster) readRunning() error {
	for i := range c.st.Jobs.Jobs {
		j := &c.st.Jobs.Jobs[i]
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
		c.running = append(c.running, model.RunningJob{ID: j.ID, Nodes: ids, End: c.runningEnd(j)})
	}
	return nil
}

// readCandidates picks the queued jobs optsched may start and classifies
// them; the other queued jobs are skipped with a reason.
func (c *cluster) readCandidates() error {
	for i := range c.st.Jobs.Jobs {
		j := &c.st.Jobs.Jobs[i]
		if j.State != "Q" {
			continue
		}
		if why := c.notCandidate(j); why != "" {
			c.skipped = append(c.skipped, Reason{j.ID, why})
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
		return "job array: qrun starts its subjobs one by one, each a job of its own in qstat -t (read without -t, they are not listed)"
	}
	if c.scope.ExecQueues != nil && !c.scope.ExecQueues[j.Queue] {
		return fmt.Sprintf("queue %s is not one optsched schedules (--exec-queues)", j.Queue)
	}
	if c.st.Queues != nil {
		q, ok := c.st.Queues.Lookup(j.Queue)
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
	cand.submit = min(max(firstNonZero(j.QTime, j.CTime, c.st.Now), 0), c.st.Now)
	wait := c.st.Now - firstNonZero(j.ETime, j.QTime, j.CTime, c.st.Now)
	if j.HasEligibleTime {
		wait = j.EligibleTime
	}
	if wait > 0 && c.scope.Period > 0 {
		cand.nwp = int(min(wait/c.scope.Period, 1<<31-1))
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

// nodeNamed returns the vnode of pbsnodes with that name, or nil.
func (c *cluster) nodeNamed(name string) *pbs.Node {
	for _, n := range c.hostNodes[c.hostOf[name]] {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// anyMultiVnodeHost reports whether some host has several vnodes with
// CPUs.
func (c *cluster) anyMultiVnodeHost() bool {
	for _, n := range c.cpuVnodes {
		if n > 1 {
			return true
		}
	}
	return false
}

// multiVnodeHost reports whether host h has several vnodes with CPUs.
func (c *cluster) multiVnodeHost(h string) bool { return c.cpuVnodes[h] > 1 }

// hostExclusiveOn reports whether a job with place p gets the whole host
// of vnode n to itself ([PBS 2022.1 RG] pbs_node_attributes, sharing:
// force_exclhost always, default_exclhost unless the job asks for
// shared, otherwise place=exclhost; ignore_excl never).
func hostExclusiveOn(n *pbs.Node, p pbs.Place) bool {
	switch n.Sharing {
	case "force_exclhost":
		return true
	case "ignore_excl", "force_excl":
		return false
	case "default_exclhost":
		return p.Sharing != "shared"
	}
	return p.Sharing == "exclhost"
}

// hostRules reports whether a job's place asks for something of hosts
// that differs from vnodes on this cluster: scatter (one chunk per host),
// pack (one host, not one vnode) or host exclusivity, on a multi-vnode
// host among vs.
func (c *cluster) hostRules(cand *candidate, vs []*vnode) string {
	if !c.hasMultiVnodeHosts() {
		return "" // every host has one vnode with CPUs: hosts are vnodes
	}
	// The answer depends on the place, whether the job has several
	// units, and the vnode set (the reference vnodes or all): cached.
	if len(vs) == 0 {
		return ""
	}
	key := hostRulesKey{cand.job.Place, len(cand.units) > 1, len(vs), &vs[0]}
	if r, ok := c.hostRulesCache[key]; ok {
		return r
	}
	r := c.hostRulesOn(cand, vs)
	if c.hostRulesCache == nil {
		c.hostRulesCache = map[hostRulesKey]string{}
	}
	c.hostRulesCache[key] = r
	return r
}

// hasMultiVnodeHosts is anyMultiVnodeHost, computed once.
func (c *cluster) hasMultiVnodeHosts() bool {
	if c.multiHost == nil {
		m := c.anyMultiVnodeHost()
		c.multiHost = &m
	}
	return *c.multiHost
}

// hostRulesKey keys hostRules' cache.
type hostRulesKey struct {
	place pbs.Place
	multi bool
	n     int
	first **vnode
}

// hostRulesOn is hostRules without the cache.
func (c *cluster) hostRulesOn(cand *candidate, vs []*vnode) string {
	for _, v := range vs {
		if !c.multiVnodeHost(c.hostOf[v.n.Name]) {
			continue
		}
		if cand.job.Place.Arrangement == "scatter" && len(cand.units) > 1 {
			return "place=scatter on multi-vnode hosts: one chunk per host"
		}
		if cand.job.Place.Arrangement == "pack" && len(cand.units) > 1 {
			return "place=pack on multi-vnode hosts: all chunks on one host, over its vnodes"
		}
		if hostExclusiveOn(v.n, cand.job.Place) {
			return "exclusive on multi-vnode host " + c.hostOf[v.n.Name] + ": the whole host"
		}
	}
	return ""
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
	if j.Place.Group != "" && len(cand.units) > 1 {
		return false, "place=group=" + j.Place.Group + ": all chunks in one group"
	}
	idle := c.reference()
	if why := c.hostRules(cand, idle); why != "" {
		return false, why
	}
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
	// In the resources' name order, so that the reason is the same from
	// run to run (the maps' order is random).
	for _, k := range slices.Sorted(maps.Keys(u.amounts)) {
		want := u.amounts[k]
		if !c.checks(k) {
			continue
		}
		if have := v.n.Available[k]; have < want {
			return fmt.Sprintf("%s=%s wanted, %s available", k, fmtAmount(k, want), fmtAmount(k, have))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(u.labels)) {
		if want := u.labels[k]; !labelMatches(c, v, k, want) {
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

// checks reports whether the amounts of resource k are checked against
// the vnodes: only when some owned vnode lists k in resources_available
// or resources_assigned. A resource no vnode offers (vmem on most
// systems, a server-level licence) is not a vnode matter.
func (c *cluster) checks(k string) bool { return c.checked[k] }

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

// abbreviate lists names, at most n of them and how many more.
func abbreviate(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}
