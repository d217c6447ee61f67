package csp

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/optsched/optsched/encode"
)

// table is the exact DP over (position, multiset of placed sizes). A
// multiset m is a mixed-radix number with digit cnt_s(m) ∈ [0, ε_s] at
// stride[s]. For a start position a, row p (a ≤ p) holds
//
//	F[p][m] = min cost of placing exactly m in positions [a, p)
//	        = min( F[p−1][m],  min_s F[p−r_s][m − e_s] + c(D(p−r_s, r_s)) )
//
// with no block running past the end of Q. The table is kept by
// multiset (F[m] is a column over the rows): m − e_s < m, so the columns
// are filled in increasing m, each from the columns of its sub-multisets
// by one pass over the rows per size in m (the shifted column plus the
// block prices) and a running minimum down the rows — loops over the
// rows without the per-row, per-size overhead of filling the table row
// by row, which made most of the DP's time on the 10⁴-position windows
// of an archive-scale cluster. No choice is stored: starts recovers it
// from the values (see choiceAt), the choice the row-by-row DP recorded.
// Each column is computed only on the rows that can lead to a placement
// of the whole multiset (rowRange).
type table struct {
	st     *search
	S      int
	stride []int
	F      []int64
	// F32 holds the table instead of F when the search's prices are
	// narrow (narrow: search.cost32 is set): 4 bytes a cell, half the
	// memory the DP's passes stream through, which bounds their speed.
	// Every cell is then below inf32 (a placement's cost, below it) or
	// inf32 (nothing placed), and at widens it to F's values.
	F32    []int32
	narrow bool
	a      int
	rows   int
	// rot rotates Q: row p of the table is position (rot + p) mod |Q|
	// (0 but for rotations).
	rot int
	// size[m] is T_m, the positions the multiset m covers (Σ_s cnt_s(m)
	// r_s); size[S−1] is T, the whole multiset's.
	size []int
	// hi is the last row offset kept of the whole multiset's column (see
	// rowRange): rows past it are not computed.
	hi int
	// alone keeps run on the caller's goroutine (fillColumns does not
	// share the columns' rows): set while another goroutine runs DPs of
	// its own (rotationsAside).
	alone bool
}

// inf32 is inf of a narrow table: a cell's sum is at most inf32 plus one
// price, below 2³¹ when every price is (see search.narrowCosts).
const inf32 = 1 << 30

// noNarrow, for the tests, keeps every table wide (int64).
var noNarrow bool

// narrowCosts sets st.cost32 to the block prices as int32 when every
// placement costs less than inf32 — at most Σ_s ε_s × the dearest block
// of size s — so that a narrow table holds every value a wide one would.
// It leaves st.cost32 nil otherwise. It decides once a search.
func (st *search) narrowCosts() {
	if st.narrowed || noNarrow {
		return
	}
	st.narrowed = true
	var most int64
	for s, c := range st.g.Cost {
		var top int64
		for _, v := range c {
			top = max(top, v)
		}
		if top < 0 {
			return
		}
		most += int64(st.eps[s]) * top
		if most >= inf32 {
			return
		}
	}
	cost32 := make([][]int32, len(st.g.Cost))
	for s, c := range st.g.Cost {
		cost32[s] = make([]int32, len(c))
		for i, v := range c {
			cost32[s][i] = int32(v)
		}
	}
	st.cost32 = cost32
}

// A freeList holds the DP tables of finished solves (search.tables),
// which on an archive-scale window run to megabytes: allocating and
// zeroing them in every window was much of the window policy's time. It
// is a free list rather than a sync.Pool, which the garbage collector
// empties at every cycle (a 250,000-job replay collects every few
// windows), and keeps at most maxFreeTableBytes, the largest tables
// first. There is one for each cell width (see table.narrow).
type freeList[T int32 | int64] struct {
	sync.Mutex
	bufs  [][]T
	bytes int
}

var (
	freeTables   freeList[int64]
	freeTables32 freeList[int32]
)

// maxFreeTableBytes bounds the memory each free list keeps: 64 MiB,
// several times the tables of a window on 32,768 nodes.
const maxFreeTableBytes = 64 << 20

// tableBytes returns the bytes b holds.
func tableBytes[T int32 | int64](b []T) int {
	var z T
	if _, ok := any(z).(int32); ok {
		return 4 * cap(b)
	}
	return 8 * cap(b)
}

// put gives a table back to f, dropping the smallest ones when it would
// keep more than maxFreeTableBytes.
func (f *freeList[T]) put(b []T) {
	if tableBytes(b) > maxFreeTableBytes {
		return
	}
	f.Lock()
	defer f.Unlock()
	f.bufs = append(f.bufs, b)
	f.bytes += tableBytes(b)
	for f.bytes > maxFreeTableBytes {
		least := 0
		for k := range f.bufs {
			if cap(f.bufs[k]) < cap(f.bufs[least]) {
				least = k
			}
		}
		f.bytes -= tableBytes(f.bufs[least])
		f.bufs[least] = f.bufs[len(f.bufs)-1]
		f.bufs = f.bufs[:len(f.bufs)-1]
	}
}

