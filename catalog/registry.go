package catalog

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/optsched/optsched/heuristics"
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

// Encodings are the formulations a command may ask for (solve
// --encoding): the whole-node model's csp, scas and dcas, then cp, the
// time-and-resource model. Tree is an entry's encoding, not one to ask
// for (its heuristics solve any whole-node window as asked).
func Encodings() []string { return []string{CSP, SCAS, DCAS, CP} }

// A Model is one of the two questions optsched answers.
type Model int

const (
	// AnyModel, in a Spec, is the model of the name's own encoding.
	AnyModel Model = iota
	// WholeNode is the topology window: which whole-node jobs start now
	// and on which idle nodes (solver.Solver).
	WholeNode
	// TimeResource is Bridi et al.'s time-and-resource model: when and
	// where every job starts, on units of node resources
	// (solver.Scheduler; the cp encoding).
	TimeResource
)

func (m Model) String() string {
	switch m {
	case WholeNode:
		return "the whole-node model"
	case TimeResource:
		return "the time-and-resource model"
	}
	return "any model"
}

// ModelOf returns the model of encoding enc.
func ModelOf(enc string) Model {
	if enc == CP {
		return TimeResource
	}
	return WholeNode
}

// An Entry is one name of the catalogue: what it solves and how it is
// built. An entry has exactly one constructor, of its model: a whole-node
// solver, or a scheduler of the time-and-resource model.
type Entry struct {
	Name string
	// Encoding is the formulation the entry solves (the constants above).
	Encoding string
	// Exact reports a solver that proves optimality (or a bound): it runs
	// in a portfolio with a fallback (Solver, Scheduler).
	Exact bool
	// Help is a one-line description.
	Help string

	solver    func(Options) (solver.Solver, error)
	scheduler func(Options) (solver.Scheduler, error)
}

// Model returns the entry's model.
func (e Entry) Model() Model { return ModelOf(e.Encoding) }

// wholeNode and timeResource make the entries of each model, so that an
// entry's constructor is always of its model.
func wholeNode(name, enc string, exact bool, help string, build func(Options) (solver.Solver, error)) Entry {
	return Entry{Name: name, Encoding: enc, Exact: exact, Help: help, solver: build}
}

func timeResource(name string, exact bool, help string, build func(Options) (solver.Scheduler, error)) Entry {
	return Entry{Name: name, Encoding: CP, Exact: exact, Help: help, scheduler: build}
}

// built adapts a constructor that cannot fail.
func built[T any](v T) func(Options) (T, error) { return func(Options) (T, error) { return v, nil } }

// registry is the catalogue: every name with its constructor. The time-
// and-resource entries come last, in the order errors list them.
var registry = []Entry{
	wholeNode("csp", CSP, true, "exact: the constrained-shortest-path graph (DP; Lagrangian bound for large windows); pure Go",
		func(o Options) (solver.Solver, error) { return csp.Solver{Progress: o.Progress}, nil }),
	wholeNode("lpsolve", SCAS, true, "exact: the M_SCAS 0-1 program on lp_solve (cgo)",
		func(o Options) (solver.Solver, error) {
			if !lpsolve.Available {
				return nil, lpsolve.ErrUnavailable
			}
			return lpsolve.Solver{Formulation: o.Formulation, Verbose: o.Progress}, nil
		}),
	wholeNode("clp", SCAS, true, "bound: the LP relaxation of the M_SCAS program on COIN-OR CLP, with a rounded allocation (cgo)",
		func(o Options) (solver.Solver, error) {
			if !clp.Available {
				return nil, clp.ErrUnavailable
			}
			return clp.Solver{Formulation: o.Formulation}, nil
		}),
	wholeNode("free", DCAS, true, "exact: the free problem — any idle nodes, not only runs of the idle sequence — over per-switch counts; starts from the SCAS optimum, proves the least cost any allocator can reach (--encoding dcas)",
		func(o Options) (solver.Solver, error) { return free.Solver{Progress: o.Progress}, nil }),
	wholeNode("brute", SCAS, true, "exact: enumerates every placement (tiny windows only; the tests' yardstick)", built[solver.Solver](brute.Solver{})),
	wholeNode("sa", DCAS, false, "heuristic: simulated annealing on DCAS (Lan et al. Algorithm 1, Table I defaults; --sa-* flags)",
		func(o Options) (solver.Solver, error) { return Anneal(o), nil }),
	wholeNode("nsa", DCAS, false, "heuristic: neural simulated annealing — SA with a PPO-trained repair policy (Lan et al. §V; shipped weights, --nsa-weights, --nsa-sample)",
		func(o Options) (solver.Solver, error) { return NSA(o) }),
	wholeNode("seq", SCAS, false, `heuristic: the "Seq." allocation of Lan et al., jobs in order along the idle sequence`, built[solver.Solver](heuristics.Seq{})),
	wholeNode("slurm", Tree, false, "heuristic: Slurm's topology/tree best fit — the lowest switch that holds the job, then best-fit leaves", built[solver.Solver](heuristics.Slurm{})),
	wholeNode("mishra-greedy", Tree, false, "heuristic: Mishra et al.'s greedy allocation — whole leaves by communication ratio", built[solver.Solver](heuristics.MishraGreedy{})),
	wholeNode("mishra-balanced", Tree, false, "heuristic: Mishra et al.'s balanced allocation — power-of-two shares of leaves by communication ratio", built[solver.Solver](heuristics.MishraBalanced{})),
	wholeNode("mishra-adaptive", Tree, false, "heuristic: Mishra et al.'s adaptive allocation — per job, the cheaper of greedy and balanced under their pattern cost", built[solver.Solver](heuristics.MishraAdaptive{})),
	timeResource("sat", true, "exact: Bridi et al.'s CP model (alternative, cumulative, noOverlap) on gini, bound tightening from the PBS list schedules (--encoding cp)",
		func(o Options) (solver.Scheduler, error) {
			return sat.Solver{Progress: o.Progress, CHWeight: o.CHWeight, Initial: o.initial(), Grid: o.Grid}, nil
		}),
	timeResource("bnb", true, "exact: a branch and bound over start-ordered schedules of the same CP model, sharing no code with sat; slower, for cross-checks (--encoding cp)",
		func(o Options) (solver.Scheduler, error) {
			return cpbnb.Solver{Progress: o.Progress, Initial: o.initial()}, nil
		}),
	timeResource("pbs-fifo", false, "heuristic: PBSFifo list schedule — submission order, backfilling limited to 10 (--encoding cp)",
		built[solver.Scheduler](heuristics.PBSFifo().Truncated())),
	timeResource("pbs-walltime", false, "heuristic: PBSWalltime list schedule — increasing walltime, backfilling limited to 400 (--encoding cp)",
		built[solver.Scheduler](heuristics.PBSWalltime().Truncated())),
}

