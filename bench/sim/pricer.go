package sim

import "github.com/optsched/optsched/model"

// A pricer computes the CH cost of the jobs the window policy starts
// (JobResult.Cost) on a goroutine of its own, beside the simulation:
// the costs are read only by the metrics, once the run is over, and on a
// 32,768-node cluster pricing every started job is a second a run that
// would otherwise lie on the simulation's path. The results take the
// costs when the pricer stops (stopPricing).
type pricer struct {
	topo *model.Topology
	cost model.CostModel
	todo chan pricing
	done chan struct{}
	// costs holds, by index into Result.Jobs, the costs priced; only run
	// writes it, until done is closed.
	costs []int64
}

// pricing is one window's started jobs: allocs, whose node lists nothing
// writes any more, recorded as Result.Jobs[at], [at+1], ….
type pricing struct {
	at     int
	allocs []model.Allocation
}

// pricerAhead is how many windows the simulation may run ahead of its
// pricer.
const pricerAhead = 64

// startPricing starts the pricer of a run of the window policy, in which
// every job starts at most once (at most len(jobs) results).
func (s *state) startPricing() {
	p := &pricer{topo: s.cfg.Topology, cost: s.cfg.Cost, todo: make(chan pricing, pricerAhead),
		done: make(chan struct{}), costs: make([]int64, len(s.jobs))}
	s.pricer = p
	go p.run()
}

func (p *pricer) run() {
	defer close(p.done)
	for w := range p.todo {
		for i, a := range w.allocs {
			p.costs[w.at+i] = p.cost.Cost(p.topo, a.Nodes)
		}
	}
}

// price hands the pricer the allocations just recorded as Result.Jobs[at:].
func (s *state) price(at int, allocs []model.Allocation) {
	if len(allocs) > 0 {
		s.pricer.todo <- pricing{at, allocs}
	}
}

// stopPricing waits for the pricer, if any, and gives the results their
// costs (every result was priced by it).
func (s *state) stopPricing() {
	p := s.pricer
	if p == nil {
		return
	}
	s.pricer = nil
	close(p.todo)
	<-p.done
	for i := range s.res.Jobs {
		s.res.Jobs[i].Cost = p.costs[i]
	}
}