// get takes from f the smallest table of at least need cells, if any.
func (f *freeList[T]) get(need int) ([]T, bool) {
	f.Lock()
	defer f.Unlock()
	best := -1
	for k, b := range f.bufs {
		if cap(b) >= need && (best < 0 || cap(b) < cap(f.bufs[best])) {
			best = k
		}
	}
	if best < 0 {
		return nil, false
	}
	b := f.bufs[best]
	f.bytes -= tableBytes(b)
	f.bufs[best] = f.bufs[len(f.bufs)-1]
	f.bufs = f.bufs[:len(f.bufs)-1]
	return b, true
}

// tableBuf returns a table of at least need cells from f, reused when a
// free one is large enough (its contents are stale: run writes every
// cell it reads), and gives back old, outgrown.
func tableBuf[T int32 | int64](f *freeList[T], need int, old []T) []T {
	if cap(old) > 0 {
		f.put(old)
	}
	if b, ok := f.get(need); ok {
		b = b[:need]
		if poisonReused {
			for k := range b {
				b[k] = -7 // what a stale cell may hold; read before written, it shows
			}
		}
		return b
	}
	return make([]T, need)
}

// poisonReused makes tableBuf overwrite a reused table with a value no
// cell holds (a test's switch: a cell read before it is written then
// shows in the answer).
var poisonReused = false

// releaseTables gives the search's DP tables back for reuse.
func (st *search) releaseTables() {
	for _, t := range st.tables {
		if cap(t.F) > 0 {
			freeTables.put(t.F)
			t.F = nil
		}
		if cap(t.F32) > 0 {
			freeTables32.put(t.F32)
			t.F32 = nil
		}
	}
	st.tables = nil
}

func newTable(st *search, states int) *table {
	D := len(st.eps)
	st.narrowCosts()
	t := &table{st: st, S: states, stride: make([]int, D), narrow: st.cost32 != nil, size: make([]int, states)}
	st.tables = append(st.tables, t)
	k := 1
	for s, e := range st.eps {
		t.stride[s] = k
		k *= e + 1
	}
	for m := 1; m < states; m++ {
		// m − e_s for the lowest size s present in m.
		for s, r := range st.g.Sizes {
			if t.digit(s, m) > 0 {
				t.size[m] = t.size[m-t.stride[s]] + r
				break
			}
		}
	}
	return t
}

// rowRange returns the row offsets (p − a) of the cells of column m that
// run computes, lo..hi (none when lo > hi). The others are not needed:
//
//   - below lo = T_m, the blocks of m do not fit in [a, p): the cell is
//     inf, and at returns it;
//   - above hi = (last − a) − (T − T_m) + slack, the blocks of the other
//     jobs, full − m, do not fit in [p, last + slack). The DP's own
//     recurrence never reads such a cell (a block of size s from a cell
//     of m − e_s to one of m shifts both bounds by r_s), nor does the
//     reconstruction of a cell within the range, so a DP run for
//     F[last][full] alone needs no slack: on the windows an
//     archive-scale cluster cannot prove (jobs covering all but a few
//     percent of Q) that is a few hundred rows a column instead of 10⁴.
//     The callers that read other cells pass the slack they need.
func (t *table) rowRange(m int) (lo, hi int) {
	lo = t.size[m]
	hi = min(t.rows-1, t.hi-(t.size[t.S-1]-t.size[m]))
	return lo, hi
}

// digit returns cnt_s(m).
func (t *table) digit(s, m int) int { return m / t.stride[s] % (t.st.eps[s] + 1) }

// run fills rows a..last, the cells of each column within rowRange for
// the given slack: every cell F[p][m] from which the rest of the jobs,
// full − m, fits in [p, last + slack). It returns false if ctx expired
// first.
func (t *table) run(ctx context.Context, a, last, slack int) bool {
	rows := last - a + 1
	need := rows * t.S
	t.a, t.rows = a, rows
	if allRows {
		slack = t.size[t.S-1] // every row of every column
	}
	t.hi = last - a + max(slack, 0)
	if t.narrow {
		if cap(t.F32) < need {
			t.F32 = tableBuf(&freeTables32, need, t.F32)
		}
		t.F32 = t.F32[:need]
		return fillColumns(ctx, t, t.F32, t.st.cost32, inf32)
	}
	if cap(t.F) < need {
		t.F = tableBuf(&freeTables, need, t.F)
	}
	t.F = t.F[:need]
	return fillColumns(ctx, t, t.F, t.st.g.Cost, inf)
}

