package heuristics

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
)

// mishraWindow returns a random window for the cost tests: a small one of
// any topology kind (i % 4 < 3), or a layout of up to 1,600 nodes with a
// random half to all of its nodes idle, so that jobs span hundreds of
// leaves and a dozen steps.
func mishraWindow(t *testing.T, rng *rand.Rand, i int) *model.Window {
	if i%4 < 3 {
		return instances.RandomSmall(rng, i%instances.NumKinds, 60, 3)
	}
	topo, err := model.NewLayout(1+rng.IntN(40), 1+rng.IntN(4), 1+rng.IntN(12))
	if err != nil {
		t.Fatal(err)
	}
	w := &model.Window{Topology: topo}
	keep := 1 + rng.IntN(2)
	for id := range topo.NumNodes() {
		if rng.IntN(2) < keep {
			w.Idle = append(w.Idle, id)
		}
	}
	if len(w.Idle) == 0 {
		w.Idle = []int{0}
	}
	return w
}

// randomComm sets random communication-intensive busy counts on m's
// leaves, at most their busy nodes.
func randomComm(rng *rand.Rand, m *mishra) {
	for s := range m.commCnt {
		m.commCnt[s] = 0
		if busy := m.size[s] - m.cnt[s]; busy > 0 {
			m.commCnt[s] = rng.IntN(busy + 1)
		}
	}
}

// TestMishraCostRuns: cost, which prices each step from the runs of ranks
// on one leaf (costRuns), answers what pricing every pair of every step
// answers, on random node sets made of runs and scattered nodes of small
// windows of every topology kind (leaves whose ids interleave included)
// and of layouts of up to 1,600 nodes.
func TestMishraCostRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	large := 0
	for i := range 1200 {
		w := mishraWindow(t, rng, i)
		m := newMishra(w)
		randomComm(rng, m)
		n := w.Topology.NumNodes()
		var nodes []int
		if rng.IntN(2) == 0 {
			for id := 0; id < n; {
				r := 1 + rng.IntN(16)
				if rng.IntN(3) > 0 {
					for k := id; k < min(n, id+r); k++ {
						nodes = append(nodes, k)
					}
				}
				id += r
			}
		} else {
			nodes = rng.Perm(n)[:rng.IntN(n+1)]
			slices.Sort(nodes)
		}
		if len(nodes) > 256 {
			large++
		}
		for _, pattern := range []string{"", model.PatternRD, model.PatternRHVD, model.PatternBinomial} {
			comm := rng.IntN(2) == 0
			if got, want := m.cost(nodes, comm, pattern), m.costEveryPair(nodes, comm, pattern); got != want {
				t.Fatalf("window %d, %d nodes, %q, comm %v: cost %v, every pair %v", i, len(nodes), pattern, comm, got, want)
			}
		}
		for s, e := range m.extra {
			if e != 0 {
				t.Fatalf("window %d: extra[%d] = %d after pricing", i, s, e)
			}
		}
	}
	if large < 50 {
		t.Errorf("only %d node sets of more than 256 nodes", large)
	}
}

// TestMishraPlanRuns: where every leaf's nodes are a run of ids, the
// greedy and balanced plans are priced from their leaves and counts alone
// (planRuns) at what the plan's nodes cost, priced pair by pair, and
// commit returns the nodes planNodes lists, while jobs take nodes and give
// them back on random windows.
func TestMishraPlanRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	ranked, plans := 0, 0
	patterns := []string{"", model.PatternRD, model.PatternRHVD, model.PatternBinomial}
	for i := range 600 {
		w := mishraWindow(t, rng, i)
		m := newMishra(w)
		if m.lowRank == nil {
			continue
		}
		ranked++
		randomComm(rng, m)
		type job struct {
			nodes []int
			comm  bool
		}
		var held []job
		for step := range 30 {
			if m.total > 0 && (len(held) == 0 || rng.IntN(3) > 0) {
				n := 1 + rng.IntN(m.total)
				comm := rng.IntN(2) == 0
				pattern := patterns[rng.IntN(len(patterns))]
				top := m.topSwitch(n)
				g := m.greedyPlan(nil, m.ranker(top, comm), n)
				b := m.balancedPlan(nil, m.ranker(top, comm), n)
				for _, plan := range [][]leafTake{g, b} {
					nodes := slices.Clone(m.planNodes(plan))
					if got, want := m.planCost(plan, comm, pattern), m.costEveryPair(nodes, comm, pattern); got != want {
						t.Fatalf("window %d step %d, job of %d, %q: plan priced %v, its nodes %v", i, step, n, pattern, got, want)
					}
					plans++
				}
				plan := g
				if rng.IntN(2) == 0 {
					plan = b
				}
				want := slices.Clone(m.planNodes(plan))
				got := m.commit(plan, comm)
				if !slices.Equal(got, want) {
					t.Fatalf("window %d step %d, job of %d: commit %v, plan's nodes %v", i, step, n, got, want)
				}
				held = append(held, job{got, comm})
				continue
			}
			if len(held) == 0 {
				break
			}
			k := rng.IntN(len(held))
			nodes := held[k].nodes
			for len(nodes) > 0 {
				leaf := m.t.Node(nodes[0]).Leaf
				r := 1
				for r < len(nodes) && m.t.Node(nodes[r]).Leaf == leaf {
					r++
				}
				m.release(leaf, nodes[:r], held[k].comm)
				nodes = nodes[r:]
			}
			held = slices.Delete(held, k, k+1)
		}
	}
	if ranked < 300 || plans < 10000 {
		t.Errorf("only %d windows with leaves in id order, %d plans priced", ranked, plans)
	}
}

