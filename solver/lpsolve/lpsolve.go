//go:build cgo

package lpsolve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/draffensperger/golp"

	"github.com/optsched/optsched/encode"
	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/solver"
)

// Available reports whether lp_solve is linked in (this build has cgo).
const Available = true

// ErrUnavailable is returned by Solve in builds without cgo.
var ErrUnavailable = errors.New("lpsolve: this optsched was built without cgo; lp_solve is unavailable")

// Solver solves the M_SCAS program with lp_solve. The zero value uses the
// strong formulation and is quiet. A Solver holds no lp_solve state: each
// Solve builds its own model, so one Solver may serve concurrent Solves.
type Solver struct {
	// Formulation selects the program (scas.Strong by default).
	Formulation scas.Formulation
	// Verbose, when set, receives lp_solve's log (verbosity NORMAL) after
	// each solve; nil keeps lp_solve silent (verbosity NEUTRAL).
	Verbose io.Writer
}

var _ solver.Solver = Solver{}

// Name returns "lpsolve".
func (Solver) Name() string { return "lpsolve" }

// objTolerance is how far lp_solve's objective may be from the objective
// recomputed from the decoded allocation (costs are integers).
const objTolerance = 0.5

// feasTolerance bounds the row and bound violations accepted in a solution
// lp_solve reports (its own tolerances are around 1e-9..1e-7).
const feasTolerance = 1e-6

// infinite is lp_solve's default infinity; the objective reads it when
// there is no incumbent.
const infinite = 1e30

// warmUp makes one model before any Solve runs: make_lp initialises
// lp_solve's process-wide BLAS function table on first use, and doing that
// once, alone, keeps concurrent first Solves from racing on it.
var warmUp = sync.OnceFunc(func() {
	lp := golp.NewLP(0, 1)
	runtime.KeepAlive(lp)
})

// Solve builds the M_SCAS program of p, solves it with lp_solve within ctx's
// deadline, and returns the decoded allocation.
//
// Every stage watches ctx: encoding (given up when ctx ends, see build),
// loading the model (checked every few hundred rows) and lp_solve's search
// (the shim's abort callback). When ctx ends during encoding, the encoding
// goroutine may go on reading p.Window for a moment after Solve returns;
// windows are never modified once read, and must not be then.
//
// Statuses: lp_solve's OPTIMAL gives Optimal (Bound = Objective);
// SUBOPTIMAL (stopped at the deadline with an incumbent) gives Feasible
// with the incumbent; stopped without an incumbent (USERABORT from the
// deadline or cancellation, TIMEOUT) gives Unknown; INFEASIBLE gives
// Infeasible. Anything else is an error. A proof found after the abort
// callback fired is not trusted: OPTIMAL is reported as Feasible and
// INFEASIBLE as Unknown then.
//
// It publishes (Problem.Publish) every incumbent lp_solve finds while it
// runs (the shim's message callback, looked at every publishEvery), and
// when lp_solve returns the decoded answer and, with OPTIMAL, its
// objective as the bound. lp_solve reports no bound of its branch and
// bound short of the optimum through this interface.
func (s Solver) Solve(ctx context.Context, p *solver.Problem) (*solver.Result, error) {
	lps := &solver.LPStats{Formulation: s.Formulation.String(), Status: -1}
	res := &solver.Result{Status: solver.Unknown, Bound: solver.NoBound, Encoding: "scas", Solver: "lpsolve",
		Stats: solver.Stats{LP: lps}}
	if ctx.Err() != nil {
		return res, nil // out of time before we start
	}
	enc, err := s.build(ctx, p)
	if err != nil {
		return nil, err
	}
	if enc == nil {
		return res, nil // out of time while encoding
	}
	prog := &enc.Program
	lps.Rows, lps.Cols, lps.Nonzeros = len(prog.Rows), prog.NumVars(), prog.NumNonzeros()
	if prog.NumVars() == 0 {
		return nil, errors.New("lpsolve: the program has no variables")
	}
	if ctx.Err() != nil {
		return res, nil
	}

	dl, hasDeadline := ctx.Deadline()
	expired := func() bool {
		return ctx.Err() != nil || (hasDeadline && !time.Now().Before(dl))
	}

	warmUp()
	lp, outcome, err := s.load(prog, expired)
	// lp's finalizer frees the C model: keep lp alive until we are done
	// with the raw handle (golp's methods do not do it for us).
	defer runtime.KeepAlive(lp)
	switch {
	case err != nil:
		return nil, err
	case outcome == loadInfeasible:
		res.Status = solver.Infeasible
		return res, nil
	case outcome == loadExpired:
		return res, nil
	}
	h, err := lprecOf(lp)
	if err != nil {
		return nil, err
	}
	setGaps(h, absMIPGap, relMIPGap)

	// The deadline goes to the shim's abort callback, which lp_solve polls
	// where it would check its own timeout (golp's SetTimeout, whole
	// seconds, is not used: see the package documentation).
	budget := int64(-1)
	if hasDeadline {
		left := time.Until(dl)
		if left <= 0 {
			return res, nil
		}
		budget = int64(left)
	}
	publish := p.Publisher != nil
	ncols := 0
	if publish {
		ncols = prog.NumVars()
	}
	k, err := attach(h, budget, s.Verbose != nil, ncols)
	if err != nil {
		return nil, err
	}
	// Cancellation (and the deadline, as a second path) through ctx.Done,
	// and lp_solve's incumbents published as it finds them.
	stop, watched := make(chan struct{}), make(chan struct{})
	if done := ctx.Done(); done != nil || publish {
		go func() {
			defer close(watched)
			watch(k, done, stop, publish, func(x []float64) { offerIncumbent(p, enc, x) })
		}()
	} else {
		close(watched)
	}

	t0 := time.Now()
	st := lp.Solve()
	lps.SolveMS = float64(time.Since(t0).Microseconds()) / 1000

	close(stop)
	<-watched // no cancel after detach
	// A proof completed after the deadline is not trusted either: lp_solve
	// may have cut the search without the callback noticing first.
	fired := k.fired() || (hasDeadline && !time.Now().Before(dl))
	iters, nodes := counters(h)
	logText, cut := k.log()
	k.detach()
	lps.Iterations, lps.Nodes, lps.Status = &iters, &nodes, int(st)
	if s.Verbose != nil {
		s.Verbose.Write(logText)
		if cut {
			io.WriteString(s.Verbose, "\n[lpsolve: log cut at 4 MiB]\n")
		}
	}

	switch st {
	case golp.OPTIMAL, golp.SUBOPTIMAL:
		if err := s.decode(res, enc, lp); err != nil {
			return nil, err
		}
		if st == golp.OPTIMAL && !fired {
			res.Status = solver.Optimal
			res.Bound = float64(res.Objective)
		} else {
			res.Status = solver.Feasible
		}
		pub := p.Publish()
		pub.Offer(res.Objective, s.Name(), res.Allocations, nil)
		if res.HasBound() {
			pub.Raise(res.Bound)
		}
	case golp.INFEASIBLE:
		if !fired {
			res.Status = solver.Infeasible
		}
	case golp.USERABORT:
		if !fired {
			return nil, errors.New("lpsolve: lp_solve reported USERABORT, but no abort was requested")
		}
	case golp.TIMEOUT:
		// Unknown: no incumbent (with one lp_solve says SUBOPTIMAL).
	default:
		return nil, fmt.Errorf("lpsolve: lp_solve returned %v (%d)", st, int(st))
	}
	return res, nil
}