// fillColumns fills t's rows in F (t.F or t.F32), with the block prices
// cost (of the same width) and infT for nothing placed. On long columns
// it shares each column's rows with a second goroutine (fillHalves).
func fillColumns[T int32 | int64](ctx context.Context, t *table, F []T, cost [][]T, infT T) bool {
	rows := t.rows
	col := func(m int) []T { return F[m*rows : (m+1)*rows] }
	if _, hi := t.rowRange(0); hi >= 0 {
		clear(col(0)[:hi+1]) // the empty multiset costs nothing anywhere
	}
	// Every column's rows (rowRange) are as many, T_m to T_m + L − 1,
	// unless cut at the table's last row.
	L := t.hi - t.size[t.S-1] + 1
	if !t.alone && t.S > 1 && L >= 2*minHalfRows && min(encode.Workers, runtime.GOMAXPROCS(0)) >= 2 {
		return fillHalves(ctx, t, F, cost, infT, L/2)
	}
	for m := 1; m < t.S; m++ {
		if ctx.Err() != nil { // each multiset is at most sizes × rows steps
			return false
		}
		lo, hi := t.rowRange(m)
		if lo > hi {
			continue // nothing of it computed (see rowRange)
		}
		relaxColumn(t, F, cost, m, lo, hi)
		// A position left free: the running minimum down the rows, from
		// inf (row lo − 1, where m does not fit).
		prefixMin(col(m)[lo:hi+1], infT)
	}
	return true
}

// minHalfRows is the fewest rows of a column's half for which
// fillColumns shares the columns between two goroutines (a variable for
// the tests).
var minHalfRows = 1024

// fillHalves is fillColumns with each column m's rows cut at T_m + H: the
// caller's goroutine fills the rows below the cut, column after column,
// and a second one the rows from it. A block of size r from a cell of
// m − e_s to one of m shifts the row by r and T_m by r, so each half's
// cells are relaxed from cells of the same half of the columns before:
// the halves share nothing but the running minimum down the rows, which
// the upper half first takes from its own rows and then lowers to the
// lower half's last value (the minimum of the rows below) once that
// column's lower half is done: the values are fillColumns' own. The
// upper half waits for the lower one at each column; the lower never
// waits.
func fillHalves[T int32 | int64](ctx context.Context, t *table, F []T, cost [][]T, infT T, H int) bool {
	rows := t.rows
	col := func(m int) []T { return F[m*rows : (m+1)*rows] }
	// done is the number of columns whose lower half is final (columns
	// 1..done−1; column 0 is filled); failed is set when either half
	// stops at ctx's end.
	var done atomic.Int64
	var failed atomic.Bool
	done.Store(1)
	upper := make(chan bool, 1)
	go func() {
		for m := 1; m < t.S; m++ {
			if ctx.Err() != nil || failed.Load() {
				failed.Store(true)
				upper <- false
				return
			}
			lo, hi := t.rowRange(m)
			cut := lo + H
			if cut > hi {
				continue // the lower half holds every row
			}
			relaxColumn(t, F, cost, m, cut, hi)
			g := col(m)
			prefixMin(g[cut:hi+1], infT)
			// The rows below the cut, when final, lower these to their
			// minimum; the running minimum is non-increasing, so the
			// first row already at or below it ends the pass.
			for spins := 0; done.Load() <= int64(m); spins++ {
				if failed.Load() {
					upper <- false
					return
				}
				switch {
				case spins >= 1<<12:
					// The lower half's goroutine has no core (a busy
					// machine): wait without taking one.
					time.Sleep(20 * time.Microsecond)
				case spins%64 == 63:
					runtime.Gosched()
				}
			}
			carry := g[cut-1] // lo < cut: the lower half has a row here
			for k := cut; k <= hi && g[k] > carry; k++ {
				g[k] = carry
			}
		}
		upper <- true
	}()
	ok := true
	for m := 1; m < t.S; m++ {
		if ctx.Err() != nil || failed.Load() {
			ok = false
			failed.Store(true)
			break
		}
		lo, hi := t.rowRange(m)
		if top := min(hi, lo+H-1); lo <= top {
			relaxColumn(t, F, cost, m, lo, top)
			prefixMin(col(m)[lo:top+1], infT)
		}
		done.Store(int64(m + 1))
	}
	if !ok {
		done.Store(int64(t.S)) // nothing for the upper half to wait for
	}
	return <-upper && ok
}

// relaxColumn sets rows lo..hi of column m of F (t's layout) to the
// least of the cells of m − e_s a block of each size s present in m
// before, plus the block's price; the caller then takes the running
// minimum down the rows. The rows of m − e_s it reads are lo − r_s ..
// hi − r_s.
func relaxColumn[T int32 | int64](t *table, F []T, cost [][]T, m, lo, hi int) {
	st, rows := t.st, t.rows
	col := func(m int) []T { return F[m*rows : (m+1)*rows] }
	sizes, nq, a := st.g.Sizes, st.nq, t.a
	g := col(m)
	first := true
	for s, r := range sizes {
		if t.digit(s, m) == 0 {
			continue
		}
		// Rows lo..hi: a block of size s ends at row, starting at row
		// − r, position (rot + a + row − r) mod |Q|. r ≤ lo = T_m, and
		// rows lo−r..hi−r are the range of m − e_s (rowRange).
		src := col(m - t.stride[s])[lo-r : hi+1-r]
		dst := g[lo : hi+1]
		c := cost[s]
		at := (t.rot + a + lo - r) % nq // position of the first block
		// The rows whose block starts before the end of c, then the
		// rows whose start wraps to its head.
		n1 := min(len(src), nq-at)
		relax(dst[:n1], src[:n1], c[at:at+n1], first)
		if n1 < len(src) {
			rest := len(src) - n1
			relax(dst[n1:], src[n1:], c[:rest], first)
		}
		first = false
	}
}

