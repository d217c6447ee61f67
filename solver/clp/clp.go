//go:build cgo

package clp

import (
	"context"
	"fmt"
	"math"
	"time"

	lanl "github.com/lanl/clp"

	"github.com/optsched/optsched/encode"
)

// Available reports whether CLP is linked into this binary. It is true:
// this binary was built with cgo.
const Available = true

// watchdogGrace is how long LPBound waits, once ctx is done, for CLP to
// stop on its own time limit before abandoning the solve.
const watchdogGrace = 50 * time.Millisecond

// Tolerance is the relative margin taken off CLP's values to make a bound
// safe: a bound v is reported as v − Tolerance·max(1, |v|).
const Tolerance = 1e-6

// LPBound solves the LP relaxation of prog (every variable in [0, 1], every
// row with its sense as row bounds, minimisation) with CLP's dual simplex
// and returns a lower bound on prog's optimum, the LP's column values x
// and the status:
//
//   - Optimal: bound is the LP optimum v less Tolerance·max(1, |v|); x is
//     an optimal LP solution.
//   - Stopped: ctx's deadline (CLP's time limit) or a CLP failure ended the
//     solve first. bound is then the Lagrangian bound of the row duals CLP
//     hands back — valid for any duals — less the same margin. Those are
//     the duals of CLP's last refactorisation: with the dual simplex they
//     are (nearly) dual feasible and the bound is close to the dual
//     objective then reached, but early on they are the slack basis's
//     (all 0) and the bound is Σ min(0, c_j), i.e. 0 here. CLP's objective
//     value is not used: CLP perturbs costs and reports it also for bases
//     that are not dual feasible. x is CLP's current, generally
//     infeasible, primal point. When CLP never answered (ctx done before
//     the solve, or CLP abandoned by the watchdog) bound is NaN and x nil.
//   - Infeasible: CLP proved the LP infeasible; bound is +Inf and x nil.
//
// For Optimal the bound is min(v, Lagrangian bound of CLP's final duals)
// less the margin, so that a CLP answer that its own duals do not support
// cannot produce a bound above the true optimum.
//
// The deadline is converted into CLP's time limit (SetMaxSeconds), less a
// margin of a tenth of the time left (at most 1 s) for CLP's overshoot.
// CLP measures that limit in user CPU time of the whole process (all
// threads), not wall time, and cannot be interrupted during its start-up
// (scaling, first factorisation: ~0.5 s on a 500 000-row program), so
// LPBound also runs CLP on its own goroutine and, once ctx is done,
// waits at most watchdogGrace for CLP to stop before returning Stopped with
// a NaN bound; an abandoned CLP solve finishes in the background (its CPU
// limit ends it soon after) and its answer is discarded. A ctx cancelled
// without a deadline cannot stop CLP: the solve is abandoned the same way
// and runs to completion in the background.
//
// LPBound returns an error only for a malformed program (a column index
// out of range, mismatched rows, a bad sense, a non-finite coefficient).
func LPBound(ctx context.Context, prog *encode.Program) (bound float64, x []float64, status BoundStatus, err error) {
	l, err := newLP(prog)
	if err != nil {
		return math.NaN(), nil, Stopped, err
	}
	out := l.solve(ctx)
	return out.bound, out.x, out.status, nil
}

// An lp is a Program translated for CLP: column-wise matrix data and the
// row bounds.
type lp struct {
	prog           *encode.Program
	nrows, ncols   int
	nnz            int
	start          []int // start[j]..start[j+1]: column j's entries
	rowIdx         []int
	val            []float64
	rowLow, rowUpp []float64
	// maxIter, when positive, caps CLP's iterations (for tests: a
	// deterministic way to stop the dual simplex early).
	maxIter int
}

