package csp

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
)

// suffixRestRows, the reference of TestSuffixRestAsRows, is suffixRest as it
// was, filled row by row over every multiset (no rows left out): it runs the DP of table.run backwards from the end of Q,
//
//	B[p][m] = min cost of placing exactly m in positions [p, |Q|)
//	        = min( B[p+1][m],  min_s B[p+r_s][m − e_s] + c(D(p, r_s)) ),
//
// no block running past the end, keeping maxR+1 rows and the rows at
// keepAt. It returns, for each
// size index s with jobs and each w in [1, r_s), B[w][full − e_s]: the
// least cost of the other jobs in [w, |Q|), a lower bound on them when a
// block of size s wraps over the w first positions. ok is false if ctx
// expired first. kept[k] is the row B[keepAt[k]] (keepAt ascending, in
// [1, |Q|)).
func (st *search) suffixRestRows(ctx context.Context, t *table, maxR int, keepAt []int) (out, kept [][]int64, ok bool) {
	S := t.S
	nq, full := st.nq, t.S-1
	sizes, cost := st.g.Sizes, st.g.Cost
	R := maxR + 1
	buf := make([]int64, R*S)
	row := func(p int) []int64 { k := p % R; return buf[k*S : (k+1)*S] }
	last := row(nq)
	for m := range last {
		last[m] = inf
	}
	last[0] = 0
	out = make([][]int64, len(sizes))
	for s, r := range sizes {
		if st.eps[s] > 0 {
			out[s] = make([]int64, r)
		}
	}
	kept = make([][]int64, len(keepAt))
	next := len(keepAt) - 1 // keepAt ascends; the rows come descending
	for p := nq - 1; p >= 1; p-- {
		if p&63 == 0 && ctx.Err() != nil {
			return nil, nil, false
		}
		cur := row(p)
		copy(cur, row(p+1))
		for s, r := range sizes {
			if p+r > nq {
				continue
			}
			from := row(p + r)
			c := cost[s][p]
			sd, period := t.stride[s], t.stride[s]*(st.eps[s]+1)
			// from holds at most inf and c ≥ 1, so an unreached cell
			// (inf) never lowers cur[m]: min without testing it.
			for base := 0; base < S; base += period {
				dst, src := cur[base+sd:base+period], from[base:base+period-sd]
				for k := range dst {
					dst[k] = min(dst[k], src[k]+c)
				}
			}
		}
		for s, r := range sizes {
			if out[s] != nil && p < r {
				out[s][p] = cur[full-t.stride[s]]
			}
		}
		if next >= 0 && keepAt[next] == p {
			kept[next] = slices.Clone(cur)
			next--
		}
	}
	return out, kept, true
}

// TestSuffixRestAsRows holds suffixRest, kept by multiset over the rows
// it needs, to the row-by-row suffix DP over every row and multiset
// (suffixRestRows) on seeded random layouts: the wrap bounds (out) the
// same, and in the kept rows every cell the same or inf where suffixRest
// leaves it out — a cell from which the other jobs do not fit before the
// row within the slack of maxR (rotationBounds never needs it).
func TestSuffixRestAsRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 7))
	cells, outside := 0, 0
	for i := range 500 {
		st, states, ok := randomSearch(t, rng, 60)
		if !ok {
			continue
		}
		tab := newTable(st, states)
		maxR := slices.Max(st.g.Sizes)
		var keepAt []int
		for k := 1 + rng.IntN(3); k < st.nq; k += 1 + rng.IntN(3) {
			keepAt = append(keepAt, k)
		}
		out, kept, ok := st.suffixRest(context.Background(), tab, maxR, keepAt)
		wantOut, wantKept, ok2 := st.suffixRestRows(context.Background(), tab, maxR, keepAt)
		if !ok || !ok2 {
			t.Fatal("no deadline, yet the suffix DP stopped")
		}
		for s := range out {
			if !slices.Equal(out[s], wantOut[s]) {
				t.Fatalf("window %d: size %d: wrap bounds %v, row by row %v", i, s, out[s], wantOut[s])
			}
		}
		T := tab.size[states-1]
		for k, x := range keepAt {
			for m := range states {
				got, want := kept[k][m], wantKept[k][m]
				if x < T-tab.size[m]-maxR {
					outside++
					if got != inf {
						t.Fatalf("window %d: B[%d][%d] left out reads %d, not inf", i, x, m, got)
					}
					continue
				}
				cells++
				if got != want {
					t.Fatalf("window %d: B[%d][%d] = %d, row by row %d", i, x, m, got, want)
				}
			}
		}
		st.releaseTables()
		st.g.Release()
	}
	if cells < 50000 || outside < 5000 {
		t.Errorf("%d kept cells compared, %d left out: too few to exercise the suffix DP", cells, outside)
	}
	t.Logf("%d kept cells compared, %d left out", cells, outside)
}