// relax sets dst[k] to min(dst[k], src[k] + c[k]), or to the sum when
// set (dst then holds stale values). The three have the same length; src
// holds at most inf, so the sums do not overflow.
func relax[T int32 | int64](dst, src, c []T, set bool) {
	src, c = src[:len(dst)], c[:len(dst)]
	if set {
		for k := range dst {
			dst[k] = src[k] + c[k]
		}
		return
	}
	// min, not a branch: the compiler makes it a conditional move, and on
	// a DP's columns the comparison goes either way (a branch on it was
	// mispredicted at most rows).
	for k := range dst {
		dst[k] = min(dst[k], src[k]+c[k])
	}
}

// prefixMin sets g[k] to min(from, g[0..k]).
func prefixMin[T int32 | int64](g []T, from T) {
	mn := from
	for k, v := range g {
		mn = min(mn, v) // branch-free, as in relax
		g[k] = mn
	}
}

// allRows, for the tests, makes run and suffixRest compute every row of
// every column, as they did before rowRange.
var allRows bool

// strictRows, for the tests, makes at panic on a cell above rowRange,
// which run did not compute: a caller that reads one passed too little
// slack.
var strictRows bool

// at returns F[p][m]: inf below rowRange (m does not fit), and inf above
// it, where run computed nothing (no placement of the whole multiset
// within the slack passes through the cell).
func (t *table) at(p, m int) int64 {
	lo, hi := t.rowRange(m)
	if p-t.a < lo {
		return inf
	}
	if p-t.a > hi {
		if strictRows {
			panic(fmt.Sprintf("csp: DP cell (%d, %d) above the rows computed (%d..%d from %d)", p, m, lo, hi, t.a))
		}
		return inf
	}
	return t.atRaw(p, m)
}

// atAny is at without strictRows: for rotationBounds, for which a cell
// above the range is inf (see there).
func (t *table) atAny(p, m int) int64 {
	if lo, hi := t.rowRange(m); p-t.a < lo || p-t.a > hi {
		return inf
	}
	return t.atRaw(p, m)
}

// atRaw returns the stored F[p][m], within rowRange.
func (t *table) atRaw(p, m int) int64 {
	k := m*t.rows + p - t.a
	if t.narrow {
		v := t.F32[k]
		if v >= inf32 { // nothing placed (a finished column holds at most inf32)
			return inf + int64(v-inf32)
		}
		return int64(v)
	}
	return t.F[k]
}

// choiceAt returns what the row-by-row DP records for F[p][m], p > a: 0
// when position p−1 is left free (F[p][m] = F[p−1][m]: the DP kept the
// row above unless a block did strictly better), else s+1 for the first
// size s, in size order, whose block ending at p reaches F[p][m] (a
// later size of the same cost did not replace it).
func (t *table) choiceAt(p, m int) int {
	v := t.at(p, m)
	if v == t.at(p-1, m) {
		return 0
	}
	for s, r := range t.st.g.Sizes {
		if p-r < t.a || t.digit(s, m) == 0 {
			continue
		}
		f := t.at(p-r, m-t.stride[s])
		if f < inf && f+t.st.g.Cost[s][(t.rot+p-r)%t.st.nq] == v {
			return s + 1
		}
	}
	panic(fmt.Sprintf("csp: DP cell (%d, %d) = %d has no choice", p, m, v))
}

// starts reconstructs the blocks of F[p][m], appending them to out.
func (t *table) starts(p, m int, out [][]int) {
	sizes := t.st.g.Sizes
	for p > t.a {
		c := t.choiceAt(p, m)
		if c == 0 {
			p--
			continue
		}
		s := c - 1
		p -= sizes[s]
		m -= t.stride[s]
		out[s] = append(out[s], (t.rot+p)%t.st.nq)
	}
}

