package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/heuristics/nsa"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/brute"
	"github.com/optsched/optsched/solver/clp"
	"github.com/optsched/optsched/solver/cpbnb"
	"github.com/optsched/optsched/solver/csp"
	"github.com/optsched/optsched/solver/free"
	"github.com/optsched/optsched/solver/lpsolve"
	"github.com/optsched/optsched/solver/sat"
)

// Encodings of the catalogue's entries.
const (
	// CSP, SCAS and Tree solve the whole-node window (model.Window without
	// units): the CSP graph, the M_SCAS 0-1 program or the switch tree.
	CSP  = "csp"
	SCAS = "scas"
	Tree = "tree"
	// DCAS is the dynamic strategy: any idle nodes, as SA and NSA search
	// and the free solver solves exactly.
	DCAS = "dcas"
	// CP is the time-and-resource model (solve --encoding cp).
	CP = "cp"
)

// An Entry describes one name of the catalogue.
type Entry struct {
	Name string
	// Encoding is the formulation the entry solves (the constants above).
	Encoding string
	// Exact reports a solver that proves optimality (or a bound): it runs
	// in a portfolio with a fallback (Solver, Scheduler).
	Exact bool
	// Help is a one-line description.
	Help string
}

var entries = []Entry{
	{"csp", CSP, true, "exact: the constrained-shortest-path graph (DP; Lagrangian bound for large windows); pure Go"},
	{"lpsolve", SCAS, true, "exact: the M_SCAS 0-1 program on lp_solve (cgo)"},
	{"clp", SCAS, true, "bound: the LP relaxation of the M_SCAS program on COIN-OR CLP, with a rounded allocation (cgo)"},
	{"free", DCAS, true, "exact: the free problem — any idle nodes, not only runs of the idle sequence — over per-switch counts; starts from the SCAS optimum, proves the least cost any allocator can reach (--encoding dcas)"},
	{"brute", SCAS, true, "exact: enumerates every placement (tiny windows only; the tests' yardstick)"},
	{"sa", DCAS, false, "heuristic: simulated annealing on DCAS (Lan et al. Algorithm 1, Table I defaults; --sa-* flags)"},
	{"nsa", DCAS, false, "heuristic: neural simulated annealing — SA with a PPO-trained repair policy (Lan et al. §V; shipped weights, --nsa-weights, --nsa-sample)"},
	{"seq", SCAS, false, `heuristic: the "Seq." allocation of Lan et al., jobs in order along the idle sequence`},
	{"slurm", Tree, false, "heuristic: Slurm's topology/tree best fit — the lowest switch that holds the job, then best-fit leaves"},
	{"mishra-greedy", Tree, false, "heuristic: Mishra et al.'s greedy allocation — whole leaves by communication ratio"},
	{"mishra-balanced", Tree, false, "heuristic: Mishra et al.'s balanced allocation — power-of-two shares of leaves by communication ratio"},
	{"mishra-adaptive", Tree, false, "heuristic: Mishra et al.'s adaptive allocation — per job, the cheaper of greedy and balanced under their pattern cost"},
	{"sat", CP, true, "exact: Bridi et al.'s CP model (alternative, cumulative, noOverlap) on gini, bound tightening from the PBS list schedules (--encoding cp)"},
	{"bnb", CP, true, "exact: a branch and bound over start-ordered schedules of the same CP model, sharing no code with sat; slower, for cross-checks (--encoding cp)"},
	{"pbs-fifo", CP, false, "heuristic: PBSFifo list schedule — submission order, backfilling limited to 10 (--encoding cp)"},
	{"pbs-walltime", CP, false, "heuristic: PBSWalltime list schedule — increasing walltime, backfilling limited to 400 (--encoding cp)"},
}

// ErrUnknown is wrapped by the errors about a name the catalogue does not
// know, or one of the wrong model (a CP scheduler asked for a whole-node
// window, or the reverse).
var ErrUnknown = errors.New("not in the catalogue")

