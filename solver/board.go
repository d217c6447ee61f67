package solver

import (
	"context"
	"math"
	"slices"
	"sync"

	"github.com/optsched/optsched/model"
)

// A Board is where an exact solver publishes its incumbent and its lower
// bound as they improve, so that whoever runs it — the Portfolio — still
// has them when the solver must be abandoned at the deadline (a cgo call
// that does not return, a step that overruns). It is safe for concurrent
// use; the methods of a nil *Board do nothing, so a solver may publish
// unconditionally.
type Board struct {
	mu     sync.Mutex
	allocs []model.Allocation
	obj    int64
	has    bool
	bound  float64
	from   string
}

// NewBoard returns an empty board: no incumbent, no bound.
func NewBoard() *Board { return &Board{bound: NoBound} }

type boardKey struct{}

// WithBoard returns a context that carries b to the solver it is given to.
func WithBoard(ctx context.Context, b *Board) context.Context {
	return context.WithValue(ctx, boardKey{}, b)
}

// BoardFrom returns the board ctx carries, or nil.
func BoardFrom(ctx context.Context) *Board {
	b, _ := ctx.Value(boardKey{}).(*Board)
	return b
}

// Offer publishes allocs, of objective obj, found by the solver named
// from, when it is better than the board's incumbent. The allocations are
// copied only when they are kept. build, when allocs is nil, builds them
// lazily (only for an improvement), since decoding costs time.
func (b *Board) Offer(obj int64, from string, allocs []model.Allocation, build func() []model.Allocation) {
	if b == nil {
		return
	}
	b.mu.Lock()
	better := !b.has || obj < b.obj
	b.mu.Unlock()
	if !better {
		return
	}
	if allocs == nil && build != nil {
		allocs = build()
	}
	if allocs == nil {
		return
	}
	cp := cloneAllocs(allocs)
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.has || obj < b.obj {
		b.allocs, b.obj, b.has, b.from = cp, obj, true, from
	}
}

func cloneAllocs(allocs []model.Allocation) []model.Allocation {
	cp := make([]model.Allocation, len(allocs))
	for i, a := range allocs {
		cp[i] = a
		cp[i].Nodes = slices.Clone(a.Nodes)
	}
	return cp
}

// Raise publishes a proven lower bound when it is higher than the board's.
func (b *Board) Raise(bound float64) {
	if b == nil || math.IsNaN(bound) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if math.IsNaN(b.bound) || bound > b.bound {
		b.bound = bound
	}
}

// Best returns the board's incumbent (ok false when there is none), a
// copy of its allocations, and its bound (NoBound when none was raised).
func (b *Board) Best() (allocs []model.Allocation, obj int64, bound float64, ok bool) {
	if b == nil {
		return nil, 0, NoBound, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.has {
		return nil, 0, b.bound, false
	}
	return cloneAllocs(b.allocs), b.obj, b.bound, true
}