// exact solves the problem to optimality by the DP; it returns true when
// the incumbent is proven optimal, false if ctx expired first.
func (st *search) exact(ctx context.Context, states int) bool {
	t := newTable(st, states)
	full := states - 1 // every digit at its maximum: the whole multiset
	nq := st.nq
	maxR := 0
	for _, r := range st.g.Sizes {
		maxR = max(maxR, r)
	}
	// No block wraps: one DP over all of Q. Its cells are read beyond
	// F[|Q|][full] by the wrap bounds below (F[|Q| − r + w][full − e_s],
	// w < r) and rotationBounds: a slack of maxR keeps them (rowRange).
	if !t.run(ctx, 0, nq, maxR) {
		return false
	}
	if v := t.at(nq, full); v < st.best {
		st.offer(t.collect(nq, full, -1, -1), "dp")
	}
	// One block wraps, covering the w first positions of Q and the r − w
	// last ones. For each w, one DP over positions [w, |Q|−1] serves all
	// sizes r > w. Skip a (w, r) whose cheapest completion cannot beat the
	// incumbent.
	//
	// The rest of such a placement lies in [w, e), e = |Q| − r + w, so it
	// costs at least F[e][rest] of the DP just run, which may place it
	// anywhere in [0, e): kept, for each size, at the rows the wrapping
	// blocks end at, it prunes most wraps (on a large, mostly idle
	// cluster the non-wrapping optimum is seldom beaten, and each wrap is
	// a DP over all of Q).
	restAt := make([][]int64, len(st.g.Sizes))
	for s, r := range st.g.Sizes {
		if st.eps[s] == 0 {
			continue
		}
		restAt[s] = make([]int64, r)
		for w := 1; w < r && w <= nq; w++ {
			restAt[s][w] = t.at(nq-r+w, full-t.stride[s])
		}
	}
	// The rest also lies in [w, |Q|): the suffix DP's optimum for it there
	// is a second lower bound, computed only when the first leaves a wrap
	// to try (on windows whose cheap blocks sit at both ends of Q, the
	// prefix bound alone left thousands of wraps, each a DP over Q).
	alive := func(s, w int, backAt [][]int64) bool {
		r := st.g.Sizes[s]
		if r <= w || st.eps[s] == 0 || st.wrapBound(s, w) >= st.best {
			return false
		}
		c := st.g.Cost[s][nq-r+w]
		return c+restAt[s][w] < st.best && (backAt == nil || c+backAt[s][w] < st.best)
	}
	countAlive := func(backAt [][]int64) int {
		n := 0
		for w := 1; w < maxR; w++ {
			for s := range st.g.Sizes {
				if alive(s, w, backAt) {
					n++
					break
				}
			}
		}
		return n
	}
	var backAt [][]int64
	if countAlive(nil) > 0 {
		// The rows of B at the boundaries of the rotations, if they run
		// (the least K does not depend on the limit below), for
		// rotationBounds.
		var keepAt []int
		if k := st.rotationCount(st.nq + 1); k > 0 {
			for i := 1; i < k; i++ {
				keepAt = append(keepAt, i*st.nq/k)
			}
		}
		var back [][]int64
		var ok bool
		if backAt, back, ok = st.suffixRest(ctx, t, maxR, keepAt); !ok {
			return false
		}
		// More wraps to try than rotations would take: K−1 more DPs, each
		// over a rotation of Q, cover every placement instead (see
		// rotations).
		if n := countAlive(backAt); n > 1 && st.mode != modeWraps {
			limit := n + 1
			if st.mode == modeRotations {
				limit = st.nq + 1
			}
			if k := st.rotationCount(limit); k > 0 {
				st.stats.WrapsAlive = n
				before := st.best
				skip := st.rotationBounds(t, back, k, func(s, w int) bool { return alive(s, w, backAt) })
				if !st.rotations(ctx, t, k, skip) {
					return false
				}
				if st.best < before {
					// A wrap beats the placements without one. The wrap
					// DPs would have answered with the first wrap, in
					// their order, that reaches the optimum: found so,
					// the answer does not depend on the path (ties are
					// common). Without time for it, the rotation's
					// optimum stands.
					st.firstWrapAt(ctx, t, maxR, restAt, backAt)
				}
				st.raise(float64(st.best), "dp complete")
				return true
			}
		}
	}
	for w := 1; w < maxR; w++ {
		last := -1
		for s, r := range st.g.Sizes {
			if alive(s, w, backAt) {
				last = max(last, nq-r+w)
			}
		}
		if last < w {
			continue
		}
		st.stats.WrapDPs++
		if !t.run(ctx, w, last, wrapSlack(nq, w, last)) {
			return false
		}
		for s, r := range st.g.Sizes {
			if r <= w || st.eps[s] == 0 {
				continue
			}
			e := nq - r + w
			if e > last {
				continue
			}
			rest := full - t.stride[s]
			f := t.at(e, rest)
			if f >= inf {
				continue
			}
			if v := f + st.g.Cost[s][e]; v < st.best {
				st.offer(t.collect(e, rest, s, e), fmt.Sprintf("dp, wrap w=%d", w))
			}
		}
	}
	st.raise(float64(st.best), "dp complete")
	return true
}

// wrapSlack is the slack (see rowRange) of a wrap DP over rows w..last:
// it reads F[e][full − e_s] with e = |Q| − r_s + w for the wraps (s, w)
// it tries, whose other jobs, full − e_s − m from a cell of m at row p,
// must fit in [p, e). With the wrapping job in the table's whole
// multiset, that is a cell from which full − m fits in [p, |Q| + w).
func wrapSlack(nq, w, last int) int { return nq + w - last }

// wrapBound is a lower bound on any placement whose wrapping block has
// size index s and covers w head positions: that block's price, and
// every other job at its size's cheapest block (the trivial bound
// without one job of size s).
func (st *search) wrapBound(s, w int) int64 {
	e := st.nq - st.g.Sizes[s] + w
	return st.g.Cost[s][e] + st.triv - st.minc[s]
}

