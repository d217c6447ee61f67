package csp

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/optsched/optsched/encode"
)

// Every test reads the DP tables strictly: a cell above the rows run
// computed (rowRange) panics, so a caller passing too little slack
// fails whichever test reaches it.
func init() { strictRows = true }

// rowDP is the exact DP filled row by row with its choices recorded, as
// table.run did before it kept the table by multiset: the reference the
// column DP is held to. It returns F and choice, row-major (row p − a,
// then multiset), for rows a..last of Q rotated by rot.
func rowDP(st *search, stride []int, S, a, last, rot int) (F []int64, choice []uint8) {
	rows := last - a + 1
	F, choice = make([]int64, rows*S), make([]uint8, rows*S)
	for m := range S {
		F[m] = inf
	}
	F[0] = 0
	sizes, cost := st.g.Sizes, st.g.Cost
	for row := 1; row < rows; row++ {
		p := a + row
		cur, prev := F[row*S:(row+1)*S], F[(row-1)*S:row*S]
		ch := choice[row*S : (row+1)*S]
		copy(cur, prev)
		for s, r := range sizes {
			if row < r {
				continue
			}
			from := F[(row-r)*S : (row-r+1)*S]
			c := cost[s][(rot+p-r)%len(cost[s])]
			sd, period, cs := stride[s], stride[s]*(st.eps[s]+1), uint8(s+1)
			for base := 0; base < S; base += period {
				for m := base + sd; m < base+period; m++ {
					f := from[m-sd]
					if f >= inf {
						continue
					}
					if v := f + c; v < cur[m] {
						cur[m], ch[m] = v, cs
					}
				}
			}
		}
	}
	return F, choice
}

// TestColumnDPAsRowDP holds the DP kept by multiset (table.run, choices
// recovered by choiceAt), on int32 and on int64 tables, to the row-by-row
// DP that records its choices, on seeded random layouts, for whole and partial ranges of rows and for
// rotations of Q: every cell the same, and every cell's reconstruction
// (table.starts) the blocks the recorded choices give. Cells where two
// sizes, or a size and a free position, reach the same cost are counted:
// the reconstruction must break those ties as the recorded choices did.
//
// In halves, it runs again with every table of two or more multisets
// and two rows or more a column filled by two goroutines (fillHalves,
// each column's rows cut in the middle), and counts the runs so filled.
func TestColumnDPAsRowDP(t *testing.T) {
	for _, halves := range []bool{false, true} {
		for _, wide := range []bool{false, true} {
			name := "int32"
			if wide {
				name = "int64"
			}
			if halves {
				name += "/halves"
			}
			t.Run(name, func(t *testing.T) {
				noNarrow = wide
				defer func() { noNarrow = false }()
				if halves {
					defer func(v, k int) { minHalfRows, encode.Workers = v, k }(minHalfRows, encode.Workers)
					minHalfRows, encode.Workers = 1, 2
				}
				columnAsRow(t, wide, halves)
			})
		}
	}
}

