package cnf

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"

	"github.com/optsched/optsched/encode/cp"
)

// A Lit is a literal in DIMACS form: variable v ≥ 1 as v, its negation as
// −v. 0 is no literal.
type Lit int32

// Not returns the negation of l.
func (l Lit) Not() Lit { return -l }

// Var returns l's variable.
func (l Lit) Var() int {
	if l < 0 {
		return int(-l)
	}
	return int(l)
}

// A Sink receives clauses.
type Sink interface {
	// Add adds one clause (a disjunction of literals); it may keep the
	// slice only until it returns.
	Add(clause []Lit)
}

// A Formula is a Sink that keeps the clauses in memory and writes them as
// DIMACS.
type Formula struct {
	NumVars int
	lits    []Lit // clauses, each ended by 0
	n       int
	// Comments are written as "c" lines before the header.
	Comments []string
}

// Add implements Sink.
func (f *Formula) Add(clause []Lit) {
	for _, l := range clause {
		f.NumVars = max(f.NumVars, l.Var())
	}
	f.lits = append(f.lits, clause...)
	f.lits = append(f.lits, 0)
	f.n++
}

// NumClauses returns the number of clauses.
func (f *Formula) NumClauses() int { return f.n }

// Clauses calls fn with each clause in order.
func (f *Formula) Clauses(fn func(clause []Lit)) {
	start := 0
	for i, l := range f.lits {
		if l == 0 {
			fn(f.lits[start:i])
			start = i + 1
		}
	}
}