// collect reconstructs F[p][m]'s blocks, plus a wrapping block of size
// index ws at position wp when ws ≥ 0.
func (t *table) collect(p, m, ws, wp int) [][]int {
	out := make([][]int, len(t.stride))
	t.starts(p, m, out)
	if ws >= 0 {
		out[ws] = append(out[ws], wp)
	}
	return out
}

// suffixRest runs the DP of table.run backwards from the end of Q,
//
//	B[p][m] = min cost of placing exactly m in positions [p, |Q|)
//	        = min( B[p+1][m],  min_s B[p+r_s][m − e_s] + c(D(p, r_s)) ),
//
// no block running past the end, for rows p ≥ 1. It returns, for each
// size index s with jobs and each w in [1, r_s), B[w][full − e_s]: the
// least cost of the other jobs in [w, |Q|), a lower bound on them when a
// block of size s wraps over the w first positions. ok is false if ctx
// expired first. kept[k] is the row B[keepAt[k]] (keepAt ascending, in
// [1, |Q|)), for rotationBounds.
//
// As table.run, it is kept by multiset, and a column m holds only the
// rows p from which m fits in [p, |Q|) (p ≤ |Q| − T_m) and the other
// jobs, full − m, fit in [0, p) with a slack of maxR (p ≥ T − T_m −
// maxR): the others hold inf. That keeps every cell the results above
// read for a wrap of at most maxR − 1 head positions (the other jobs of
// such a placement, before p, cover at most p − 1 positions, and the
// wrapping block at most maxR − 1 before p): out exactly, and in kept
// every cell rotationBounds needs (see there).
func (st *search) suffixRest(ctx context.Context, t *table, maxR int, keepAt []int) (out, kept [][]int64, ok bool) {
	S, nq, full := t.S, st.nq, t.S-1
	sizes, cost := st.g.Sizes, st.g.Cost
	T := t.size[full]
	slack := maxR
	if allRows {
		slack = T // every row of every column
	}
	// Rows lo(m)..hi(m) of column m, stored from base(m) = hi(m) − W + 1.
	W := min(nq, nq-T+slack+1)
	if W <= 0 {
		W = 1
	}
	hiOf := func(m int) int { return nq - t.size[m] }
	loOf := func(m int) int { return max(1, T-t.size[m]-slack, hiOf(m)-W+1) }
	// Reused, not zeroed: every cell is written before it is read (column
	// m's rows from those of m − e_s, which are written first).
	buf := tableBuf(&freeTables, S*W, nil)
	defer freeTables.put(buf)
	col := func(m int) []int64 { return buf[m*W : (m+1)*W] }
	// get returns B[p][m], inf outside the rows kept.
	get := func(p, m int) int64 {
		lo, hi := loOf(m), hiOf(m)
		if p < lo || p > hi {
			return inf
		}
		return col(m)[p-(hi-W+1)]
	}
	for m := range S {
		if ctx.Err() != nil {
			return nil, nil, false
		}
		lo, hi := loOf(m), hiOf(m)
		if lo > hi {
			continue
		}
		base := hi - W + 1
		g := col(m)[lo-base : hi-base+1] // g[k] is row lo + k
		if m == 0 {
			clear(g) // nothing to place costs nothing
			continue
		}
		first := true
		for s, r := range sizes {
			if t.digit(s, m) == 0 {
				continue
			}
			// Row p from row p + r of m − e_s, within its rows (p + r ≤
			// |Q| − T_m + r, and p + r ≥ T − T_m + r − maxR).
			sm := m - t.stride[s]
			sbase := hiOf(sm) - W + 1
			src := col(sm)[lo+r-sbase : hi+r-sbase+1]
			relax(g, src, cost[s][lo:hi+1], first)
			first = false
		}
		// A position left free: the running minimum up the rows, from inf
		// (row hi + 1, from which m does not fit).
		mn := int64(inf)
		for k := len(g) - 1; k >= 0; k-- {
			mn = min(mn, g[k])
			g[k] = mn
		}
	}
	out = make([][]int64, len(sizes))
	for s, r := range sizes {
		if st.eps[s] > 0 {
			out[s] = make([]int64, r)
			for p := 1; p < r && p < nq; p++ {
				out[s][p] = get(p, full-t.stride[s])
			}
		}
	}
	kept = make([][]int64, len(keepAt))
	for k, p := range keepAt {
		kept[k] = make([]int64, S)
		for m := range S {
			kept[k][m] = get(p, m)
		}
	}
	return out, kept, true
}

// rotationCount returns the least K < limit such that K boundaries
// between positions of Q, evenly spread (at least d = ⌊|Q|/K⌋ apart),
// cannot all be crossed by the blocks of one placement, or 0 if there is
// none. A block of r positions crosses r − 1 consecutive boundaries and so
// at most ⌈(r−1)/d⌉ of the K; the placement crosses at most the sum over
// its jobs.
func (st *search) rotationCount(limit int) int {
	nq := st.nq
	for k := 2; k < limit && k <= nq; k++ {
		d := nq / k
		cross := 0
		for s, e := range st.eps {
			cross += e * ((st.g.Sizes[s] - 1 + d - 1) / d)
		}
		if cross < k {
			return k
		}
	}
	return 0
}