// Entries returns every entry, sorted by name.
func Entries() []Entry {
	out := slices.Clone(entries)
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Names returns every name, sorted.
func Names() []string {
	var out []string
	for _, e := range Entries() {
		out = append(out, e.Name)
	}
	return out
}

// WholeNode returns the names that solve the whole-node window, sorted.
func WholeNode() []string {
	var out []string
	for _, e := range Entries() {
		if e.Encoding != CP {
			out = append(out, e.Name)
		}
	}
	return out
}

// Lookup returns the entry called name.
func Lookup(name string) (Entry, bool) {
	for _, e := range entries {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

func unknown(name string) error {
	return fmt.Errorf("unknown solver %q (known: %s): %w", name, strings.Join(Names(), ", "), ErrUnknown)
}

// SAParams are the parameters of simulated annealing (heuristics.Anneal);
// a zero field takes the value of [Lan23] Table I
// (heuristics.DefaultAnneal).
type SAParams struct {
	Tmax, Tmin        float64
	Steps, Destroy, Q int
	// PaperCompat keeps rejected moves as the published code does.
	PaperCompat bool
}

// Options are the settings of a solver of either model: whole-node
// (Solver, Raw) and time-and-resource (Scheduler). Check says which apply
// to which name.
type Options struct {
	// Formulation selects the M_SCAS program for lpsolve and clp.
	Formulation scas.Formulation
	// Progress, when set, receives incumbents and bounds as they improve.
	Progress io.Writer
	// Seed seeds SA and NSA.
	Seed uint64
	// SA holds SA's parameters, also NSA's and the fallback's.
	SA SAParams
	// NSAPolicy is NSA's repair policy; nil for the shipped weights.
	NSAPolicy *nsa.Policy
	// NSASample samples NSA's repair starts instead of taking the most
	// likely one.
	NSASample bool
	// Fallback is what runs beside an exact solver: of the whole-node
	// model, in its portfolio, "sa" (also for "") or "nsa"; of the
	// time-and-resource model, "pbs" (also for ""): the PBS list
	// schedules give the first incumbent and the answer when the solver
	// finds none; "none" in either runs the exact solver alone.
	Fallback string
	// CHWeight, time-and-resource model (sat only), adds the CH cost of
	// the jobs' node sets to the objective at this weight.
	CHWeight float64
	// Grid, time-and-resource model, keeps sat on the full time grid (no
	// compressed domain).
	Grid bool
}

// Fallbacks are the values of Options.Fallback for the whole-node model
// (beside "", its default, sa).
var Fallbacks = []string{"sa", "nsa", "none"}

// CPFallbacks are the values of Options.Fallback for the
// time-and-resource model (beside "", its default, pbs).
var CPFallbacks = []string{"pbs", "none"}

// FallbacksOf returns the fallbacks of the model of encoding enc (CP or
// any whole-node encoding).
func FallbacksOf(enc string) []string {
	if enc == CP {
		return CPFallbacks
	}
	return Fallbacks
}

// CheckFallback checks a fallback for the model of encoding enc: one of
// FallbacksOf(enc), or "" for its default; its error is an *OptionError.
func CheckFallback(enc, fallback string) error {
	fbs := FallbacksOf(enc)
	if fallback == "" || slices.Contains(fbs, fallback) {
		return nil
	}
	model := "the whole-node model"
	if enc == CP {
		model = "the time-and-resource model"
	}
	return &OptionError{"Fallback", fmt.Sprintf("must be one of %s for %s, got %q", strings.Join(fbs, ", "), model, fallback)}
}

// An OptionError says that an option does not suit the name it is given
// with; Option is the name of the Options field (CHWeight, Fallback).
type OptionError struct {
	Option string
	Reason string
}

func (e *OptionError) Error() string { return e.Option + " " + e.Reason }

// Unwrap makes an OptionError an ErrUnknown error.
func (e *OptionError) Unwrap() error { return ErrUnknown }

// Check checks o against the solver called name, for both models in one
// place: the name is known; the fallback is one of its model's
// (FallbacksOf); a CH weight is a finite number at least 0, and only for
// sat. Its errors about an option are *OptionError values. Solver, Raw
// and Scheduler check with it before they build anything.
func Check(name string, o Options) error {
	e, ok := Lookup(name)
	if !ok {
		return unknown(name)
	}
	if err := CheckFallback(e.Encoding, o.Fallback); err != nil {
		return err
	}
	switch {
	case math.IsNaN(o.CHWeight) || math.IsInf(o.CHWeight, 0) || o.CHWeight < 0:
		return &OptionError{"CHWeight", fmt.Sprintf("must be a finite number at least 0, got %v", o.CHWeight)}
	case o.CHWeight != 0 && e.Encoding != CP:
		return &OptionError{"CHWeight", "applies to the time-and-resource model (the cp encoding)"}
	case o.CHWeight != 0 && name != "sat":
		return &OptionError{"CHWeight", "applies to the sat solver, not " + name}
	}
	return nil
}

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

// Raw returns the back end called name alone, not wrapped in a
// portfolio. A name of the time-and-resource model gives a solver that
// refuses whole-node windows with an error saying so.
func Raw(name string, o Options) (solver.Solver, error) {
	e, ok := Lookup(name)
	switch {
	case !ok:
		return nil, unknown(name)
	case e.Encoding == CP:
		return notWholeNode{name}, nil
	}
	if err := Check(name, o); err != nil {
		return nil, err
	}
	switch name {
	case "csp":
		return csp.Solver{Progress: o.Progress}, nil
	case "lpsolve":
		if !lpsolve.Available {
			return nil, lpsolve.ErrUnavailable
		}
		return lpsolve.Solver{Formulation: o.Formulation, Verbose: o.Progress}, nil
	case "clp":
		if !clp.Available {
			return nil, clp.ErrUnavailable
		}
		return clp.Solver{Formulation: o.Formulation}, nil
	case "brute":
		return brute.Solver{}, nil
	case "free":
		return free.Solver{Progress: o.Progress}, nil
	case "sa":
		return Anneal(o), nil
	case "nsa":
		return NSA(o)
	case "seq":
		return heuristics.Seq{}, nil
	case "slurm":
		return heuristics.Slurm{}, nil
	case "mishra-greedy":
		return heuristics.MishraGreedy{}, nil
	case "mishra-balanced":
		return heuristics.MishraBalanced{}, nil
	case "mishra-adaptive":
		return heuristics.MishraAdaptive{}, nil
	}
	panic("catalog: no constructor for " + name) // an entry without a case: a programmer error
}

// Solver returns the whole-node solver called name ready for a time
// limit: an exact one in a solver.Portfolio with o.Fallback beside it, a
// heuristic alone.
func Solver(name string, o Options) (solver.Solver, error) {
	e, ok := Lookup(name)
	switch {
	case !ok:
		return nil, unknown(name)
	case e.Encoding == CP:
		return nil, fmt.Errorf("%s schedules the time-and-resource model (--encoding cp), not whole-node windows: %w", name, ErrUnknown)
	}
	s, err := Raw(name, o)
	if err != nil || !e.Exact {
		return s, err
	}
	return WithFallback(s, o)
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
	return nil, CheckFallback(SCAS, o.Fallback)
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

// Scheduler returns the scheduler of the time-and-resource model called
// name: sat or bnb seeded and backed up by ListSchedulers (unless
// o.Fallback is none), or a list schedule alone, which answers the jobs it
// placed when its time runs out (truncated, the rest deferred for the
// limit). Of o it reads Progress, Fallback, CHWeight and Grid.
func Scheduler(name string, o Options) (solver.Scheduler, error) {
	if e, ok := Lookup(name); ok && e.Encoding != CP {
		return nil, fmt.Errorf("%q does not schedule the cp encoding (use sat, bnb, pbs-fifo or pbs-walltime): %w", name, ErrUnknown)
	}
	if err := Check(name, o); err != nil {
		return nil, err
	}
	var initial []solver.Scheduler
	if o.Fallback != "none" {
		initial = ListSchedulers()
	}
	switch name {
	case "sat":
		return sat.Solver{Progress: o.Progress, CHWeight: o.CHWeight, Initial: initial, Grid: o.Grid}, nil
	case "bnb":
		return cpbnb.Solver{Progress: o.Progress, Initial: initial}, nil
	case "pbs-fifo":
		return heuristics.PBSFifo().Truncated(), nil
	case "pbs-walltime":
		return heuristics.PBSWalltime().Truncated(), nil
	}
	panic("catalog: no constructor for " + name) // a cp entry without a case: a programmer error
}

// notWholeNode is the whole-node face of a scheduler of the cp encoding:
// it refuses whole-node problems, which the cp encoding does not read.
type notWholeNode struct{ name string }

func (n notWholeNode) Name() string { return n.name }

func (n notWholeNode) Solve(_ context.Context, _ *solver.Problem) (*solver.Result, error) {
	return nil, fmt.Errorf("%s schedules the time-and-resource model (optsched solve --encoding cp), not whole-node windows", n.name)
}