// WriteDIMACS writes f in the DIMACS CNF format ("p cnf V C").
func (f *Formula) WriteDIMACS(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, c := range f.Comments {
		fmt.Fprintf(bw, "c %s\n", c)
	}
	fmt.Fprintf(bw, "p cnf %d %d\n", f.NumVars, f.n)
	buf := make([]byte, 0, 16)
	for _, l := range f.lits {
		buf = buf[:0]
		if l == 0 {
			buf = append(buf, '0', '\n')
		} else {
			buf = fmt.Appendf(buf, "%d ", l)
		}
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// An Encoder writes the CNF of a cp.Model to a Sink.
type Encoder struct {
	M *cp.Model
	S Sink
	// Lo and Hi bound each job's start slot: Lo_i ≤ s_i ≤ Hi_i.
	Lo, Hi []int
	// Stop, when set, is polled during long constructions (Base,
	// LeftJustified, PoolCuts, ObjectiveGroups, CHTerm, AtMost); when it
	// returns true they give up with ErrInterrupted, and an encoder whose
	// Base or constraint writing was interrupted must not be solved. It is
	// also polled every 1,024 clauses: once it has said true the encoder
	// is halted and writes no more clauses (every later construction
	// returns ErrInterrupted or, without an error result, nothing), so
	// Stop must stay true once true, as a context's Err does.
	Stop   func() bool
	halted bool

	nvars   int
	clauses int
	t       Lit
	y       [][]Lit    // y[i][s−Lo_i] = [s_i ≤ s], s in [Lo_i, Hi_i); after Compress y[i][k] = [s_i ≤ cand[i][k]]
	cand    [][]int    // Compress's candidate starts; nil: every slot of the grid
	ch      []*chJob   // CHTerm's encoding per job (nil: none)
	x       [][][]Lit  // x[i][o][k−1] = [units of i on option o ≥ k]
	onNode  [][][2]int // per node: (job, option) pairs
	act     map[[2]int]Lit
	blocks  map[[2]int]bool
	global  map[int]*diagram // the objective diagrams over all jobs, by coarseness
	groups  [][]int          // ObjectiveGroups
	groupLB []int64
	buf     []Lit
}

// New prepares an encoder of m into s for start slots in [lo_i, hi_i]
// (lo_i ≥ the job's EST, hi_i ≥ lo_i). Call Base, then blocks and bounds.
func New(m *cp.Model, s Sink, lo, hi []int) (*Encoder, error) {
	if len(lo) != len(m.Jobs) || len(hi) != len(m.Jobs) {
		return nil, fmt.Errorf("cnf: %d jobs, %d lows and %d highs", len(m.Jobs), len(lo), len(hi))
	}
	for i, j := range m.Jobs {
		if lo[i] < j.EST || hi[i] < lo[i] {
			return nil, fmt.Errorf("cnf: job %s: start range [%d, %d] (earliest %d)", j.ID, lo[i], hi[i], j.EST)
		}
	}
	e := &Encoder{M: m, S: s, Lo: slices.Clone(lo), Hi: slices.Clone(hi), act: map[[2]int]Lit{}, blocks: map[[2]int]bool{}}
	e.onNode = make([][][2]int, len(m.Nodes))
	for i, j := range m.Jobs {
		for o, opt := range j.Options {
			e.onNode[opt.Node] = append(e.onNode[opt.Node], [2]int{i, o})
		}
	}
	return e, nil
}

// NumVars returns the number of variables used so far.
func (e *Encoder) NumVars() int { return e.nvars }

// NumClauses returns the number of clauses written so far.
func (e *Encoder) NumClauses() int { return e.clauses }

func (e *Encoder) newVar() Lit {
	e.nvars++
	return Lit(e.nvars)
}

// True returns the literal that is always true.
func (e *Encoder) True() Lit { return e.t }

// add writes a clause, dropping it when it holds a true literal and
// dropping false literals.
func (e *Encoder) add(lits ...Lit) {
	if e.halted {
		return
	}
	if e.clauses&1023 == 0 && e.Stop != nil && e.Stop() {
		// Polled every 1,024 clauses: no single step (one job's
		// totalizer, one node block) outlasts the deadline by more.
		e.halted = true
		return
	}
	e.buf = e.buf[:0]
	for _, l := range lits {
		switch l {
		case e.t:
			return
		case -e.t:
			continue
		}
		e.buf = append(e.buf, l)
	}
	e.clauses++
	e.S.Add(e.buf)
}

// Start returns y_{i,s} = [s_i ≤ s].
func (e *Encoder) Start(i, s int) Lit {
	switch {
	case s < e.Lo[i]:
		return -e.t
	case s >= e.Hi[i]:
		return e.t
	}
	if e.cand != nil {
		k, ok := slices.BinarySearch(e.cand[i], s)
		if !ok {
			k-- // the largest candidate below s
		}
		return e.y[i][k]
	}
	return e.y[i][s-e.Lo[i]]
}

// Units returns x_{i,o,k} = [units of job i on its option o ≥ k].
func (e *Encoder) Units(i, o, k int) Lit {
	switch {
	case k <= 0:
		return e.t
	case k > len(e.x[i][o]):
		return -e.t
	}
	return e.x[i][o][k-1]
}

// stopped polls Stop.
func (e *Encoder) stopped() bool {
	if !e.halted && e.Stop != nil && e.Stop() {
		e.halted = true
	}
	return e.halted
}

// Base writes the variables and the constraints that do not relate two
// waiting jobs: the order encoding of starts, alternative (unit counts,
// pack), the static cumulative and noOverlap against running jobs and
// reservations, and symmetry breaking between identical nodes. It polls
// Stop once per job (and per pair of symmetric nodes) and returns
// ErrInterrupted when it says so.
func (e *Encoder) Base() error {
	if err := e.base(); err != nil {
		return err
	}
	return e.symmetry()
}

// base is Base without the symmetry breaking.
func (e *Encoder) base() error {
	m := e.M
	e.t = e.newVar()
	e.S.Add([]Lit{e.t}) // not e.add, which drops clauses holding e.t
	e.clauses++
	e.y = make([][]Lit, len(m.Jobs))
	e.x = make([][][]Lit, len(m.Jobs))
	for i, j := range m.Jobs {
		if e.stopped() {
			return ErrInterrupted
		}
		if e.cand != nil {
			e.y[i] = make([]Lit, len(e.cand[i])-1)
		} else {
			e.y[i] = make([]Lit, e.Hi[i]-e.Lo[i])
		}
		for k := range e.y[i] {
			e.y[i][k] = e.newVar()
			if k > 0 {
				e.add(-e.y[i][k-1], e.y[i][k])
			}
		}
		e.x[i] = make([][]Lit, len(j.Options))
		for o, opt := range j.Options {
			e.x[i][o] = make([]Lit, opt.MaxUnits)
			for k := range e.x[i][o] {
				e.x[i][o][k] = e.newVar()
				if k > 0 {
					e.add(-e.x[i][o][k], e.x[i][o][k-1])
				}
			}
		}
	}
	for i := range m.Jobs {
		if e.stopped() {
			return ErrInterrupted
		}
		e.alternative(i)
		e.static(i)
	}
	return nil
}

// alternative writes Σ_o units_{i,o} = u_i (and pack).
func (e *Encoder) alternative(i int) {
	j := &e.M.Jobs[i]
	out := e.totalizer(e.x[i], j.Units+1)
	e.add(out[j.Units-1])
	if len(out) > j.Units {
		e.add(-out[j.Units])
	}
	if j.Pack && len(j.Options) > 1 {
		var firsts []Lit
		for o := range j.Options {
			firsts = append(firsts, e.x[i][o][0])
		}
		e.atMostOne(firsts)
	}
}

// static writes the release slots and reservation gaps of job i.
func (e *Encoder) static(i int) {
	j := &e.M.Jobs[i]
	for o, opt := range j.Options {
		for k, rel := range opt.Release {
			if rel > e.Lo[i] {
				e.add(-e.Units(i, o, k+1), -e.Start(i, rel-1))
			}
		}
		for _, f := range opt.Forbid {
			e.add(-e.Units(i, o, 1), e.Start(i, f[0]-1), -e.Start(i, f[1]))
		}
	}
}

// symmetry breaks the symmetry of identical nodes (one cp.Node class):
// with the class's nodes c_1 < c_2 < … and the jobs in index order, some
// optimal schedule has each node's first user (the lowest job index on
// it) no later than the next node's, so a job on c_k (k ≥ 2) implies that
// a job of no higher index is on c_{k−1}. With the CH term (cp.Model.
// SetCHWeight) exchanging nodes must also keep every hop distance, so the
// classes are split by leaf switch (siblings under one leaf are
// interchangeable in the tree).
func (e *Encoder) symmetry() error {
	m := e.M
	byClass := map[int][]int{}
	leaf := map[[2]int]int{} // (class, leaf switch) → split class
	for ni, nd := range m.Nodes {
		c := nd.Class
		if m.CHKappa > 0 {
			sw := -1
			if anc := m.Window.Topology.Ancestors(nd.ID); len(anc) > 0 {
				sw = int(anc[0])
			}
			k, ok := leaf[[2]int{c, sw}]
			if !ok {
				k = len(leaf)
				leaf[[2]int{c, sw}] = k
			}
			c = k
		}
		byClass[c] = append(byClass[c], ni)
	}
	// on(ni) lists the (job, option) pairs of node ni by job, the first
	// option of each job only (onNode is in job order).
	on := func(ni int) [][2]int {
		var out [][2]int
		for _, p := range e.onNode[ni] {
			if len(out) == 0 || out[len(out)-1][0] != p[0] {
				out = append(out, p)
			}
		}
		return out
	}
	for _, c := range slices.Sorted(maps.Keys(byClass)) {
		nodes := byClass[c]
		for k := 1; k < len(nodes); k++ {
			if e.stopped() {
				return ErrInterrupted
			}
			// The jobs in index order, those on prev joining the prefix
			// before those on cur are written.
			prevOn, curOn := on(nodes[k-1]), on(nodes[k])
			var prefix []Lit
			a, b := 0, 0
			for a < len(prevOn) || b < len(curOn) {
				i := math.MaxInt
				if a < len(prevOn) {
					i = prevOn[a][0]
				}
				if b < len(curOn) {
					i = min(i, curOn[b][0])
				}
				if a < len(prevOn) && prevOn[a][0] == i {
					prefix = append(prefix, e.x[i][prevOn[a][1]][0])
					a++
				}
				if b < len(curOn) && curOn[b][0] == i {
					e.add(append([]Lit{-e.x[i][curOn[b][1]][0]}, prefix...)...)
					b++
				}
			}
		}
	}
	return nil
}

// totalizer returns out[v−1] ⇔ [Σ of the unary numbers ≥ v] for v = 1 …
// min(k, total), each input a unary number (lits[k] → lits[k−1]).
func (e *Encoder) totalizer(groups [][]Lit, k int) []Lit {
	switch len(groups) {
	case 0:
		return nil
	case 1:
		return groups[0][:min(k, len(groups[0]))]
	}
	mid := len(groups) / 2
	a := e.totalizer(groups[:mid], k)
	b := e.totalizer(groups[mid:], k)
	n := min(k, len(a)+len(b))
	out := make([]Lit, n)
	for v := range out {
		out[v] = e.newVar()
	}
	at := func(s []Lit, v int) Lit { // [≥ v]
		switch {
		case v <= 0:
			return e.t
		case v > len(s):
			return -e.t
		}
		return s[v-1]
	}
	for p := 0; p <= len(a); p++ {
		for q := 0; q <= len(b); q++ {
			// up: a ≥ p ∧ b ≥ q → out ≥ p+q
			if v := p + q; v >= 1 {
				e.add(-at(a, p), -at(b, q), at(out, min(v, n)))
			}
			// down: a < p+1 ∧ b < q+1 → out < p+q+1
			if v := p + q + 1; v <= n {
				e.add(at(a, p+1), at(b, q+1), -at(out, v))
			}
		}
	}
	return out
}

// atMostOne writes Σ lits ≤ 1 (pairwise for few, a ladder otherwise).
func (e *Encoder) atMostOne(lits []Lit) {
	if len(lits) <= 5 {
		for a := range lits {
			for b := a + 1; b < len(lits); b++ {
				e.add(-lits[a], -lits[b])
			}
		}
		return
	}
	prev := lits[0]
	for _, l := range lits[1 : len(lits)-1] {
		s := e.newVar()
		e.add(-prev, s)
		e.add(-l, s)
		e.add(-prev, -l)
		prev = s
	}
	e.add(-prev, -lits[len(lits)-1])
}

// actLit returns act_{i@j}: implied by "i runs at s_j", that is
// s_i ≤ s_j < s_i + D_i. One clause per slot s of j's domain:
// (s_j = s) ∧ s_i ≤ s ∧ ¬(s_i ≤ s − D_i) → act.
func (e *Encoder) actLit(i, j int) Lit {
	key := [2]int{i, j}
	if l, ok := e.act[key]; ok {
		return l
	}
	a := e.newVar()
	e.act[key] = a
	d := e.M.Jobs[i].Dur
	lo := max(e.Lo[j], e.Lo[i])
	hi := min(e.Hi[j], e.Hi[i]+d-1)
	for _, s := range e.candidatesIn(j, lo, hi) {
		e.add(-e.Start(j, s), e.Start(j, s-1), -e.Start(i, s), e.Start(i, s-d), a)
	}
	return a
}

// mayRunAt reports whether job i can be running at some start of job j.
func (e *Encoder) mayRunAt(i, j int) bool {
	return max(e.Lo[j], e.Lo[i]) <= min(e.Hi[j], e.Hi[i]+e.M.Jobs[i].Dur-1)
}

// NodeBlock writes the cumulative and noOverlap constraints checked at
// the start of job j on node ni (see the package doc), once.
func (e *Encoder) NodeBlock(j, ni int) {
	key := [2]int{j, ni}
	if e.blocks[key] {
		return
	}
	e.blocks[key] = true
	m := e.M
	jo := -1
	for o, opt := range m.Jobs[j].Options {
		if opt.Node == ni {
			jo = o
		}
	}
	if jo < 0 {
		return
	}
	jj := &m.Jobs[j]
	on := -e.Units(j, jo, 1)
	nd := &m.Nodes[ni]
	type other struct {
		i, o int
		act  Lit
		z    []Lit
	}
	var others []other
	for _, p := range e.onNode[ni] {
		i, o := p[0], p[1]
		if i == j || !e.mayRunAt(i, j) {
			continue
		}
		a := e.actLit(i, j)
		ij := &m.Jobs[i]
		if ij.Excl || jj.Excl {
			e.add(on, -e.Units(i, o, 1), -a)
		}
		others = append(others, other{i: i, o: o, act: a})
	}
	for l, need := range jj.Req {
		if need <= 0 {
			continue
		}
		var terms []term
		for oi := range others {
			ot := &others[oi]
			r := m.Jobs[ot.i].Req[l]
			if r <= 0 {
				continue
			}
			if ot.z == nil {
				for k := 1; k <= len(e.x[ot.i][ot.o]); k++ {
					z := e.newVar()
					e.add(-e.Units(ot.i, ot.o, k), -ot.act, z)
					ot.z = append(ot.z, z)
				}
			}
			for _, z := range ot.z {
				terms = append(terms, term{r, z})
			}
		}
		if len(terms) == 0 {
			continue // beside running jobs only: the static releases cover it
		}
		for k := 1; k <= len(e.x[j][jo]); k++ {
			terms = append(terms, term{need, e.Units(j, jo, k)})
		}
		for _, r := range nd.Running {
			if r.Use[l] > 0 && r.EndSlot > e.Lo[j] {
				terms = append(terms, term{r.Use[l], e.Start(j, r.EndSlot-1)})
			}
		}
		root := e.atMost(terms, nd.Cap[l])
		e.add(on, root)
	}
}

// EncodeAll writes every node block: with Base and a bound, a complete
// CNF of the model.
func (e *Encoder) EncodeAll() {
	for j := range e.M.Jobs {
		for _, opt := range e.M.Jobs[j].Options {
			e.NodeBlock(j, opt.Node)
		}
	}
}

// HasBlock reports whether the block of job j on node ni was written.
func (e *Encoder) HasBlock(j, ni int) bool { return e.blocks[[2]int{j, ni}] }

// Decode reads a model of the CNF (val gives each literal's value): every
// job's start slot and its units per option.
func (e *Encoder) Decode(val func(Lit) bool) (slots []int, units [][]int) {
	m := e.M
	slots = make([]int, len(m.Jobs))
	units = make([][]int, len(m.Jobs))
	for i := range m.Jobs {
		cands := e.Candidates(i)
		k := 0
		for k < len(cands)-1 && !val(e.Start(i, cands[k])) {
			k++
		}
		slots[i] = cands[k]
		units[i] = make([]int, len(m.Jobs[i].Options))
		for o := range m.Jobs[i].Options {
			for k := 1; k <= len(e.x[i][o]); k++ {
				if val(e.Units(i, o, k)) {
					units[i][o] = k
				}
			}
		}
	}
	return slots, units
}

// Fix returns the assumptions that fix job i to start slot s with
// units[o] units on each option o. After Compress, s must be one of the
// job's candidates (IsCandidate), else the assumptions contradict.
func (e *Encoder) Fix(i, s int, units []int) []Lit {
	out := []Lit{e.Start(i, s), -e.Start(i, s-1)}
	for o, u := range units {
		if u > 0 {
			out = append(out, e.Units(i, o, u))
		}
		out = append(out, -e.Units(i, o, u+1))
	}
	return out
}

// Exclude returns a fresh literal r with the clauses
//
//	r → ¬[s_i = s]   for every job i and slot s of starts[i]
//
// (slots outside job i's domain, or not among its candidates after
// Compress, need none): assumed, it keeps the jobs off those starts for
// one solve, as reduced-cost fixing against a probe's bound does.
func (e *Encoder) Exclude(starts [][]int) Lit {
	r := e.newVar()
	for i, ss := range starts {
		for _, s := range ss {
			if e.IsCandidate(i, s) {
				e.add(-r, -e.Start(i, s), e.Start(i, s-1))
			}
		}
	}
	return r
}

// Assignment returns the literals that fix a schedule (slots and units
// per option, as Decode returns them): for a warm start or a test.
func (e *Encoder) Assignment(slots []int, units [][]int) []Lit {
	var out []Lit
	for i := range e.M.Jobs {
		for _, s := range e.Candidates(i) {
			if s == e.Hi[i] {
				break
			}
			if slots[i] <= s {
				out = append(out, e.Start(i, s))
			} else {
				out = append(out, -e.Start(i, s))
			}
		}
		for o := range e.M.Jobs[i].Options {
			for k := 1; k <= len(e.x[i][o]); k++ {
				if units[i][o] >= k {
					out = append(out, e.Units(i, o, k))
				} else {
					out = append(out, -e.Units(i, o, k))
				}
			}
		}
	}
	return out
}

// PoolCuts writes the constraints of a counting relaxation of the model
// (p = M.Pool(keep), whose jobs are M's in the same order) as redundant
// clauses: for every job j and pooled resource l that j uses, at j's
// start, Σ_{i≠j} q_{i,l}·act_{i@j} + q_{j,l} + Σ_held use_l·[s_j < end] ≤
// cap_l, with q_{i,l} = u_i·r_{i,l} of the pool. Every schedule of M is a
// schedule of its pool with the same starts (cp.Model.Pool), so these
// cut off no schedule; they give the solver the cluster-wide counting
// arguments that per-node placement hides. Call after Base.
func (e *Encoder) PoolCuts(p *cp.Model) error {
	m := e.M
	if len(p.Jobs) != len(m.Jobs) || len(p.Nodes) != 1 {
		return fmt.Errorf("cnf: pool cuts from a model of %d jobs and %d nodes", len(p.Jobs), len(p.Nodes))
	}
	nd := &p.Nodes[0]
	for j := range m.Jobs {
		if e.stopped() {
			return ErrInterrupted
		}
		pj := &p.Jobs[j]
		for l, need := range pj.Req {
			if need <= 0 {
				continue
			}
			var terms []term
			for i := range m.Jobs {
				q := int64(p.Jobs[i].Units) * p.Jobs[i].Req[l]
				if i == j || q <= 0 || !e.mayRunAt(i, j) {
					continue
				}
				terms = append(terms, term{q, e.actLit(i, j)})
			}
			if len(terms) == 0 {
				continue
			}
			for _, r := range nd.Running {
				if r.Use[l] > 0 && r.EndSlot > e.Lo[j] {
					terms = append(terms, term{r.Use[l], e.Start(j, r.EndSlot-1)})
				}
			}
			e.add(e.atMost(terms, nd.Cap[l]-int64(pj.Units)*need))
		}
	}
	return nil
}
