package cnf

import "slices"

// LeftJustified writes the dominance clauses of left-justified schedules:
// a job i starts at Lo_i, or at a slot where something on a node it may
// use ends (a running job's end, a reservation's end, a release), or
// where another waiting job j that may share a node with it ends:
//
//	[s_i = s] → ⋁_j [s_j = s − D_j]   for every other slot s of i's domain.
//
// Some optimal schedule satisfies them, and every schedule with weighted
// delay at most B can be turned into one that does with no more: if i
// starts at s > Lo_i and nothing on its nodes ends at s, every job
// running on them at s − 1 still runs at s, so i fits at s − 1 as well
// (capacities, exclusivity, reservations), and moving it there lowers
// ω_i·s_i. They are therefore safe for optimisation and for UNSAT proofs
// of bounds (not for enumerating all schedules). After Compress only the
// candidate slots need a clause (the others are outside the domain), and
// only the other jobs' candidate starts appear in it. Call after Base. It
// polls Stop once per job and returns ErrInterrupted when it says so.
func (e *Encoder) LeftJustified() error {
	m := e.M
	eq := map[[2]int]Lit{} // [s_j = x]
	startsAt := func(j, x int) Lit {
		if x == e.Lo[j] {
			return e.Start(j, x)
		}
		if l, ok := eq[[2]int{j, x}]; ok {
			return l
		}
		l := e.newVar()
		e.add(-l, e.Start(j, x))
		e.add(-l, -e.Start(j, x-1))
		eq[[2]int{j, x}] = l
		return l
	}
	nodesOf := make([]map[int]bool, len(m.Jobs))
	for i, j := range m.Jobs {
		nodesOf[i] = map[int]bool{}
		for _, o := range j.Options {
			nodesOf[i][o.Node] = true
		}
	}
	share := func(i, j int) bool {
		for n := range nodesOf[j] {
			if nodesOf[i][n] {
				return true
			}
		}
		return false
	}
	for i, j := range m.Jobs {
		if e.stopped() {
			return ErrInterrupted
		}
		// Static events on i's nodes.
		events := map[int]bool{e.Lo[i]: true}
		for _, o := range j.Options {
			for _, r := range o.Release {
				events[r] = true
			}
			for _, f := range o.Forbid {
				events[f[1]+1] = true
			}
			nd := &m.Nodes[o.Node]
			for _, r := range nd.Running {
				events[r.EndSlot] = true
			}
			for _, rv := range nd.Reserved {
				end := (rv[1] - m.Window.Time + m.Grid - 1) / m.Grid
				events[int(end)] = true
			}
		}
		var others []int
		for k := range m.Jobs {
			if k != i && share(i, k) {
				others = append(others, k)
			}
		}
		for _, s := range e.candidatesIn(i, e.Lo[i]+1, e.Hi[i]) {
			if e.halted {
				return ErrInterrupted // Stop said true in add
			}
			if events[s] {
				continue
			}
			clause := []Lit{-e.Start(i, s), e.Start(i, s-1)}
			for _, k := range others {
				if x := s - m.Jobs[k].Dur; e.IsCandidate(k, x) {
					clause = append(clause, startsAt(k, x))
				}
			}
			e.add(slices.Clone(clause)...)
		}
	}
	return nil
}
