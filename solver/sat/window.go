package sat

import (
	"context"
	"errors"
	"math"

	"github.com/optsched/optsched/encode/cnf"
	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// ErrNothingToExport is ExportWindow's error when no waiting job of the
// window can start.
var ErrNothingToExport = errors.New("no waiting job can start: nothing to export")

// ErrInexactBound is ExportWindow's error when an objective bound is
// given but the window's queue expected waits have no small common
// multiple, so the objective has no exact integer weights.
var ErrInexactBound = errors.New("an objective bound needs queue expected waits with a small common multiple")

// ExportOptions are the choices of ExportWindow.
type ExportOptions struct {
	// Granularity is the time grid of the starts, in seconds (at least 1).
	Granularity int64
	// Bound asks for a schedule whose objective (weighted queue time,
	// Eq. 2) is at most Bound; NaN asks for one better than the best
	// schedule of Baselines.
	Bound float64
	// Baselines are the schedulers whose best schedule the CNF must beat
	// when Bound is NaN (catalog.ListSchedulers in the command).
	Baselines []solver.Scheduler
}

// Export is a window's CNF as ExportWindow wrote it.
type Export struct {
	Model   *cp.Model
	Encoder *cnf.Encoder
	// Bound is the bound on W = Σ_i ω_i·s_i the CNF asks for.
	Bound int64
}

// Comments describes the export for the DIMACS header (see Comments).
func (e *Export) Comments() []string { return Comments(e.Model, e.Encoder, e.Bound) }

// ExportWindow builds the time-and-resource model of w on the grid of
// o.Granularity, works out the bound (from o.Bound, or one less than the
// W of the best baseline schedule) and writes the CNF of "a schedule with
// W ≤ bound" to s (EncodeBounded). Errors: ErrNothingToExport,
// ErrInexactBound, and those of the model, the baselines and the encoder.
func ExportWindow(ctx context.Context, w *model.Window, o ExportOptions, s cnf.Sink) (*Export, error) {
	m, err := cp.Build(w, o.Granularity)
	if err != nil {
		return nil, err
	}
	if len(m.Jobs) == 0 {
		return nil, ErrNothingToExport
	}
	var bound int64
	if math.IsNaN(o.Bound) {
		if bound, err = BaselineBound(ctx, m, o.Baselines); err != nil {
			return nil, err
		}
	} else if bound, err = ObjectiveBound(m, o.Bound); err != nil {
		return nil, err
	}
	enc, err := EncodeBounded(m, bound, s)
	if err != nil {
		return nil, err
	}
	return &Export{Model: m, Encoder: enc, Bound: bound}, nil
}

// BaselineBound returns one less than the least W = Σ_i ω_i·s_i (starts
// in grid slots from the window time) among the schedules the baselines
// give m's window: a CNF under it asks for a better schedule. With no
// baselines it is math.MaxInt64.
func BaselineBound(ctx context.Context, m *cp.Model, baselines []solver.Scheduler) (int64, error) {
	w, g := m.Window, m.Grid
	weight := make(map[int]int64, len(m.Jobs))
	for _, j := range m.Jobs {
		weight[j.Index] += j.Weight
	}
	bound := int64(math.MaxInt64)
	for _, h := range baselines {
		sch, err := h.Solve(ctx, &solver.ScheduleProblem{Window: w, Granularity: g})
		if err != nil {
			return 0, err
		}
		var W int64
		for _, a := range sch.Allocations {
			W += weight[a.Job] * ((a.Start - w.Time) / g)
		}
		bound = min(bound, W-1)
	}
	return bound, nil
}

// ObjectiveBound converts a bound b on the objective (weighted queue
// time) to one on W: objective ≤ b ⇔ W ≤ (b − C)·Scale/g, C the objective
// of W = 0. It needs exact weights (ErrInexactBound).
func ObjectiveBound(m *cp.Model, b float64) (int64, error) {
	if !m.ExactWeights {
		return 0, ErrInexactBound
	}
	c := m.ObjectiveOfWeighted(0)
	return int64(math.Floor((b - c) * float64(m.Scale) / float64(m.Grid) * (1 + 1e-12))), nil
}