// newLP checks prog and transposes its rows into columns, merging repeated
// entries of a row and dropping zeros.
func newLP(prog *encode.Program) (*lp, error) {
	if prog == nil {
		return nil, fmt.Errorf("clp: nil program")
	}
	l := &lp{prog: prog, nrows: len(prog.Rows), ncols: prog.NumVars()}
	if len(prog.Obj) != l.ncols {
		return nil, fmt.Errorf("clp: %d objective coefficients for %d variables", len(prog.Obj), l.ncols)
	}
	for j, c := range prog.Obj {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return nil, fmt.Errorf("clp: objective coefficient of %s is %g", prog.VarNames[j], c)
		}
	}
	l.rowLow = make([]float64, l.nrows)
	l.rowUpp = make([]float64, l.nrows)
	count := make([]int, l.ncols+1)
	for i := range prog.Rows {
		r := &prog.Rows[i]
		if len(r.Cols) != len(r.Coefs) {
			return nil, fmt.Errorf("clp: row %s has %d columns and %d coefficients", r.Name, len(r.Cols), len(r.Coefs))
		}
		if math.IsNaN(r.RHS) || math.IsInf(r.RHS, 0) {
			return nil, fmt.Errorf("clp: row %s has right-hand side %g", r.Name, r.RHS)
		}
		switch r.Sense {
		case encode.LE:
			l.rowLow[i], l.rowUpp[i] = math.Inf(-1), r.RHS
		case encode.GE:
			l.rowLow[i], l.rowUpp[i] = r.RHS, math.Inf(1)
		case encode.EQ:
			l.rowLow[i], l.rowUpp[i] = r.RHS, r.RHS
		default:
			return nil, fmt.Errorf("clp: row %s has sense %q", r.Name, r.Sense)
		}
		for k, c := range r.Cols {
			if c < 0 || c >= l.ncols {
				return nil, fmt.Errorf("clp: row %s refers to variable %d of %d", r.Name, c, l.ncols)
			}
			if v := r.Coefs[k]; math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("clp: row %s has coefficient %g", r.Name, v)
			}
			count[c+1]++
		}
	}
	for j := 0; j < l.ncols; j++ {
		count[j+1] += count[j]
	}
	total := count[l.ncols]
	rowIdx := make([]int, total)
	val := make([]float64, total)
	next := append([]int(nil), count[:l.ncols]...)
	for i := range prog.Rows {
		r := &prog.Rows[i]
		for k, c := range r.Cols {
			rowIdx[next[c]], val[next[c]] = i, r.Coefs[k]
			next[c]++
		}
	}
	// Rows were visited in order, so each column's row indices ascend and
	// repeats are adjacent: merge them and drop zeros, compacting in place.
	l.start = make([]int, l.ncols+1)
	w := 0
	for j := 0; j < l.ncols; j++ {
		l.start[j] = w
		for p := count[j]; p < count[j+1]; p++ {
			if w > l.start[j] && rowIdx[w-1] == rowIdx[p] {
				val[w-1] += val[p]
				continue
			}
			rowIdx[w], val[w] = rowIdx[p], val[p]
			w++
		}
		// Drop entries that are (or summed to) zero.
		k := l.start[j]
		for p := l.start[j]; p < w; p++ {
			if val[p] != 0 {
				rowIdx[k], val[k] = rowIdx[p], val[p]
				k++
			}
		}
		w = k
	}
	l.start[l.ncols] = w
	l.rowIdx, l.val, l.nnz = rowIdx[:w], val[:w], w
	return l, nil
}

// An outcome is what a solve returns.
type outcome struct {
	bound  float64
	x      []float64
	status BoundStatus
	// clpStatus is CLP's problem status (0 optimal, 1 primal infeasible,
	// 2 dual infeasible, 3 stopped on iterations or time, 4 stopped on
	// errors, 5 stopped by an event handler); −1 when CLP did not run or
	// was abandoned.
	clpStatus int
	// clpObjective is CLP's objective value (NaN when CLP did not finish).
	clpObjective float64
	// lagrangian is the Lagrangian bound of CLP's row duals (NaN when CLP
	// did not finish).
	lagrangian float64
}

func stopped() outcome {
	return outcome{bound: math.NaN(), status: Stopped, clpStatus: -1, clpObjective: math.NaN(), lagrangian: math.NaN()}
}

