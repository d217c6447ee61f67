package solver

import (
	"math"
	"slices"
	"sync"

	"github.com/optsched/optsched/model"
)

// A PublisherOf is where an exact solver of objective type O publishes
// its incumbents and its lower bounds as they improve, so that whoever
// runs it still has them when the solver must be abandoned at the
// deadline (a cgo call that does not return, a step that overruns) or
// returns without them. A whole-node solver publishes to a Publisher
// (Problem.Publisher): csp and free as they search, brute, lp_solve and
// CLP when they end (see theirs). A scheduler publishes to a
// SchedulePublisher (ScheduleProblem.Publisher): sat and bnb as they
// search.
type PublisherOf[O ObjectiveValue] interface {
	// Offer publishes allocs, of objective obj, found by the solver
	// named from. build, when allocs is nil, builds them; a publisher
	// calls it only for an incumbent it keeps, since decoding costs
	// time. What build returns is the publisher's: allocations and node
	// lists made for the call, which no one changes afterwards, so that
	// a publisher may keep them without a copy (tee hands the same ones
	// to both of its publishers). allocs, by contrast, may be the
	// solver's own and are copied if kept.
	Offer(obj O, from string, allocs []model.Allocation, build func() []model.Allocation)
	// Raise publishes a proven lower bound on the objective.
	Raise(bound float64)
}

// A Publisher is where an exact whole-node solver publishes (int64 CH
// costs; a Portfolio gives its exact solver a Board).
type Publisher = PublisherOf[int64]

// A SchedulePublisher is where an exact scheduler publishes (float64
// objectives; SolveWindow gives its scheduler a ScheduleBoard).
type SchedulePublisher = PublisherOf[float64]

// discard is the Publisher of a problem without one.
type discard[O ObjectiveValue] struct{}

func (discard[O]) Offer(O, string, []model.Allocation, func() []model.Allocation) {}
func (discard[O]) Raise(float64)                                                  {}

// tee publishes to both of its publishers.
type tee[O ObjectiveValue] [2]PublisherOf[O]

func (t tee[O]) Offer(obj O, from string, allocs []model.Allocation, build func() []model.Allocation) {
	if allocs == nil && build != nil {
		var once []model.Allocation
		built, orig := false, build
		build = func() []model.Allocation {
			if !built {
				once, built = orig(), true
			}
			return once
		}
	}
	t[0].Offer(obj, from, allocs, build)
	t[1].Offer(obj, from, allocs, build)
}

func (t tee[O]) Raise(bound float64) {
	t[0].Raise(bound)
	t[1].Raise(bound)
}

// A BoardOf keeps the best incumbent and the highest bound published to
// it. It is safe for concurrent use; the methods of a nil *BoardOf do
// nothing.
type BoardOf[O ObjectiveValue] struct {
	mu     sync.Mutex
	allocs []model.Allocation
	obj    O
	has    bool
	bound  float64
	from   string
}

// A Board is the Publisher a Portfolio gives its exact solver.
type Board = BoardOf[int64]

// A ScheduleBoard is the SchedulePublisher SolveWindow gives its
// scheduler.
type ScheduleBoard = BoardOf[float64]

var (
	_ Publisher         = (*Board)(nil)
	_ SchedulePublisher = (*ScheduleBoard)(nil)
)

// NewBoard returns an empty board: no incumbent, no bound.
func NewBoard() *Board { return &Board{bound: NoBound} }

// NewScheduleBoard returns an empty schedule board: no incumbent, no
// bound.
func NewScheduleBoard() *ScheduleBoard { return &ScheduleBoard{bound: NoBound} }

// Offer publishes allocs, of objective obj, found by the solver named
// from, when it is better than the board's incumbent. The allocations are
// copied only when they are kept. build, when allocs is nil, builds them
// lazily (only for an improvement), since decoding costs time; what it
// builds is kept as it is (see PublisherOf.Offer), and Best copies it.
func (b *BoardOf[O]) Offer(obj O, from string, allocs []model.Allocation, build func() []model.Allocation) {
	if b == nil {
		return
	}
	b.mu.Lock()
	better := !b.has || obj < b.obj
	b.mu.Unlock()
	if !better {
		return
	}
	cp := allocs
	if allocs == nil && build != nil {
		cp = build() // made for the call: kept without a copy
	} else if allocs != nil {
		cp = cloneAllocs(allocs)
	}
	if cp == nil {
		return
	}
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
func (b *BoardOf[O]) Raise(bound float64) {
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
func (b *BoardOf[O]) Best() (allocs []model.Allocation, obj O, bound float64, ok bool) {
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
