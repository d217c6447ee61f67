package sat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-air/gini/z"

	"github.com/optsched/optsched/encode/cnf"
)

// interlude tries to improve the incumbent after a probe from above ran
// out of its slice (step 4 of the package doc): serial schedules around
// it for half a slice (when the first incumbent had them: Initial
// schedulers, and not Ablation.NoSGS), then, with Solver.LNS or a CH
// term, large-neighbourhood moves for a slice. It reports whether either
// improved the incumbent.
func (t *searcher) interlude(ctx context.Context) (bool, error) {
	if len(t.opt.Initial) > 0 && !t.opt.Ablation.NoSGS {
		sctx, cancel := context.WithTimeout(ctx, t.slice/2)
		inc := sgsImprove(sctx, t.m, t.best, sgsTries, t.rng)
		cancel()
		if inc != nil {
			t.stats.SGSImprovements++
			t.improve(inc, "sgs")
			return true, nil
		}
	}
	if !t.opt.LNS && !(t.opt.CHWeight > 0) {
		return false, nil
	}
	te := time.Now()
	inc, err := t.lns(ctx, t.slice)
	t.lnsTime += time.Since(te)
	if err != nil || inc == nil {
		return false, err
	}
	t.stats.LNSImprovements++
	t.improve(inc, "sat-lns")
	return true, nil
}

// lns improves the incumbent by large-neighbourhood moves for about
// budget, each in a neighbourhood of a delayed job (see neighbourhood and
// move). It returns the first improvement, or nil.
func (t *searcher) lns(ctx context.Context, budget time.Duration) (*incumbent, error) {
	end := time.Now().Add(budget)
	var delayed []int
	for i := range t.m.Jobs {
		if t.best.slots[i] > t.enc.Lo[i] {
			delayed = append(delayed, i)
		}
	}
	if len(delayed) == 0 {
		return nil, nil
	}
	for time.Now().Before(end) && ctx.Err() == nil {
		free, cur := t.neighbourhood(delayed)
		if cur == 0 {
			continue
		}
		inc, stop, err := t.move(ctx, free, cur, end, budget)
		if inc != nil || stop || err != nil {
			return inc, err
		}
	}
	return nil, nil
}

// neighbourhood returns the jobs a move frees — one of the delayed jobs
// at random, the lnsSize − 1 jobs starting nearest to it, and those whose
// incumbent start is outside the compressed domain (they cannot be
// fixed) — and their weighted delay (with the CH term) in the incumbent.
func (t *searcher) neighbourhood(delayed []int) (free []int, cur int64) {
	m, best, enc := t.m, t.best, t.enc
	k := min(t.lnsSize, len(m.Jobs))
	seed := delayed[t.rng.IntN(len(delayed))]
	others := make([]int, 0, len(m.Jobs))
	for i := range m.Jobs {
		if i != seed {
			others = append(others, i)
		}
	}
	t.rng.Shuffle(len(others), func(a, b int) { others[a], others[b] = others[b], others[a] })
	slices.SortStableFunc(others, func(a, b int) int {
		da, db := abs(best.slots[a]-best.slots[seed]), abs(best.slots[b]-best.slots[seed])
		return da - db
	})
	free = append([]int{seed}, others[:k-1]...)
	for _, i := range others[k-1:] {
		if !enc.IsCandidate(i, best.slots[i]) {
			free = append(free, i)
		}
	}
	for _, i := range free {
		cur += m.Jobs[i].Weight*int64(best.slots[i]-enc.Lo[i]) + m.CHKappa*(m.CH(i, best.units[i])-m.CHMin(i))
	}
	return free, cur
}

// move fixes every job but free to the incumbent by assumptions and asks,
// up to 8 times (adding the node blocks a model violates), for a
// weighted delay of the free jobs below cur, with a diagram over those
// jobs only, each call for at most a quarter of budget and not past end.
// It returns the improvement, or nil and whether the moves must stop (no
// diagram). A call that runs out makes the moves smaller, UNSAT larger.
func (t *searcher) move(ctx context.Context, free []int, cur int64, end time.Time, budget time.Duration) (*incumbent, bool, error) {
	m, best, enc := t.m, t.best, t.enc
	root, err := enc.AtMostJobs(free, cur-1)
	if errors.Is(err, cnf.ErrInterrupted) || errors.Is(err, cnf.ErrTooLarge) {
		return nil, true, nil
	}
	if err != nil {
		return nil, true, err
	}
	assume := t.fixOthers(free, root)
	for try := 0; try < 8; try++ {
		mctx, cancel := context.WithDeadline(ctx, minTime(end, time.Now().Add(budget/4)))
		r := solve(mctx, t.g, assume)
		cancel()
		if r == 0 {
			t.lnsSize = max(2, t.lnsSize-1) // too hard: smaller moves
			return nil, false, nil
		}
		if r < 0 {
			t.lnsSize = min(len(m.Jobs), t.lnsSize+1) // no gain here: larger moves
			return nil, false, nil
		}
		slots, units := enc.Decode(func(l cnf.Lit) bool { return t.g.Value(z.Dimacs2Lit(int(l))) })
		viol := violations(m, slots, units)
		if len(viol) == 0 {
			inc := &incumbent{slots: slots, units: units, w: m.Total(slots, units), from: t.opt.Name()}
			if inc.w >= best.w {
				return nil, true, fmt.Errorf("sat: neighbourhood model with W = %d, not below %d (a bug)", inc.w, best.w)
			}
			return inc, false, nil
		}
		for _, v := range viol {
			for ni := range m.Nodes {
				if m.Nodes[ni].Class == m.Nodes[v[1]].Class && !enc.HasBlock(v[0], ni) {
					enc.NodeBlock(v[0], ni)
					t.blocks++
				}
			}
		}
	}
	return nil, false, nil
}

// fixOthers returns root and the assumptions that fix every job but free
// to its start and units in the incumbent.
func (t *searcher) fixOthers(free []int, root cnf.Lit) []cnf.Lit {
	isFree := make([]bool, len(t.m.Jobs))
	for _, i := range free {
		isFree[i] = true
	}
	assume := []cnf.Lit{root}
	for i := range t.m.Jobs {
		if !isFree[i] {
			assume = append(assume, t.enc.Fix(i, t.best.slots[i], t.best.units[i])...)
		}
	}
	return assume
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