// ErrUnknown is wrapped by the errors about a name the catalogue does not
// know, one of the wrong model (a CP scheduler asked for a whole-node
// window, or the reverse), or an option that does not suit the name.
var ErrUnknown = errors.New("not in the catalogue")

// Entries returns every entry, sorted by name.
func Entries() []Entry {
	out := slices.Clone(registry)
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Names returns every name, sorted.
func Names() []string { return namesOf(AnyModel) }

// WholeNodeNames returns the names that solve the whole-node window,
// sorted.
func WholeNodeNames() []string { return namesOf(WholeNode) }

// namesOf returns the names of model m (every name for AnyModel), sorted.
func namesOf(m Model) []string {
	var out []string
	for _, e := range Entries() {
		if m == AnyModel || e.Model() == m {
			out = append(out, e.Name)
		}
	}
	return out
}

// Lookup returns the entry called name.
func Lookup(name string) (Entry, bool) {
	for _, e := range registry {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// A NameError says that the catalogue does not know a name, or that the
// name does not solve the model or the encoding asked for. Its message is
// the catalogue's; a command may word it in its own flags (Known, Entry,
// Want, WantEncoding).
type NameError struct {
	Name string
	// Entry is the name's entry, when the catalogue knows the name.
	Entry Entry
	// Want is the model asked for, and WantEncoding the encoding when
	// one was (csp, scas or dcas: the entry solves another).
	Want         Model
	WantEncoding string
}

// Known reports whether the catalogue knows the name (the error is then
// about its model or encoding).
func (e *NameError) Known() bool { return e.Entry.Name != "" }

func (e *NameError) Error() string {
	switch {
	case !e.Known():
		return fmt.Sprintf("unknown solver %q (known: %s): %v", e.Name, strings.Join(Names(), ", "), ErrUnknown)
	case e.WantEncoding != "" && e.Want == WholeNode:
		return fmt.Sprintf("%s solves the %s encoding: %v", e.Name, e.Entry.Encoding, ErrUnknown)
	case e.Want == TimeResource:
		var cp []string
		for _, en := range registry {
			if en.Model() == TimeResource {
				cp = append(cp, en.Name)
			}
		}
		list := strings.Join(cp[:len(cp)-1], ", ") + " or " + cp[len(cp)-1]
		return fmt.Sprintf("%q does not schedule the cp encoding (use %s): %v", e.Name, list, ErrUnknown)
	}
	return fmt.Sprintf("%s schedules the time-and-resource model (--encoding cp), not whole-node windows: %v", e.Name, ErrUnknown)
}

// Unwrap makes a NameError an ErrUnknown error.
func (e *NameError) Unwrap() error { return ErrUnknown }
