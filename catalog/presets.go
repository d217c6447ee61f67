package catalog

import (
	"fmt"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/heuristics/nsa"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/csp"
	"github.com/optsched/optsched/solver/sat"
)

// The presets the tools share, in one place: SA with Table I, NSA, the
// default window solver, the list schedules, and what the PBS and Slurm
// schedulers run beside their window solver.

// Anneal returns SA with o's parameters, Table I's for zero fields.
func Anneal(o Options) heuristics.Anneal {
	a := heuristics.DefaultAnneal()
	a.Seed = o.Seed
	if o.SA.Tmax > 0 {
		a.Tmax = o.SA.Tmax
	}
	if o.SA.Tmin > 0 {
		a.Tmin = o.SA.Tmin
	}
	if o.SA.Steps > 0 {
		a.Steps = o.SA.Steps
	}
	if o.SA.Destroy > 0 {
		a.Destroy = o.SA.Destroy
	}
	if o.SA.Q > 0 {
		a.Q = o.SA.Q
	}
	a.PaperCompat = o.SA.PaperCompat
	return a
}

// NSA returns NSA: SA with o's parameters whose repair is o.NSAPolicy, or
// the shipped policy (an error when the shipped weights cannot be read).
func NSA(o Options) (nsa.NSA, error) {
	n := nsa.Default()
	n.Anneal = Anneal(o)
	n.Sample = o.NSASample
	if o.NSAPolicy != nil {
		n.Policy = o.NSAPolicy
		return n, nil
	}
	if _, err := nsa.Shipped(); err != nil {
		return n, fmt.Errorf("the shipped NSA weights: %w", err)
	}
	return n, nil
}

// DefaultWindow returns the default whole-node window solver: csp with SA
// (Table I, seed 1) in the reserve.
func DefaultWindow() solver.Solver {
	return solver.Portfolio{Exact: csp.Solver{}, Fallback: Anneal(Options{Seed: 1})}
}

// ListSchedulers returns the list schedules that seed the exact CP
// schedulers' first incumbent and answer when they cannot: PBSWalltime,
// then PBSFifo (Bridi et al.'s two PBS baselines).
func ListSchedulers() []solver.Scheduler {
	return []solver.Scheduler{heuristics.PBSWalltime(), heuristics.PBSFifo()}
}

// WindowFallbacks are the heuristics a PBS cycle falls back to when its
// window solver fails or finds nothing: Slurm's topology-aware best fit,
// then Lan et al.'s Seq.
func WindowFallbacks() []solver.Solver {
	return []solver.Solver{heuristics.Slurm{}, heuristics.Seq{}}
}

// PartialSchedulers are the schedulers of a PBS cycle's partial-node jobs
// (pbs --partial cp), the first that answers wins: sat seeded by the PBS
// list schedules, then the PBS FIFO list schedule alone, which at the
// deadline keeps the jobs it scheduled (the same starts as its whole
// schedule) and defers the rest.
func PartialSchedulers() []solver.Scheduler {
	return []solver.Scheduler{sat.Solver{Initial: ListSchedulers()}, heuristics.PBSFifo().Truncated()}
}