// randomSearch returns a search over every job of a random layout
// window (randomLayoutWindow(rng, 6, nodes)) and its count of multisets,
// or false when the window has fewer than two jobs or its table would
// exceed 2²⁰ cells.
func randomSearch(t *testing.T, rng *rand.Rand, nodes int) (*search, int, bool) {
	t.Helper()
	p := allJobs(randomLayoutWindow(rng, 6, nodes))
	if len(p.Jobs) < 2 {
		return nil, 0, false
	}
	st, err := newSearch(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	states := multisets(st)
	return st, states, states*(st.nq+1) <= 1<<20
}

// multisets is the number of multisets of st's job sizes: the DP's
// states.
func multisets(st *search) int {
	n := 1
	for _, e := range st.eps {
		n *= e + 1
	}
	return n
}

// columnAsRow is TestColumnDPAsRowDP on tables of one width (int64 when
// wide, int32 otherwise: every window's prices fit).
func columnAsRow(t *testing.T, wide, halves bool) {
	rng := rand.New(rand.NewPCG(33, 4))
	cells, ties, outside, halved := 0, 0, 0, 0
	for i := range 400 {
		st, states, ok := randomSearch(t, rng, 40)
		if !ok {
			continue
		}
		tab := newTable(st, states)
		if tab.narrow == wide {
			t.Fatalf("window %d: a narrow table %v, want %v", i, tab.narrow, !wide)
		}
		nq := st.nq
		for _, rng3 := range [][3]int{{0, nq, 0}, {rng.IntN(nq), nq, 0}, {0, nq, rng.IntN(nq)}, {1 + rng.IntN(nq-1), nq - rng.IntN(nq/2+1), 0}} {
			a, last, rot := rng3[0], rng3[1], rng3[2]
			if last < a {
				continue
			}
			tab.rot = rot
			// The slack: every row (T), none (0) or between.
			T := tab.size[states-1]
			slack := []int{T, 0, rng.IntN(T + 1)}[(i+int(rng3[0]))%3]
			if !tab.run(context.Background(), a, last, slack) {
				t.Fatal("no deadline, yet run stopped")
			}
			if halves && states > 1 && tab.hi-T+1 >= 2 {
				halved++
			}
			F, choice := rowDP(st, tab.stride, states, a, last, rot)
			for pp := a; pp <= last; pp++ {
				for m := range states {
					want := F[(pp-a)*states+m]
					if pp-a > last-a+slack-(T-tab.size[m]) {
						// Above the rows computed: the rest of the jobs does
						// not fit after pp within the slack.
						outside++
						if got := tab.atAny(pp, m); got != inf {
							t.Fatalf("window %d: F[%d][%d] above the rows computed reads %d, not inf", i, pp, m, got)
						}
						continue
					}
					if got := tab.at(pp, m); got != want {
						t.Fatalf("window %d, rows %d..%d rot %d slack %d: F[%d][%d] = %d, the row DP %d", i, a, last, rot, slack, pp, m, got, want)
					}
					if want >= inf || pp == a {
						continue
					}
					cells++
					if countReaching(st, tab, pp, m) > 1 {
						ties++
					}
					got := make([][]int, len(st.eps))
					tab.starts(pp, m, got)
					exp := make([][]int, len(st.eps))
					for q, mm := pp, m; q > a; {
						c := choice[(q-a)*states+mm]
						if c == 0 {
							q--
							continue
						}
						s := int(c - 1)
						q -= st.g.Sizes[s]
						mm -= tab.stride[s]
						exp[s] = append(exp[s], (rot+q)%nq)
					}
					for s := range exp {
						if len(got[s]) != len(exp[s]) {
							t.Fatalf("window %d: cell (%d, %d): starts %v, the recorded choices %v", i, pp, m, got, exp)
						}
						for k := range exp[s] {
							if got[s][k] != exp[s][k] {
								t.Fatalf("window %d: cell (%d, %d): starts %v, the recorded choices %v", i, pp, m, got, exp)
							}
						}
					}
				}
			}
		}
		st.releaseTables()
		st.g.Release()
	}
	if cells < 100000 || ties < 1000 || outside < 100000 {
		t.Errorf("%d cells, %d with tied choices, %d above the rows computed: too few to exercise the reconstruction and the row ranges", cells, ties, outside)
	}
	if halves && halved < 500 {
		t.Errorf("%d runs filled in halves: too few", halved)
	}
	t.Logf("%d cells, %d with tied choices, %d above the rows computed, %d runs in halves", cells, ties, outside, halved)
}

// countReaching counts the ways F[p][m] is reached: position p−1 left
// free, and each size whose block ending at p gives the same cost.
func countReaching(st *search, tab *table, p, m int) int {
	v, n := tab.at(p, m), 0
	if v == tab.at(p-1, m) {
		n++
	}
	for s, r := range st.g.Sizes {
		if p-r < tab.a || tab.digit(s, m) == 0 {
			continue
		}
		if f := tab.at(p-r, m-tab.stride[s]); f < inf && f+st.g.Cost[s][(tab.rot+p-r)%st.nq] == v {
			n++
		}
	}
	return n
}

// TestRotationBoundsSound runs every rotation that rotationBounds skips
// on seeded random layouts (with the rotations forced wherever they
// apply) and fails if its DP finds a placement cheaper than the
// incumbent the bound was taken against: the skip would have lost it.
// It also holds the answers with the bounds to those without them.
func TestRotationBoundsSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 6))
	defer func(v int) { parallelRotations = v }(parallelRotations)
	parallelRotations = 1 << 30 // one after the other: onSkip sees each
	defer func() { onSkip = nil }()
	skipped, ran := 0, 0
	onSkip = func(st *search, states, rot int, best int64) {
		skipped++
		tab := newTable(st, states)
		tab.rot = rot
		if !tab.run(context.Background(), 0, st.nq, 0) {
			t.Fatal("no deadline, yet run stopped")
		}
		if v := tab.at(st.nq, states-1); v < best {
			t.Fatalf("rotation at %d skipped: its DP finds %d, below the incumbent %d", rot, v, best)
		}
	}
	for i := range 600 {
		w := randomLayoutWindow(rng, 6, 120)
		p := allJobs(w)
		if len(p.Jobs) < 2 {
			continue
		}
		res := mustSolve(t, Solver{mode: modeRotations}, p)
		ran += res.Stats.CSP.RotationDPs
		noRotationBounds = true
		ref := mustSolve(t, Solver{mode: modeRotations}, p)
		noRotationBounds = false
		if res.Objective != ref.Objective || res.Status != ref.Status || !reflect.DeepEqual(res.Allocations, ref.Allocations) {
			t.Fatalf("window %d: with the bounds %v %d %v, without %v %d %v", i, res.Status, res.Objective, res.Allocations,
				ref.Status, ref.Objective, ref.Allocations)
		}
	}
	if skipped < 200 || ran < 200 {
		t.Errorf("%d rotations skipped, %d run: too few to exercise the bounds", skipped, ran)
	}
	t.Logf("%d rotations skipped, %d run", skipped, ran)
}

// TestWrapBoundAsSum holds wrapBound, which takes the trivial bound
// computed once a search, to its definition: the wrapping block's price
// plus every other job at its size's cheapest block, summed job by job.
func TestWrapBoundAsSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 9))
	checked := 0
	for range 300 {
		st, _, _ := randomSearch(t, rng, 60)
		if st == nil {
			continue
		}
		for s, r := range st.g.Sizes {
			if st.eps[s] == 0 {
				continue
			}
			for w := 1; w < r && st.nq-r+w < st.nq; w++ {
				want := st.g.Cost[s][st.nq-r+w]
				for s2, e := range st.eps {
					for k := range e {
						if s2 != s || k > 0 {
							want += st.minc[s2]
						}
					}
				}
				if got := st.wrapBound(s, w); got != want {
					t.Fatalf("wrapBound(%d, %d) = %d, the sum %d", s, w, got, want)
				}
				checked++
			}
		}
	}
	if checked < 1000 {
		t.Errorf("%d bounds checked: too few", checked)
	}
}