// solve runs CLP's dual simplex on l under ctx (see LPBound).
func (l *lp) solve(ctx context.Context) outcome {
	if ctx.Err() != nil {
		return stopped()
	}
	if l.ncols == 0 {
		return l.solveEmpty()
	}
	pm := lanl.NewPackedMatrix()
	// Without Reserve, CoinPackedMatrix grows by one column per append
	// and appending is quadratic in the number of columns.
	pm.Reserve(l.ncols, l.nnz, false)
	col := make([]lanl.Nonzero, 0, 16)
	for j := 0; j < l.ncols; j++ {
		if j%4096 == 4095 && ctx.Err() != nil {
			return stopped()
		}
		col = col[:0]
		for p := l.start[j]; p < l.start[j+1]; p++ {
			col = append(col, lanl.Nonzero{Index: l.rowIdx[p], Value: l.val[p]})
		}
		pm.AppendColumn(col)
	}
	// The matrix knows only rows that hold a nonzero; declare them all.
	pm.SetDimensions(l.nrows, l.ncols)
	colBounds := make([]lanl.Bounds, l.ncols)
	for j := range colBounds {
		colBounds[j] = lanl.Bounds{Lower: 0, Upper: 1}
	}
	rowBounds := make([]lanl.Bounds, l.nrows)
	for i := range rowBounds {
		rowBounds[i] = lanl.Bounds{Lower: l.rowLow[i], Upper: l.rowUpp[i]}
	}
	s := lanl.NewSimplex()
	s.LoadProblem(pm, colBounds, l.prog.Obj, rowBounds, nil)
	s.SetOptimizationDirection(lanl.Minimize)
	if l.maxIter > 0 {
		s.SetMaxIterations(l.maxIter)
	}
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		if left <= 0 {
			return stopped()
		}
		// CLP stores "now + limit" in user CPU seconds of the process and
		// checks it only now and then (at refactorisations), overshooting
		// by up to ~0.4 s on large programs: leave it a margin, so that it
		// usually stops by itself, with duals, before the watchdog has to
		// abandon it.
		s.SetMaxSeconds((left - min(left/10, time.Second)).Seconds())
	}
	done := make(chan outcome, 1)
	go func() {
		st := int(s.Dual(lanl.NoValuesPass, lanl.NoStartFinishOptions))
		done <- l.result(st, s)
	}()
	select {
	case out := <-done:
		return out
	case <-ctx.Done():
	}
	select {
	case out := <-done:
		return out
	case <-time.After(watchdogGrace):
		// CLP is still running: abandon it. The goroutine owns s and sends
		// into the buffered channel when CLP stops; nobody reads it.
		return stopped()
	}
}

// result reads CLP's answer after a solve that ended with CLP status st.
func (l *lp) result(st int, s *lanl.Simplex) outcome {
	out := outcome{clpStatus: st, clpObjective: s.ObjectiveValue()}
	switch st {
	case 1:
		out.status, out.bound = Infeasible, math.Inf(1)
		out.lagrangian = math.NaN()
		return out
	case 0:
		out.status = Optimal
	default:
		out.status = Stopped
	}
	out.x = s.PrimalColumnSolution()
	out.lagrangian = l.lagrangian(s.DualRowSolution())
	b := out.lagrangian
	if st == 0 && (math.IsNaN(b) || out.clpObjective < b) {
		// Normally the duals certify CLP's objective up to tolerances;
		// take the smaller of the two.
		b = out.clpObjective
	}
	if math.IsNaN(b) {
		out.bound = math.NaN()
		return out
	}
	out.bound = safe(b)
	return out
}

// safe takes the margin Tolerance·max(1, |v|) off v.
func safe(v float64) float64 {
	return v - Tolerance*math.Max(1, math.Abs(v))
}

// lagrangian returns the Lagrangian dual value of the row multipliers y:
//
//	L(y) = Σ_i min_{r ∈ [low_i, upp_i]} y_i·r + Σ_j min_{x ∈ [0,1]} (c_j − (Aᵀy)_j)·x
//
// which is a lower bound on the LP (and so on the 0-1 program) for every
// y. A multiplier whose sign calls for an infinite row bound is set to 0
// first, so the bound stays finite. CLP's row duals follow the same
// convention (reduced cost d = c − Aᵀy).
func (l *lp) lagrangian(y []float64) float64 {
	if len(y) != l.nrows {
		return math.NaN()
	}
	y = append([]float64(nil), y...)
	var sum float64
	for i, v := range y {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			return math.NaN()
		case v > 0 && !math.IsInf(l.rowLow[i], -1):
			sum += v * l.rowLow[i]
		case v < 0 && !math.IsInf(l.rowUpp[i], 1):
			sum += v * l.rowUpp[i]
		default:
			y[i] = 0
		}
	}
	for j := 0; j < l.ncols; j++ {
		d := l.prog.Obj[j]
		for p := l.start[j]; p < l.start[j+1]; p++ {
			d -= l.val[p] * y[l.rowIdx[p]]
		}
		if d < 0 {
			sum += d
		}
	}
	return sum
}

// solveEmpty answers a program without variables: it is feasible (with
// optimum 0) exactly when 0 lies within every row's bounds.
func (l *lp) solveEmpty() outcome {
	for i := 0; i < l.nrows; i++ {
		if l.rowLow[i] > 0 || l.rowUpp[i] < 0 {
			return outcome{bound: math.Inf(1), status: Infeasible, clpStatus: -1, clpObjective: math.NaN(), lagrangian: math.NaN()}
		}
	}
	return outcome{bound: 0, x: []float64{}, status: Optimal, clpStatus: -1, clpObjective: 0, lagrangian: 0}
}