// publishEvery is how often Solve looks for an incumbent lp_solve found.
const publishEvery = 5 * time.Millisecond

// watch cancels k when done is closed and, with publish, hands every
// new incumbent lp_solve keeps to found, until stop is closed. After a
// cancel it keeps looking: an lp_solve that does not stop is abandoned
// by the Portfolio with what was published.
func watch(k *ctl, done <-chan struct{}, stop <-chan struct{}, publish bool, found func([]float64)) {
	var tick <-chan time.Time
	var x []float64
	if publish {
		t := time.NewTicker(publishEvery)
		defer t.Stop()
		tick, x = t.C, make([]float64, k.c.ncols)
	}
	var seen uint64
	for {
		select {
		case <-done:
			k.cancel()
			done = nil
		case <-tick:
			if v := k.incumbent(x, seen); v != seen {
				seen = v
				found(x)
			}
		case <-stop:
			return
		}
	}
}

// offerIncumbent publishes x, an incumbent lp_solve found mid-solve, when
// it satisfies the program and decodes; otherwise it is passed over (the
// final answer is checked as decode checks it).
func offerIncumbent(p *solver.Problem, enc *scas.Encoding, x []float64) {
	if v, _ := enc.Program.Violation(x); v > feasTolerance {
		return
	}
	allocs, err := enc.Decode(x)
	if err != nil {
		return
	}
	p.Publish().Offer(solver.Objective(p.Window, allocs), "lpsolve", allocs, nil)
}

// build encodes p. Encoding cannot be interrupted, and the paper form of
// a large window takes a while (300 ms or more for 32 jobs on 600 idle
// nodes), so under a context that can end, build encodes in a goroutine
// and gives up waiting when ctx is done: it then returns nil, nil, and the
// goroutine finishes on its own (it only reads p) and is dropped.
func (s Solver) build(ctx context.Context, p *solver.Problem) (*scas.Encoding, error) {
	if ctx.Done() == nil {
		return scas.Build(p.Window, p.Jobs, s.Formulation)
	}
	type built struct {
		enc *scas.Encoding
		err error
	}
	ch := make(chan built, 1)
	go func() {
		enc, err := scas.Build(p.Window, p.Jobs, s.Formulation)
		ch <- built{enc, err}
	}()
	select {
	case b := <-ch:
		return b.enc, b.err
	case <-ctx.Done():
		return nil, nil
	}
}

