package sat

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"

	"github.com/optsched/optsched/encode/cnf"
)

// encodeRate is how many of its variables (start candidates, units and
// the dominance's equalities) a search's encoding is taken to write per
// second, and maxEncodeVars the most a search may have. Measured on
// heavy-load Eurora-like windows (120 jobs at 95 % load, 0.5–1.5 million
// candidates, a 2-core machine): 650,000 variables a second with the main
// and proving searches writing at once, about 900 bytes of resident memory
// a variable per search, the SAT solver's tables included. Growing those
// tables is the one step no deadline can interrupt (up to half a second
// when it happened in the middle of an encoding), so a search grows them
// once, before writing. 600,000 variables keep the two searches under
// 1 GiB at the very worst; the 30-job windows of bench limits peak under
// 250 MB.
const (
	encodeRate    = 500_000
	maxEncodeVars = 600_000
)

// encodingFits reports whether a search of vars variables may be encoded:
// at most maxEncodeVars, and, with a deadline, written within the time
// left at encodeRate.
func encodingFits(ctx context.Context, vars int) bool {
	if vars > maxEncodeVars {
		return false
	}
	if dl, ok := ctx.Deadline(); ok {
		return float64(vars) <= encodeRate*time.Until(dl).Seconds()
	}
	return true
}

// giniSink adds clauses to a gini solver. It reserves variables ahead,
// in doubling blocks, with a tautology on the block's last variable:
// gini rescans every clause for its initial phases whenever a solve finds
// new variables, which the lazy blocks and diagrams add between solves.
type giniSink struct {
	g        *gini.Gini
	reserved int
}

// reserve makes gini hold variables up to n (see Add).
func (s *giniSink) reserve(n int) {
	if n > s.reserved {
		s.reserved = n
		v := z.Var(s.reserved)
		s.g.Add(v.Pos())
		s.g.Add(v.Neg())
		s.g.Add(0)
	}
}

func (s *giniSink) Add(c []cnf.Lit) {
	top := 0
	for _, l := range c {
		top = max(top, l.Var())
	}
	if top > s.reserved {
		s.reserved = max(2*s.reserved, top+4096)
		v := z.Var(s.reserved)
		s.g.Add(v.Pos())
		s.g.Add(v.Neg())
		s.g.Add(0)
	}
	for _, l := range c {
		s.g.Add(z.Dimacs2Lit(int(l)))
	}
	s.g.Add(0)
}

// build writes the search's SAT encoding on its own gini instance: the
// start domains (domains), restricted to their candidates (compress),
// and — when its variables fit in the time and memory left (fits) — the
// clauses (write). It returns false when the encoding was not written:
// the deadline stopped it, or it would not fit. Writing polls the
// deadline: on a large window it takes longer than the time limit, and
// an interrupted encoding is dropped (the incumbent and bound stand).
func (t *searcher) build(ctx context.Context, groups *groupBounds) (bool, error) {
	lo, hi := t.domains(groups)
	g := gini.New()
	sink := &giniSink{g: g}
	enc, err := cnf.New(t.m, sink, lo, hi)
	if err != nil {
		return false, err
	}
	enc.Stop = func() bool { return ctx.Err() != nil }
	t.enc, t.g = enc, g
	if ok, err := t.compress(lo, hi); !ok || err != nil {
		return false, err
	}
	vars, ok := t.fits(ctx)
	if !ok {
		return false, nil
	}
	// Grow the solver's tables once, now, rather than by doubling in the
	// middle of writing the encoding, where no deadline can stop it.
	sink.reserve(vars + vars/4)
	return t.write(groups)
}

// interrupted reports whether err is the deadline's interruption of the
// encoding, and counts it.
func (t *searcher) interrupted(err error) bool {
	if errors.Is(err, cnf.ErrInterrupted) {
		t.stats.EncodingInterrupted++
		return true
	}
	return false
}

// domains returns the start domains of the search, [Lo_i, Hi_i]: Hi_i from
// the incumbent's slack, narrowed by the group bounds and the reduced-cost
// fixing and kept at least at the incumbent's start; the serial horizon
// without an incumbent.
func (t *searcher) domains(groups *groupBounds) (lo, hi []int) {
	m, best, lb := t.m, t.best, t.lb
	if best == nil {
		return Domains(m, math.MaxInt64/2)
	}
	lo, hi = Domains(m, best.w)
	if groups != nil {
		// A schedule no worse than best leaves job i of group g at
		// most W_UB − LB − (the other groups' bounds) of weighted
		// delay.
		for g, jobs := range groups.groups {
			room := best.w - lb - (groups.total - groups.delta[g])
			for _, i := range jobs {
				hi[i] = min(hi[i], lo[i]+int(max(0, room)/m.Jobs[i].Weight))
			}
		}
	}
	if t.fix != nil {
		// Past its last candidate that the fixing leaves, no better
		// schedule starts job i.
		for i, c := range t.fix.cands {
			for k := len(c) - 1; k >= 0; k-- {
				if t.fix.lb[i][k] < best.w-lb {
					hi[i] = max(lo[i], min(hi[i], c[k]))
					break
				}
			}
		}
	}
	for i := range hi {
		hi[i] = max(hi[i], best.slots[i])
	}
	return lo, hi
}