// rotations finishes exact by K−1 more DPs without wrap-around, each over
// Q rotated to start at x_k = ⌊k·|Q|/K⌋, k = 1..K−1 (the DP already run is
// x_0 = 0). A placement whose blocks all keep off the boundary between
// positions x_k − 1 and x_k is a placement without wrap-around on the
// rotation at x_k, which that DP prices. rotationCount chose K so that no
// placement crosses all K boundaries: the cheapest over the K DPs is
// optimal. It replaces the wrap DPs when more of them would run.
func (st *search) rotations(ctx context.Context, t *table, k int, skip []bool) bool {
	nq, full := st.nq, t.S-1
	defer func() { t.rot = 0 }()
	if k >= 3 && nq >= parallelRotations {
		return st.rotationsAside(ctx, t, k, skip)
	}
	best := st.best
	for i := 1; i < k; i++ {
		if skip != nil && skip[i] {
			st.stats.RotationsSkipped++
			if onSkip != nil {
				onSkip(st, t.S, i*nq/k, best)
			}
			continue
		}
		t.rot = i * nq / k
		st.stats.RotationDPs++
		if !t.run(ctx, 0, nq, 0) {
			return false
		}
		if v := t.at(nq, full); v < st.best {
			st.offer(t.collect(nq, full, -1, -1), fmt.Sprintf("dp, rotation at %d", t.rot))
		}
	}
	return true
}

// firstWrapAt replaces the incumbent, which is optimal and wraps, by the
// first wrap, in the order of exact's wrap DPs (head length w, then size),
// whose DP reaches the same cost: the answer of the wrap DPs. A wrap whose
// lower bound exceeds the optimum is skipped. It keeps the incumbent if
// ctx expires first.
func (st *search) firstWrapAt(ctx context.Context, t *table, maxR int, restAt, backAt [][]int64) {
	nq, full, opt := st.nq, t.S-1, st.best
	reaches := func(s, w int) bool {
		r := st.g.Sizes[s]
		if r <= w || st.eps[s] == 0 || st.wrapBound(s, w) > opt {
			return false
		}
		c := st.g.Cost[s][nq-r+w]
		return c+restAt[s][w] <= opt && c+backAt[s][w] <= opt
	}
	for w := 1; w < maxR; w++ {
		last := -1
		for s, r := range st.g.Sizes {
			if reaches(s, w) {
				last = max(last, nq-r+w)
			}
		}
		if last < w {
			continue
		}
		st.stats.WrapDPs++
		if !t.run(ctx, w, last, wrapSlack(nq, w, last)) {
			return
		}
		for s, r := range st.g.Sizes {
			e := nq - r + w
			if r <= w || st.eps[s] == 0 || e > last {
				continue
			}
			rest := full - t.stride[s]
			if f := t.at(e, rest); f < inf && f+st.g.Cost[s][e] == opt {
				st.starts = t.collect(e, rest, s, e)
				st.log("incumbent %d (dp, wrap w=%d: the wrap DPs' answer)", opt, w)
				return
			}
		}
	}
}

// parallelRotations is the shortest Q whose rotation DPs rotations
// shares with a second goroutine (a variable for the tests).
var parallelRotations = 4096

