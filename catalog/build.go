package catalog

import (
	"context"
	"fmt"

	"github.com/optsched/optsched/solver"
)

// Solver builds the whole-node solver s names, after Validate: an exact
// one in a solver.Portfolio with s.Fallback beside it (unless s.Alone), a
// heuristic alone. A name of the time-and-resource model is a *NameError.
func (s Spec) Solver() (solver.Solver, error) {
	if s.Model == AnyModel && s.Encoding == "" {
		s.Model = WholeNode
	}
	if err := Validate(s); err != nil {
		return nil, err
	}
	e, _ := Lookup(s.Name)
	if e.solver == nil {
		return nil, &NameError{Name: s.Name, Entry: e, Want: WholeNode}
	}
	sv, err := e.solver(s.Options)
	if err != nil || !e.Exact || s.Alone {
		return sv, err
	}
	return WithFallback(sv, s.Options)
}

// Scheduler builds the scheduler of the time-and-resource model s names,
// after Validate: sat or bnb seeded and backed up by ListSchedulers
// (unless the fallback is none), or a list schedule alone, which answers
// the jobs it placed when its time runs out (truncated, the rest deferred
// for the limit). Of the options it reads Progress, Fallback, CHWeight
// and Grid. A whole-node name is a *NameError.
func (s Spec) Scheduler() (solver.Scheduler, error) {
	if s.Model == AnyModel && s.Encoding == "" {
		s.Model = TimeResource
	}
	if err := Validate(s); err != nil {
		return nil, err
	}
	e, _ := Lookup(s.Name)
	if e.scheduler == nil {
		return nil, &NameError{Name: s.Name, Entry: e, Want: TimeResource}
	}
	return e.scheduler(s.Options)
}

// Solver returns the whole-node solver called name ready for a time
// limit: Spec{Name: name, Options: o}.Solver().
func Solver(name string, o Options) (solver.Solver, error) {
	return Spec{Name: name, Model: WholeNode, Options: o}.Solver()
}

// Raw returns the whole-node back end called name alone, not wrapped in
// a portfolio. A name of the time-and-resource model gives a solver that
// refuses whole-node windows with an error saying so.
func Raw(name string, o Options) (solver.Solver, error) {
	if e, ok := Lookup(name); ok && e.Model() == TimeResource {
		return notWholeNode{name}, nil
	}
	return Spec{Name: name, Model: WholeNode, Alone: true, Options: o}.Solver()
}

// Scheduler returns the scheduler of the time-and-resource model called
// name: Spec{Name: name, Options: o}.Scheduler().
func Scheduler(name string, o Options) (solver.Scheduler, error) {
	return Spec{Name: name, Options: o}.Scheduler()
}

// WithFallback wraps the exact solver s in a portfolio with o.Fallback.
func WithFallback(s solver.Solver, o Options) (solver.Solver, error) {
	switch o.Fallback {
	case "none":
		return solver.Portfolio{Exact: s}, nil
	case "", "sa":
		return solver.Portfolio{Exact: s, Fallback: Anneal(o)}, nil
	case "nsa":
		fb, err := NSA(o)
		if err != nil {
			return nil, err
		}
		return solver.Portfolio{Exact: s, Fallback: fb}, nil
	}
	return nil, Validate(Spec{Name: "csp", Options: Options{Fallback: o.Fallback}})
}

// notWholeNode is the whole-node face of a scheduler of the cp encoding:
// it refuses whole-node problems, which the cp encoding does not read.
type notWholeNode struct{ name string }

func (n notWholeNode) Name() string { return n.name }

func (n notWholeNode) Solve(_ context.Context, _ *solver.Problem) (*solver.Result, error) {
	return nil, fmt.Errorf("%s schedules the time-and-resource model (optsched solve --encoding cp), not whole-node windows", n.name)
}