// compress counts the slots of the domains [lo, hi] and restricts the
// encoder to their candidates in the compressed time domain (cnf.Closure,
// holding the incumbent's starts, less those the fixing rules out), or
// keeps the grid: with Solver.Grid, or when the closure is over its work
// limit (stats "closure_fallback"). false: the deadline stopped it.
func (t *searcher) compress(lo, hi []int) (bool, error) {
	grid := 0
	for i := range lo {
		grid += hi[i] - lo[i] + 1
	}
	t.stats.DomainSlots += grid
	if t.opt.Grid {
		t.stats.DomainCandidates += grid
		return true, nil
	}
	var extra [][]int
	if t.best != nil {
		extra = make([][]int, len(t.m.Jobs))
		for i := range extra {
			extra[i] = []int{t.best.slots[i]}
		}
	}
	cands, err := cnf.ClosureStop(t.m, lo, hi, extra, closureWork, t.enc.Stop)
	switch {
	case t.interrupted(err):
		return false, nil
	case errors.Is(err, cnf.ErrClosureTooLarge):
		t.stats.ClosureFallback++
		t.stats.DomainCandidates += grid
		return true, nil
	case err != nil:
		return false, err
	}
	if t.fix != nil && t.best != nil {
		cands = t.kept(cands)
	}
	if err := t.enc.Compress(cands); err != nil {
		return false, err
	}
	for _, c := range cands {
		t.stats.DomainCandidates += len(c)
	}
	return true, nil
}

// kept returns cands less the starts that the fixing rules out for a
// schedule better than the incumbent: each job keeps its first candidate
// (Lo_i, which cnf.Encoder.Compress needs) and the incumbent's start.
func (t *searcher) kept(cands [][]int) [][]int {
	best := t.best
	out := make([][]int, len(cands))
	for i, c := range cands {
		for k, s := range c {
			if k == 0 || s == best.slots[i] || t.fix.at(i, s) < best.w-t.lb {
				out[i] = append(out[i], s)
			}
		}
	}
	return out
}

// fits returns the encoding's variables — a start literal per candidate,
// a unit literal per option and unit, and with the left-justified
// dominance up to one [s_j = x] literal per candidate more — and whether
// they can be written within the time left and the memory bound
// (encodingFits); a search whose encoding cannot is not started (stats
// "encoding_skipped").
func (t *searcher) fits(ctx context.Context) (int, bool) {
	vars := 0
	for i, j := range t.m.Jobs {
		c := t.enc.NumCandidates(i)
		vars += c
		if t.dominance() {
			vars += c
		}
		for _, o := range j.Options {
			vars += o.MaxUnits
		}
	}
	if !encodingFits(ctx, vars) {
		t.stats.EncodingSkipped++
		if vars >= t.stats.EncodingSkippedVars {
			t.stats.EncodingSkippedVars = vars
			t.stats.EncodingSkippedLeftMS = -1
			if dl, ok := ctx.Deadline(); ok {
				t.stats.EncodingSkippedLeftMS = ms(time.Until(dl))
			}
		}
		return vars, false
	}
	return vars, true
}

// write writes the clauses: the base (alternative, cumulative and
// noOverlap by node blocks written lazily), the CH term, the
// left-justified dominance, the pool cuts (the last search only), the
// group bounds' objective, and with Ablation.Eager every node block.
// false: the deadline stopped it.
func (t *searcher) write(groups *groupBounds) (bool, error) {
	enc, m := t.enc, t.m
	if err := enc.Base(); t.interrupted(err) {
		return false, nil
	}
	if err := enc.CHTerm(); t.interrupted(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if t.dominance() {
		if err := enc.LeftJustified(); t.interrupted(err) {
			return false, nil
		}
	}
	if t.cuts && !t.opt.Ablation.NoPoolCuts && len(m.Nodes) > 1 && len(m.Jobs) > 1 {
		if err := enc.PoolCuts(m.Pool(poolResources)); t.interrupted(err) {
			return false, nil
		} else if err != nil {
			return false, err
		}
	}
	if groups != nil {
		if err := enc.ObjectiveGroups(groups.groups, groups.delta); err != nil {
			return false, err
		}
	}
	if t.opt.Ablation.Eager {
		enc.EncodeAll()
	}
	return true, nil
}