// rotationsAside is rotations with the DPs of the even rotations run on a
// second goroutine (the machine's second core), in a table of its own.
// Each DP depends on its rotation alone; the results are then offered in
// the order of the rotations, each when it beats the incumbent of that
// moment, as rotations offers them: the same incumbents. A rotation whose
// cost is no better than the incumbent before the DPs is not collected.
func (st *search) rotationsAside(ctx context.Context, t *table, k int, skip []bool) bool {
	nq, full, best := st.nq, t.S-1, st.best
	u := newTable(st, t.S)
	// Both goroutines run DPs: neither shares its columns' rows.
	t.alone, u.alone = true, true
	defer func() { t.alone = false }()
	type rotation struct {
		v      int64
		starts [][]int
		ok     bool
	}
	res := make([]rotation, k)
	each := func(tab *table, from int) {
		for i := from; i < k; i += 2 {
			if skip != nil && skip[i] {
				res[i] = rotation{v: inf, ok: true}
				continue
			}
			tab.rot = i * nq / k
			if !tab.run(ctx, 0, nq, 0) {
				return
			}
			r := rotation{v: tab.at(nq, full), ok: true}
			if r.v < best {
				r.starts = tab.collect(nq, full, -1, -1)
			}
			res[i] = r
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		each(u, 2)
	}()
	each(t, 1)
	<-done
	u.rot = 0
	for i := 1; i < k; i++ {
		if !res[i].ok {
			return false
		}
		if skip != nil && skip[i] {
			st.stats.RotationsSkipped++
			continue
		}
		st.stats.RotationDPs++
		if res[i].v < st.best {
			st.offer(res[i].starts, fmt.Sprintf("dp, rotation at %d", i*nq/k))
		}
	}
	return true
}

// rotationBounds returns which of the rotations 1..k−1 cannot improve
// the incumbent, and so need not run (skip[i]; nil when none is
// skipped), from the tables of the DP without wrap-around: t (rows 0..|Q|
// of Q unrotated, F) and the rows of suffixRest's B at the boundaries.
//
// Rotation i finds a placement better than the incumbent only if one
// exists that keeps off its boundary x_i (between positions x_i − 1 and
// x_i). Such a placement wraps (the DP without wrap-around found the best
// of the others), with a wrap (s, w) that alive accepts (its tests are
// lower bounds on the placement's cost), and its wrapping block, on
// positions e..|Q|−1 and 0..w−1 (e = |Q| − r_s + w), keeps off x_i: w ≤
// x_i ≤ e. The other jobs, the multiset full − e_s, lie in [w, e) without
// a block across x_i, so in [0, x_i) and [x_i, |Q|): they cost at least
//
//	H_i(full − e_s) = min over m ≤ full − e_s of F[x_i][m] + B[x_i][full − e_s − m].
//
// The placement costs at least c(D(e, r_s)) + H_i(full − e_s); the
// rotation is skipped when that is at least the incumbent for every such
// wrap. back[i−1] is the row B[x_i]. A cell of F or B that the DPs left
// out (rowRange, suffixRest) reads inf: the multiset m of such a
// placement lies in [w, x_i) and full − e_s − m in [x_i, e), and those
// cells are within the rows kept, so the term of its m is exact. The
// bound is taken with the incumbent before any rotation runs:
// the incumbent only falls, so a rotation skipped then is skippable
// after, and rotations and rotationsAside skip the same ones.
func (st *search) rotationBounds(t *table, back [][]int64, k int, alive func(s, w int) bool) []bool {
	S, nq, full := t.S, st.nq, t.S-1
	if S > maxBoundStates || len(back) != k-1 || noRotationBounds {
		return nil
	}
	// By size, the cheapest wrapping block alive accepts that keeps off
	// each boundary.
	off := make([][]int64, len(st.g.Sizes))
	var wraps []wrapAt
	for s, r := range st.g.Sizes {
		wraps = wraps[:0]
		for w := 1; w < r && st.eps[s] > 0; w++ {
			if alive(s, w) {
				wraps = append(wraps, wrapAt{w, st.g.Cost[s][nq-r+w]})
			}
		}
		off[s] = cheapestOff(wraps, r, nq, k)
	}
	var skip []bool
	for i := 1; i < k; i++ {
		x := i * nq / k
		lb := int64(inf)
		for s := range st.g.Sizes {
			c := off[s][i-1] // the cheapest wrapping block of size s that keeps off x
			if c >= inf {
				continue
			}
			rest := full - t.stride[s]
			h := int64(inf)
			bx := back[i-1]
			for m := 0; m < S; m++ {
				if t.digit(s, m) >= st.eps[s] { // m ≤ rest: its other digits are at most ε
					continue
				}
				if v := t.atAny(x, m) + bx[rest-m]; v < h {
					h = v
				}
			}
			lb = min(lb, c+h)
		}
		if lb >= st.best {
			if skip == nil {
				skip = make([]bool, k)
			}
			skip[i] = true
		}
	}
	return skip
}

// A wrapAt is a wrapping block of a size r: on positions |Q| − r + w …
// |Q| − 1 and 0 … w − 1 (head length w), of price c.
type wrapAt struct {
	w int
	c int64
}

// cheapestOff returns, for each boundary x_i = i·|Q|/k, i = 1 … k − 1 (at
// index i − 1), the least price of the wrapping blocks of size r among
// wraps (w ascending) that keep off it, x_i − |Q| + r ≤ w ≤ x_i, or inf
// for none. Both ends of that range rise with i: the minimum is kept
// over the sliding range in a queue of the candidates (w ascending,
// prices strictly ascending), in O(k + len(wraps)) instead of
// O(k · len(wraps)).
func cheapestOff(wraps []wrapAt, r, nq, k int) []int64 {
	out := make([]int64, max(0, k-1))
	q := make([]int, 0, len(wraps)) // indices into wraps; q[head:] is the queue
	head, next := 0, 0
	for i := 1; i < k; i++ {
		x := i * nq / k
		for ; next < len(wraps) && wraps[next].w <= x; next++ {
			for len(q) > head && wraps[q[len(q)-1]].c >= wraps[next].c {
				q = q[:len(q)-1] // never the least again: next costs no more and stays longer
			}
			q = append(q, next)
		}
		for head < len(q) && wraps[q[head]].w < x-nq+r {
			head++
		}
		out[i-1] = inf
		if head < len(q) {
			out[i-1] = wraps[q[head]].c
		}
	}
	return out
}

// onSkip, for the tests, sees each rotation rotations skips: its start
// rot and the incumbent before the rotations.
var onSkip func(st *search, states, rot int, best int64)

// maxBoundStates bounds the multisets rotationBounds works with (its work
// is rotations × sizes × states × sizes).
const maxBoundStates = 1 << 14

// noRotationBounds, for the tests, turns rotationBounds off.
var noRotationBounds bool
