package cnf

import (
	"errors"
	"fmt"
	"slices"

	"github.com/optsched/optsched/model"
)

// chJob is the CH term of one job: its possible values of CH − 1 − CHMin
// and the literals lits[x] ⇐ [CH − 1 − CHMin ≥ vals[x]] (lits[0] true).
type chJob struct {
	vals []int64
	lits []Lit
}

// maxCHPairs bounds Σ_k (A_k + 1) of one job (see CHTerm), the size of
// its value enumeration.
const maxCHPairs = 200_000

// CHTerm writes the encoding of the CH term of the objective (cp.Model.
// SetCHWeight): the objective diagrams then add κ·(CH_i − 1) for every
// job whose units may spread over two nodes or more. Call after Base and
// before the first objective diagram; it does nothing when the model has
// no CH term.
//
// The cost of a node set S of n nodes on a switch tree is a function of
// how many of them lie below each switch (model.HopCounter): with every
// node at depth D (links to the virtual top of the tree) and cnt_s the
// nodes of S below switch s,
//
//	Σ_{pairs of S} hops = 2D·C(n, 2) − 2·Σ_s C(cnt_s, 2),
//
// and the cost is max(1, ⌊P·c/n⌋) with P = Σ hops − C(n, 2) (lan-code) or
// P = 2·Σ hops (lan-paper). The encoding counts the job's nodes n (a
// totalizer over [units on node ≥ 1]) and, per switch above two or more
// of its nodes, cnt_s (a totalizer), so that B = β·Σ_s C(cnt_s, 2) =
// Σ_s Σ_{k≥2} β(k−1)·[cnt_s ≥ k] is a sum of literals and P = A_n − B
// (A_n = (2D−1)·C(n, 2) or 4D·C(n, 2), β = 2 or 4). For each n = k and
// each value v > 1 the cost can take, with T = ⌈v·k/c⌉ the least P that
// reaches it,
//
//	[n = k] ∧ ¬[CH ≥ v] → B ≥ A_k − T + 1,
//
// the right side a reduced BDD that all (k, v) share. So every schedule's
// literals [CH ≥ v] are forced up to its true cost: a bound on the
// objective is a bound on Eq. (2) + W·Σ CH, and no schedule is lost
// (setting them exactly is always possible). It returns an error when a
// job's usable nodes are not all at one depth of the tree, or when its
// value enumeration would be too large.
func (e *Encoder) CHTerm() error {
	m := e.M
	if m.CHKappa == 0 {
		return nil
	}
	if e.t == 0 {
		return errors.New("cnf: CHTerm before Base")
	}
	if e.global != nil {
		return errors.New("cnf: CHTerm after the objective diagrams were built")
	}
	topo, cost := m.Window.Topology, m.Window.Cost
	if topo == nil {
		return errors.New("cnf: the CH term needs the window's topology")
	}
	c := cost.HopCost
	if c < 1 {
		return fmt.Errorf("cnf: the CH term needs a positive hop cost, got %d", c)
	}
	e.ch = make([]*chJob, len(m.Jobs))
	for i, j := range m.Jobs {
		if e.stopped() {
			return ErrInterrupted
		}
		K := min(j.Units, len(j.Options))
		if K < 2 {
			continue // one node: CH = 1
		}
		depth := -1
		below := map[int32][]Lit{} // switch → [units on node ≥ 1] of the nodes below it
		var switches []int32
		var used [][]Lit
		for o, opt := range j.Options {
			id := m.Nodes[opt.Node].ID
			anc := topo.Ancestors(id)
			if depth >= 0 && len(anc)+1 != depth {
				return fmt.Errorf("cnf: job %s: the CH term needs its usable nodes at one depth of the switch tree (%s is at %d, others at %d)",
					j.ID, topo.Name(id), len(anc)+1, depth)
			}
			depth = len(anc) + 1
			a := e.Units(i, o, 1)
			used = append(used, []Lit{a})
			for _, s := range anc {
				if below[s] == nil {
					switches = append(switches, s)
				}
				below[s] = append(below[s], a)
			}
		}
		D := int64(depth)
		A := make([]int64, K+1) // A_k
		var beta int64
		pairs := 0
		for k := 2; k <= K; k++ {
			ck := int64(k * (k - 1) / 2)
			switch cost.Kind {
			case model.CostLanPaper:
				A[k], beta = 4*D*ck, 4
			default:
				A[k], beta = (2*D-1)*ck, 2
			}
			pairs += int(A[k]) + 1
		}
		if pairs > maxCHPairs {
			return fmt.Errorf("cnf: job %s: the CH term of up to %d nodes has too many values to encode", j.ID, K)
		}
		// The values of CH − 1.
		seen := map[int64]bool{0: true}
		vals := []int64{0}
		for k := 2; k <= K; k++ {
			for P := int64(0); P <= A[k]; P++ {
				v := max(1, P*c/int64(k)) - 1
				if !seen[v] {
					seen[v] = true
					vals = append(vals, v)
				}
			}
		}
		slices.Sort(vals)
		lits := make([]Lit, len(vals))
		lits[0] = e.t
		for x := 1; x < len(vals); x++ {
			lits[x] = e.newVar()
			if x > 1 {
				e.add(-lits[x], lits[x-1])
			}
		}
		// n, and B = β Σ_s C(cnt_s, 2) as Σ w·l over the counts' literals,
		// written negated for "B ≥ q".
		n := e.totalizer(used, K+1)
		var terms []term
		var wsum int64
		slices.Sort(switches)
		for _, s := range switches {
			lits := below[s]
			if len(lits) < 2 {
				continue
			}
			groups := make([][]Lit, len(lits))
			for k, l := range lits {
				groups[k] = []Lit{l}
			}
			cnt := e.totalizer(groups, K)
			for k := 2; k <= len(cnt); k++ {
				w := beta * int64(k-1)
				terms = append(terms, term{w, -cnt[k-1]})
				wsum += w
			}
		}
		pb := e.newPB(terms)
		atLeast := func(out []Lit, v int) Lit { // [n ≥ v]
			switch {
			case v <= 0:
				return e.t
			case v > len(out):
				return -e.t
			}
			return out[v-1]
		}
		for k := 2; k <= K; k++ {
			isK, above := atLeast(n, k), atLeast(n, k+1)
			for x := 1; x < len(vals); x++ {
				v := vals[x] + 1
				T := (v*int64(k) + c - 1) / c
				if T > A[k] {
					break
				}
				q := A[k] - T // B ≤ q ⇔ P ≥ T
				// B ≥ q + 1 ⇔ Σ w·(¬l) ≤ wsum − q − 1.
				g := pb.atMost(e, wsum-q-1)
				e.add(-isK, above, g, lits[x])
			}
		}
		// The diagram's levels count CH − 1 above the job's least
		// (cp.Model.CHMin, part of the lower bound LB); the literals of
		// values up to it are true in every schedule.
		least := m.CHMin(i)
		cj := &chJob{vals: []int64{0}, lits: []Lit{e.t}}
		for x, v := range vals {
			if v > least {
				cj.vals = append(cj.vals, v-least)
				cj.lits = append(cj.lits, lits[x])
			}
		}
		e.ch[i] = cj
	}
	return nil
}
