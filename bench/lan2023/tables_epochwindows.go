package lan2023

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/csp"
)

// A TableWindow is one window of the Tables III–IV protocol with at least
// one multi-node job: the problem of placing its selected multi-node jobs.
type TableWindow struct {
	// Epoch and Period locate the window; StartJob is the index into the
	// trace of its epoch's first job, EndJob one past the last trace job
	// that had arrived by the end of the epoch.
	Epoch, Period, StartJob, EndJob int
	// Problem is the window with its selected multi-node jobs.
	Problem *solver.Problem
}

// TableWindows runs the protocol of RunTables with no method but the
// unlimited exact solver (whose allocations the cluster follows, as in
// RunTables) and returns the windows the methods would solve, in order.
// With the same configuration (Epochs, Periods, Tau, MaxJobs, Seed,
// Topology, Cost) the epochs start at the same trace jobs as RunTables',
// so the windows are the tables' windows; another Seed gives other epochs
// (training windows for heuristics/nsa, for instance).
func TableWindows(ctx context.Context, tr *trace.Trace, cfg TableConfig) ([]TableWindow, error) {
	if tr == nil || len(tr.Jobs) == 0 {
		return nil, fmt.Errorf("%w: no trace or no jobs", ErrTableConfig)
	}
	if err := cfg.tblCheck(); err != nil {
		return nil, err
	}
	span := cfg.Tau * int64(cfg.Periods)
	last := tr.Jobs[len(tr.Jobs)-1].Submit
	nStarts := 0
	for nStarts < len(tr.Jobs) && last-tr.Jobs[nStarts].Submit >= span {
		nStarts++
	}
	if nStarts == 0 {
		return nil, fmt.Errorf("%w: the trace is shorter than one epoch", ErrTableConfig)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, tblStream))
	var out []TableWindow
	for e := range cfg.Epochs {
		start := rng.IntN(nStarts)
		s := tblCluster(tr, &cfg, start)
		from := len(out)
		for k := 1; k <= cfg.Periods; k++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			t := int64(k) * cfg.Tau
			s.Release(t)
			s.Arrive(t)
			if s.Waiting() == 0 {
				continue
			}
			w := s.Window(t)
			sel := model.SelectJobs(w, cfg.MaxJobs)
			res, err := solver.SolveWindow(ctx, w, csp.Solver{}, solver.Options{MaxJobs: cfg.MaxJobs})
			if err != nil {
				return nil, fmt.Errorf("epoch %d, period %d: %w", e, k, err)
			}
			if len(sel.Multi) > 0 {
				out = append(out, TableWindow{Epoch: e, Period: k, StartJob: start, Problem: solver.NewProblem(w, sel.Multi)})
			}
			s.Start(res.Allocations, t)
		}
		for i := from; i < len(out); i++ {
			out[i].EndJob = start + s.Arrived()
		}
	}
	return out, nil
}
