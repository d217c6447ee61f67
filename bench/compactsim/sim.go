package compactsim

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/optsched/optsched/bench/replay"
	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/pbs"
	"github.com/optsched/optsched/pbsched"
	"github.com/optsched/optsched/slurmsched"
	"github.com/optsched/optsched/solver"
)

// Vnodes is the simulated server's size: 16 vnodes of 4 CPUs, pairs
// (tier0) in quads (tier1).
const Vnodes = 16

// TicksPerSecond: the simulation's clock ticks ten times a compressed
// second.
const TicksPerSecond = 10

// Options set a simulation.
type Options struct {
	// Compact is the rule under test, its Max in compressed seconds.
	Compact heuristics.CompactWait
	// Interval and Delay are in ticks (defaults 20 and 2: a cycle every
	// 2 s, 0.2 s after a submission or an end).
	Interval, Delay int64
	// TimeLimit bounds each cycle's solve (default 200 ms).
	TimeLimit time.Duration
	// Solver is the window solver (default catalog.DefaultWindow, as
	// both `optsched pbs run` and `optsched slurm run` use).
	Solver solver.Solver
	// Server is "pbs" (the default: pbsched.Decide on pairs in quads)
	// or "slurm" (slurmsched.Decide on leaves of 4 under one root, with
	// walltimes rounded up to whole minutes as Slurm's time limits are);
	// or a model of the servers' own schedulers: ServerPsets (pbs_sched
	// with placement sets on the quads) or ServerSlurmBackfill (Slurm's
	// backfill with topology/tree). The models ignore Compact, Solver
	// and TimeLimit.
	Server string
}

// Result is one job's outcome, in compressed seconds.
type Result struct {
	Job             replay.Job
	Submit, Start   float64
	End             float64
	Wait, Run, BSLD float64
	Vnodes          []string
	CH              int64
}

// Summary aggregates a simulation.
type Summary struct {
	Jobs, MultiNode int
	MeanBSLD        float64
	MeanWait        float64
	MeanCH          float64
	Makespan        float64
	// CompactWaits counts the cycles in which a job waited for a switch.
	CompactWaits int
	Cycles       int
}

func (o Options) topology() (*model.Topology, error) {
	if o.Server == "slurm" || o.Server == ServerSlurmBackfill {
		return SlurmTopology()
	}
	return Topology()
}

// SlurmTopology is the Slurm test cluster's tree: leaves of 4 nodes under
// one root.
func SlurmTopology() (*model.Topology, error) {
	specs := []model.SwitchSpec{{Name: "root"}}
	for l := range Vnodes / 4 {
		leaf := model.SwitchSpec{Name: fmt.Sprintf("l%d", l)}
		for i := 4 * l; i < 4*l+4; i++ {
			leaf.Nodes = append(leaf.Nodes, fmt.Sprintf("v%d", i))
		}
		specs = append(specs, leaf)
		specs[0].Switches = append(specs[0].Switches, leaf.Name)
	}
	return model.BuildTopology(specs)
}

// Topology is the simulated PBS server's tree, as the planner builds it
// from tier0/tier1.
func Topology() (*model.Topology, error) {
	var specs []model.SwitchSpec
	root := model.SwitchSpec{Name: "root"}
	for q := range Vnodes / 4 {
		quad := model.SwitchSpec{Name: fmt.Sprintf("q%d", q)}
		for p := 2 * q; p < 2*q+2; p++ {
			specs = append(specs, model.SwitchSpec{Name: fmt.Sprintf("p%d", p), Nodes: []string{fmt.Sprintf("v%d", 2*p), fmt.Sprintf("v%d", 2*p+1)}})
			quad.Switches = append(quad.Switches, fmt.Sprintf("p%d", p))
		}
		specs = append(specs, quad)
		root.Switches = append(root.Switches, quad.Name)
	}
	return model.BuildTopology(append(specs, root))
}

type simJob struct {
	j                 replay.Job
	submit, run, wall int64 // ticks
	start, end        int64 // -1 until started
	vnodes            []string
	id                string
}

const base = 1_700_000_000

func ctime(t int64) string { return time.Unix(base+t, 0).UTC().Format("Mon Jan _2 15:04:05 2006") }