// TestMishraCostBelow: pricing a plan with a bound (planCostBelow, how
// the adaptive allocator prices greedy once it knows balanced's cost)
// answers the plan's cost when that is below the bound, and otherwise a
// value from the bound up to the cost, on the greedy and balanced plans
// of random jobs on random windows, with bounds below, at and above the
// cost; and adaptive's pick (plan) is the plan the full costs choose
// (balanced on a tie), with identical plans counted. Every other window
// is indexed as an Incremental allocator's is, where plan walks the
// ranking once for both plans until they differ (the plans it is held
// to here walk it once each).
func TestMishraCostBelow(t *testing.T) {
	rng := rand.New(rand.NewPCG(55, 56))
	patterns := []string{"", model.PatternRD, model.PatternRHVD, model.PatternBinomial}
	var below, stopped, same, greedy, balanced, indexed int
	for i := range 400 {
		w := mishraWindow(t, rng, i)
		m := newMishra(w)
		randomComm(rng, m)
		if i%2 == 0 {
			if m.fx = newTreeIndex(m.tree); m.fx != nil {
				m.byCnt, m.fx.noPaths = nil, true
				if m.mx = newMishraIndex(m); m.mx != nil {
					indexed++
				}
			}
		}
		for range 10 {
			if m.total == 0 {
				break
			}
			job := model.Job{ID: "j", Nodes: 1 + rng.IntN(m.total), Comm: rng.IntN(2) == 0, Pattern: patterns[rng.IntN(len(patterns))]}
			top := m.topSwitch(job.Nodes)
			g := m.greedyPlan(nil, m.ranker(top, job.Comm), job.Nodes)
			b := m.balancedPlan(nil, m.ranker(top, job.Comm), job.Nodes)
			cg, cb := m.planCost(g, job.Comm, job.Pattern), m.planCost(b, job.Comm, job.Pattern)
			for _, c := range []struct {
				plan []leafTake
				cost float64
			}{{g, cg}, {b, cb}} {
				for _, bound := range []float64{c.cost * rng.Float64(), c.cost, c.cost * (1 + rng.Float64()), cg, cb} {
					got := m.planCostBelow(c.plan, job.Comm, job.Pattern, bound)
					switch {
					case c.cost < bound:
						if got != c.cost {
							t.Fatalf("window %d: cost %v below bound %v, priced %v", i, c.cost, bound, got)
						}
						below++
					case got < bound || got > c.cost:
						t.Fatalf("window %d: cost %v, bound %v, priced %v (want from the bound to the cost)", i, c.cost, bound, got)
					case got < c.cost:
						stopped++
					}
				}
			}
			want, wantPick := b, 1
			switch {
			case slices.Equal(g, b):
				same++
			case cb <= cg:
				balanced++
			default:
				want, wantPick = g, 0
				greedy++
			}
			plan, pick := m.plan(mishraAdaptive, &job)
			if !slices.Equal(plan, want) || pick != wantPick {
				t.Fatalf("window %d: adaptive plans %v (pick %d); greedy %v costs %v, balanced %v costs %v", i, plan, pick, g, cg, b, cb)
			}
			m.commit(plan, job.Comm)
		}
	}
	t.Logf("%d prices below the bound, %d stopped early; plans: %d identical, balanced cheaper %d, greedy cheaper %d; %d windows indexed", below, stopped, same, balanced, greedy, indexed)
	if below < 1000 || stopped < 500 || same < 100 || balanced < 100 || greedy < 40 || indexed < 150 {
		t.Errorf("the cases do not exercise every way: %d below the bound, %d stopped early, %d identical plans, balanced cheaper %d, greedy cheaper %d, %d windows indexed",
			below, stopped, same, balanced, greedy, indexed)
	}
}