// Outcomes of load besides a model ready to solve.
const (
	loaded = iota
	loadInfeasible
	loadExpired
)

// loadCheckRows is how many rows load adds between two looks at the clock.
const loadCheckRows = 256

// load builds the golp model of prog: minimise, binary columns, sparse
// rows. It answers loadInfeasible when prog has an empty row that cannot
// hold (golp cannot add an empty row; satisfied empty rows are left out),
// and loadExpired when expired reports true between rows: lp_solve spends
// some 10–20 µs per row added (in its own append_rows, whatever the row's
// length), so the 10⁵-row paper-form programs of large windows take
// seconds to load, and the deadline must be watched here too.
func (s Solver) load(prog *encode.Program, expired func() bool) (lp *golp.LP, outcome int, err error) {
	n := prog.NumVars()
	lp = golp.NewLP(0, n)
	if _, err := lprecOf(lp); err != nil {
		return lp, 0, err
	}
	if s.Verbose != nil {
		lp.SetVerboseLevel(golp.NORMAL)
	} else {
		lp.SetVerboseLevel(golp.NEUTRAL)
	}
	// golp's SetObjFn leaves row-add mode; set the objective first, then
	// add the rows in row mode (about 10× faster), then leave it again.
	lp.SetObjFn(prog.Obj)
	lp.SetAddRowMode(true)
	var row []golp.Entry
	added := 0
	for i := range prog.Rows {
		if i%loadCheckRows == loadCheckRows-1 && expired() {
			return lp, loadExpired, nil
		}
		r := &prog.Rows[i]
		if len(r.Cols) == 0 {
			if !emptyRowHolds(r.Sense, r.RHS) {
				return lp, loadInfeasible, nil
			}
			continue
		}
		row = row[:0]
		for k, c := range r.Cols {
			if c < 0 || c >= n {
				return lp, 0, fmt.Errorf("lpsolve: row %s has column %d of %d", r.Name, c, n)
			}
			row = append(row, golp.Entry{Col: c, Val: r.Coefs[k]})
		}
		var ct golp.ConstraintType
		switch r.Sense {
		case encode.LE:
			ct = golp.LE
		case encode.GE:
			ct = golp.GE
		case encode.EQ:
			ct = golp.EQ
		default:
			return lp, 0, fmt.Errorf("lpsolve: row %s has sense %q", r.Name, r.Sense)
		}
		lp.AddConstraintSparse(row, ct, r.RHS) // always returns nil
		added++
		if s.Verbose != nil {
			lp.SetRowName(added-1, r.Name)
		}
	}
	lp.SetAddRowMode(false)
	for j := range n {
		lp.SetBinary(j, true)
		if s.Verbose != nil {
			lp.SetColName(j, prog.VarNames[j])
		}
	}
	// golp ignores add_constraintex's result: check that every row made it.
	if lp.NumRows() != added || lp.NumCols() != n {
		return lp, 0, fmt.Errorf("lpsolve: lp_solve holds %d rows × %d columns, want %d × %d",
			lp.NumRows(), lp.NumCols(), added, n)
	}
	return lp, loaded, nil
}

func emptyRowHolds(s encode.Sense, rhs float64) bool {
	switch s {
	case encode.LE:
		return 0 <= rhs
	case encode.GE:
		return 0 >= rhs
	default:
		return rhs == 0
	}
}

// decode turns lp_solve's incumbent into res's allocation, checks it
// against the program, and checks lp_solve's objective against the one
// recomputed from the allocation.
func (s Solver) decode(res *solver.Result, enc *scas.Encoding, lp *golp.LP) error {
	obj := lp.Objective()
	if math.IsNaN(obj) || math.Abs(obj) >= infinite/10 {
		return fmt.Errorf("lpsolve: lp_solve reported a solution with objective %g", obj)
	}
	x := lp.Variables()
	if v, where := enc.Program.Violation(x); v > feasTolerance {
		return fmt.Errorf("lpsolve: lp_solve's solution violates %s by %g", where, v)
	}
	allocs, err := enc.Decode(x)
	if err != nil {
		return fmt.Errorf("lpsolve: decoding lp_solve's solution: %w", err)
	}
	res.Allocations = allocs
	res.Objective = solver.Objective(enc.Blocks.Window, allocs)
	if math.Abs(float64(res.Objective)-obj) > objTolerance {
		return fmt.Errorf("lpsolve: lp_solve's objective %g differs from the allocation's cost %d", obj, res.Objective)
	}
	return nil
}