func hms(t int64) string { return fmt.Sprintf("%02d:%02d:%02d", t/3600, t/60%60, t%60) }

// Simulate replays jobs (from replay.Plan) and returns each job's result
// and the summary. An error is a plan Check rejected, or a planner error.
func Simulate(ctx context.Context, jobs []replay.Job, opt Options) ([]Result, Summary, error) {
	if opt.Interval <= 0 {
		opt.Interval = 20
	}
	if opt.Delay <= 0 {
		opt.Delay = 2
	}
	if opt.TimeLimit <= 0 {
		opt.TimeLimit = 200 * time.Millisecond
	}
	if opt.Solver == nil {
		opt.Solver = catalog.DefaultWindow()
	}
	// The rule's cap is in compressed seconds: ticks on the server.
	cw := opt.Compact
	cw.Max *= TicksPerSecond
	topo, err := opt.topology()
	if err != nil {
		return nil, Summary{}, err
	}
	sj := make([]*simJob, len(jobs))
	for i, j := range jobs {
		sj[i] = &simJob{j: j, submit: int64(j.At / (time.Second / TicksPerSecond)), run: j.Sleep * TicksPerSecond, wall: j.Walltime * TicksPerSecond,
			start: -1, end: -1, id: fmt.Sprintf("%d.sim", j.K)}
		sj[i].run = min(sj[i].run, sj[i].wall)
	}
	busy := map[string]*simJob{}
	decide := opt.decider(cw)
	if decide == nil {
		return nil, Summary{}, fmt.Errorf("compactsim: unknown server %q", opt.Server)
	}
	var sum Summary
	next := int64(0)
	done := 0
	for done < len(sj) {
		if err := ctx.Err(); err != nil {
			return nil, sum, err
		}
		now := next
		// Ends up to now.
		for _, j := range sj {
			if j.start >= 0 && j.end <= now && busy[j.vnodes[0]] == j {
				for _, v := range j.vnodes {
					delete(busy, v)
				}
				done++
			}
		}
		var queued, running []*simJob
		for _, j := range sj {
			switch {
			case j.submit > now:
			case j.start < 0:
				queued = append(queued, j)
			case j.end > now:
				running = append(running, j)
			}
		}
		if len(queued) > 0 {
			starts, waits, err := decide(ctx, now, busy, queued, running)
			if err != nil {
				return nil, sum, fmt.Errorf("tick %d: %w", now, err)
			}
			sum.Cycles++
			if waits {
				sum.CompactWaits++
			}
			byID := map[string]*simJob{}
			for _, j := range queued {
				byID[j.id] = j
			}
			for id, nodes := range starts {
				j := byID[id]
				if j == nil {
					return nil, sum, fmt.Errorf("tick %d: the plan starts %s, not queued", now, id)
				}
				j.start, j.end, j.vnodes = now, now+j.run, nodes
				for _, v := range j.vnodes {
					if busy[v] != nil {
						return nil, sum, fmt.Errorf("tick %d: %s starts on %s, busy", now, id, v)
					}
					busy[v] = j
				}
			}
		}
		// The next cycle: the interval, or Delay after the next
		// submission or end, whichever is first.
		next = now + opt.Interval
		for _, j := range sj {
			if j.submit > now {
				next = min(next, j.submit+opt.Delay)
			}
			if j.start >= 0 && j.end > now {
				next = min(next, j.end+opt.Delay)
			}
		}
		if next <= now {
			next = now + 1
		}
		// Jobs of run 0 end at once.
		for _, j := range sj {
			if j.start == now && j.end == now {
				next = now
			}
		}
		if next == now {
			next = now + 1
		}
	}
	out := make([]Result, len(sj))
	cost := model.DefaultCostModel
	var first, last int64 = sj[0].submit, 0
	for i, j := range sj {
		r := Result{Job: j.j, Submit: float64(j.submit) / TicksPerSecond, Start: float64(j.start) / TicksPerSecond, End: float64(j.end) / TicksPerSecond, Vnodes: j.vnodes}
		r.Wait = float64(j.start-j.submit) / TicksPerSecond
		r.Run = max(float64(j.end-j.start)/TicksPerSecond, 1)
		r.BSLD = max(1, (r.Wait+r.Run)/max(r.Run, 10))
		r.CH = 1
		if len(j.vnodes) > 1 {
			ids := make([]int, len(j.vnodes))
			for k, v := range j.vnodes {
				ids[k], _ = topo.Lookup(v)
			}
			r.CH = cost.Cost(topo, ids)
			sum.MultiNode++
			sum.MeanCH += float64(r.CH)
		}
		sum.MeanBSLD += r.BSLD
		sum.MeanWait += r.Wait
		first, last = min(first, j.submit), max(last, j.end)
		out[i] = r
	}
	sum.Jobs = len(sj)
	sum.MeanBSLD /= float64(len(sj))
	sum.MeanWait /= float64(len(sj))
	if sum.MultiNode > 0 {
		sum.MeanCH /= float64(sum.MultiNode)
	}
	sum.Makespan = float64(last-first) / TicksPerSecond
	return out, sum, nil
}

