package cp

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// The optional CH term of the objective: Eq. (2) + W·Σ_i CH_i, CH_i the
// communication-hop cost of job i's node set as the window's cost model
// defines it (model.CostModel.Cost: lan-code or lan-paper, hop cost c; a
// job on one node costs 1). Multi-node placements cost more the farther
// apart their nodes are, so the term steers a job's units onto nodes
// close in the switch tree. In the weighted objective the term is
// κ·Σ_i (CH_i − 1), κ = W·Scale/g, so that Σ ω_i s_i + κ Σ (CH_i − 1)
// maps back to Eq. (2) + W·Σ CH_i (ObjectiveOfWeighted).

// maxCHFactor bounds the factor by which SetCHWeight multiplies the
// weights to make κ an integer.
const maxCHFactor = 1 << 12

// SetCHWeight adds W·Σ_i CH_i to the objective (W ≥ 0; 0 leaves it
// unchanged). To keep every coefficient an integer it multiplies the
// weights ω_i and Scale by the least factor F ≤ 4096 that makes κ =
// W·F·Scale/g an integer (within 1e-9); when there is none, κ is rounded
// and ExactWeights becomes false (the objective then only approximates
// the combined one, and no answer is claimed optimal). It needs the
// window's topology and exact queue weights.
func (m *Model) SetCHWeight(W float64) error {
	switch {
	case math.IsNaN(W) || math.IsInf(W, 0):
		return fmt.Errorf("cp: CH weight must be a finite number, got %v", W)
	case W < 0:
		return fmt.Errorf("cp: CH weight must be at least 0, got %v", W)
	case W == 0:
		return nil
	case m.Window.Topology == nil:
		return errors.New("cp: the CH term needs the window's topology, and the window has none")
	case !m.ExactWeights:
		return errors.New("cp: the CH term needs exact queue weights (expected waits whose least common multiple is at most 2^20 times the least)")
	case m.CHKappa != 0:
		return errors.New("cp: CH weight set twice")
	}
	if len(m.Jobs) == 0 {
		m.CHWeight = W
		return nil
	}
	maxW := int64(0)
	for _, j := range m.Jobs {
		maxW = max(maxW, j.Weight)
	}
	base := W * float64(m.Scale) / float64(m.Grid)
	F, exact := int64(1), false
	for f := int64(1); f <= maxCHFactor && maxW*f <= 1<<31; f++ {
		v := base * float64(f)
		if math.Abs(v-math.Round(v)) <= 1e-9*max(1, v) && math.Round(v) >= 1 {
			F, exact = f, true
			break
		}
	}
	if !exact {
		F = 1
		for F*2 <= maxCHFactor && maxW*F*2 <= 1<<31 {
			F *= 2
		}
	}
	kappa := int64(math.Round(base * float64(F)))
	if kappa < 1 || kappa > 1<<40 {
		// The weights that give an integer coefficient κ in [1, 2^40]:
		// κ = round(W·Scale·F/Grid), with F at most fMax (the largest
		// factor the queue weights leave) for the least W, and F = 1 for
		// the largest.
		fMax := int64(1)
		for fMax*2 <= maxCHFactor && maxW*fMax*2 <= 1<<31 {
			fMax *= 2
		}
		least := 0.5 * float64(m.Grid) / (float64(m.Scale) * float64(fMax))
		most := (1<<40 + 0.5) * float64(m.Grid) / float64(m.Scale)
		if kappa < 1 {
			return fmt.Errorf("cp: CH weight %v is too small for this window at a %d s grid: its integer coefficient per unit of CH cost rounds to 0; the weight must lie in [%.3g, %.3g] (give a larger --ch-weight, or a finer --granularity, which raises the least weight's coefficient)", W, m.Grid, least, most)
		}
		return fmt.Errorf("cp: CH weight %v is too large for this window at a %d s grid: its coefficient per unit of CH cost exceeds 2^40; the weight must lie in [%.3g, %.3g]", W, m.Grid, least, most)
	}
	for i := range m.Jobs {
		m.Jobs[i].Weight *= F
	}
	m.Scale *= F
	m.ExactWeights = exact
	m.CHWeight, m.CHKappa = W, kappa
	return nil
}

// CHNodes returns the topology ids of the nodes job i uses with units[o]
// units on each option o, sorted.
func (m *Model) CHNodes(i int, units []int) []int {
	var nodes []int
	for o, u := range units {
		if u > 0 {
			nodes = append(nodes, m.Nodes[m.Jobs[i].Options[o].Node].ID)
		}
	}
	slices.Sort(nodes)
	return nodes
}

// CH returns CH_i − 1 ≥ 0 for job i with units[o] units on each option o:
// the window's cost model's price of the node set (model.CostModel.Cost),
// less the 1 that every job pays.
func (m *Model) CH(i int, units []int) int64 {
	nodes := m.CHNodes(i, units)
	if len(nodes) <= 1 {
		return 0
	}
	return m.Window.Cost.Cost(m.Window.Topology, nodes) - 1
}

// Total returns the weighted objective of a schedule: Σ ω_i s_i, plus
// κ·Σ_i (CH_i − 1) when the CH term is on.
func (m *Model) Total(slots []int, units [][]int) int64 {
	W := m.Weighted(slots)
	if m.CHKappa > 0 {
		for i := range m.Jobs {
			W += m.CHKappa * m.CH(i, units[i])
		}
	}
	return W
}

// CHMin returns a lower bound on CH_i − 1 over every placement of job i:
// the job needs at least n nodes (one with place=pack, u_i with scatter
// or whole nodes, else ⌈u_i / the most units one node takes⌉), every pair
// of distinct nodes is at least 2 hops apart, and the cost model's price
// rises with the node count and the hops (model.CostModel.FromHops).
func (m *Model) CHMin(i int) int64 {
	if m.CHKappa == 0 {
		return 0
	}
	j := &m.Jobs[i]
	most := 0
	for _, o := range j.Options {
		most = max(most, o.MaxUnits)
	}
	n := 1
	if !j.Pack && most > 0 {
		n = (j.Units + most - 1) / most
	}
	if n <= 1 {
		return 0
	}
	pairs := int64(n) * int64(n-1) / 2
	return m.Window.Cost.FromHops(n, 2*pairs) - 1
}