// SizeCH returns the mean CH cost of the jobs of each vnode count (2 or
// more).
func SizeCH(rs []Result) map[int]float64 {
	n, s := map[int]int{}, map[int]float64{}
	for _, r := range rs {
		if k := len(r.Vnodes); k > 1 {
			n[k]++
			s[k] += float64(r.CH)
		}
	}
	for k := range s {
		s[k] /= float64(n[k])
	}
	return s
}

// Keys returns a map's keys in order.
func Keys(m map[int]float64) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// decideFunc plans one cycle: the starts (job → vnodes) and whether a job
// waits for a switch.
type decideFunc func(ctx context.Context, now int64, busy map[string]*simJob, queued, running []*simJob) (map[string][]string, bool, error)

func (o Options) decider(cw heuristics.CompactWait) decideFunc {
	switch o.Server {
	case "", "pbs":
		return o.pbsDecide(cw)
	case "slurm":
		return o.slurmDecide(cw)
	case ServerPsets:
		return psetsDecide(true)
	case ServerPBSSched:
		return psetsDecide(false)
	case ServerSlurmBackfill:
		return slurmModel()
	}
	return nil
}

func (o Options) pbsDecide(cw heuristics.CompactWait) decideFunc {
	sc := &pbsched.Scope{Levels: []string{"tier0", "tier1"}, Period: o.Interval}
	qs, qerr := pbs.ParseQueues([]byte(`{"Queue":{"workq":{"queue_type":"Execution","started":"True"}}}`))
	return func(ctx context.Context, now int64, busy map[string]*simJob, queued, running []*simJob) (map[string][]string, bool, error) {
		if qerr != nil {
			return nil, false, qerr
		}
		var nodes, qjobs []string
		for i := range Vnodes {
			name := fmt.Sprintf("v%d", i)
			st, extra := "free", ""
			if j := busy[name]; j != nil {
				st, extra = "job-exclusive", fmt.Sprintf(`,"jobs":["%s/0"],"resources_assigned":{"ncpus":4}`, j.id)
			}
			nodes = append(nodes, fmt.Sprintf(`"%s":{"state":"%s"%s,"resources_available":{"ncpus":4,"tier0":"p%d","tier1":"q%d"}}`, name, st, extra, i/2, i/4))
		}
		for _, j := range queued {
			qjobs = append(qjobs, fmt.Sprintf(`"%s":{"job_state":"Q","queue":"workq","qtime":"%s","Resource_List":{"select":"%d:ncpus=4","place":"excl","walltime":"%s"}}`,
				j.id, ctime(j.submit), j.j.Chunks, hms(j.wall)))
		}
		for _, j := range running {
			var ev []string
			for _, v := range j.vnodes {
				ev = append(ev, "("+v+":ncpus=4)")
			}
			qjobs = append(qjobs, fmt.Sprintf(`"%s":{"job_state":"R","queue":"workq","qtime":"%s","stime":"%s","exec_vnode":"%s","Resource_List":{"select":"%d:ncpus=4","place":"excl","walltime":"%s"}}`,
				j.id, ctime(j.submit), ctime(j.start), strings.Join(ev, "+"), j.j.Chunks, hms(j.wall)))
		}
		ns, err := pbs.ParseNodes([]byte(fmt.Sprintf(`{"timestamp":%d,"nodes":{%s}}`, base+now, strings.Join(nodes, ","))))
		if err != nil {
			return nil, false, err
		}
		js, err := pbs.ParseJobs([]byte(fmt.Sprintf(`{"timestamp":%d,"Jobs":{%s}}`, base+now, strings.Join(qjobs, ","))), time.UTC)
		if err != nil {
			return nil, false, err
		}
		st := &pbsched.State{Jobs: js, Nodes: ns, Queues: qs, Now: base + now, Digest: "sim"}
		p, err := pbsched.Decide(ctx, st, sc, pbsched.Options{TimeLimit: o.TimeLimit, Solver: o.Solver, Partial: pbsched.PartialCP,
			ReserveAfter: math.Inf(1), StarveAfter: 24 * time.Hour * TicksPerSecond, CompactWait: cw})
		if err != nil {
			return nil, false, err
		}
		if err := pbsched.Check(st, sc, p); err != nil {
			return nil, false, err
		}
		out := map[string][]string{}
		for _, s := range p.Starts {
			out[s.Job] = s.Nodes()
		}
		return out, p.Reservation != nil && p.Reservation.Within != "", nil
	}
}

func (o Options) slurmDecide(cw heuristics.CompactWait) decideFunc {
	var topo strings.Builder
	for l := range Vnodes / 4 {
		fmt.Fprintf(&topo, "SwitchName=l%d Nodes=v%d,v%d,v%d,v%d\n", l, 4*l, 4*l+1, 4*l+2, 4*l+3)
	}
	topo.WriteString("SwitchName=root Switches=l0,l1,l2,l3\n")
	none := "none"
	// minutes: a walltime of w ticks as Slurm keeps it, whole minutes of
	// 60 compressed seconds, in the planner's minutes (60 ticks).
	minutes := func(w int64) int64 { return (w + 60*TicksPerSecond - 1) / (60 * TicksPerSecond) * TicksPerSecond }
	return func(ctx context.Context, now int64, busy map[string]*simJob, queued, running []*simJob) (map[string][]string, bool, error) {
		st := &slurmsched.State{Now: base + now, Topology: topo.String()}
		for i := range Vnodes {
			n := slurmsched.Node{Name: fmt.Sprintf("v%d", i), State: "idle", CPUs: 4, RealMemory: 8000, Partitions: []string{"p"}}
			if busy[n.Name] != nil {
				n.State, n.AllocCPUs, n.AllocMemory = "allocated", 4, 8000
			}
			st.Nodes = append(st.Nodes, n)
		}
		id := func(j *simJob) int64 { return int64(j.j.K) + 1 }
		for _, j := range running {
			m := minutes(j.wall)
			st.Jobs = append(st.Jobs, slurmsched.Job{ID: id(j), State: "RUNNING", Partition: "p", NodeCount: int64(len(j.vnodes)), CPUs: 4 * int64(len(j.vnodes)),
				Shared: &none, Nodes: strings.Join(j.vnodes, ","), SubmitTime: base + j.submit, StartTime: base + j.start, EndTime: base + j.start + m*60, TimeLimit: &m})
		}
		for _, j := range queued {
			m := minutes(j.wall)
			st.Jobs = append(st.Jobs, slurmsched.Job{ID: id(j), State: "PENDING", Reason: "JobHeldUser", Partition: "p", NodeCount: int64(j.j.Chunks), CPUs: 4 * int64(j.j.Chunks),
				Shared: &none, SubmitTime: base + j.submit, TimeLimit: &m})
		}
		sc := &slurmsched.Scope{}
		p, err := slurmsched.Decide(ctx, st, sc, slurmsched.Options{TimeLimit: o.TimeLimit, Solver: o.Solver, CompactWait: cw})
		if err != nil {
			return nil, false, err
		}
		if err := slurmsched.Check(st, sc, p); err != nil {
			return nil, false, err
		}
		byID := map[string]string{}
		for _, j := range queued {
			byID[fmt.Sprint(id(j))] = j.id
		}
		out := map[string][]string{}
		for _, s := range p.Starts {
			out[byID[s.Job]] = s.Nodes
		}
		waits := false
		for _, d := range p.Deferred {
			waits = waits || strings.HasPrefix(d.Reason, "waiting up to")
		}
		return out, waits, nil
	}
}
