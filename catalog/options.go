package catalog

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/heuristics/nsa"
	"github.com/optsched/optsched/solver"
)

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
// (Solver, Raw) and time-and-resource (Scheduler). Validate says which
// apply to which name.
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

// initial returns the list schedules that seed and back up an exact
// scheduler of the time-and-resource model: ListSchedulers, unless the
// fallback is none.
func (o Options) initial() []solver.Scheduler {
	if o.Fallback == "none" {
		return nil
	}
	return ListSchedulers()
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

// An OptionError says that an option does not suit the name it is given
// with, or is not one of its values; Option is the name of the Options or
// Spec field (Fallback, CHWeight, Encoding).
type OptionError struct {
	Option string
	Reason string
}

func (e *OptionError) Error() string { return e.Option + " " + e.Reason }

// Unwrap makes an OptionError an ErrUnknown error.
func (e *OptionError) Unwrap() error { return ErrUnknown }

// A Spec is what a command asks the catalogue for: a name, the model or
// encoding the command solves, whether the name runs alone, and the
// options. Validate checks it, Solver and Scheduler build it.
type Spec struct {
	// Name is the solver or heuristic.
	Name string
	// Model, when not AnyModel, is the model the command solves: the
	// name must be of it.
	Model Model
	// Encoding, when set, is the formulation asked for (one of
	// Encodings): a whole-node name must solve it (cp: the
	// time-and-resource model).
	Encoding string
	// Alone builds an exact whole-node solver without its portfolio (a
	// name given as a heuristic: solve --heuristic).
	Alone bool
	Options
}

// model is the model s asks for: Model, or that of Encoding, or the
// name's own.
func (s Spec) model(e Entry) Model {
	switch {
	case s.Model != AnyModel:
		return s.Model
	case s.Encoding != "":
		return ModelOf(s.Encoding)
	}
	return e.Model()
}

// Validate checks a Spec, for both models in one place, before anything
// is built or read: the name is known (*NameError); the encoding asked
// for is one of Encodings (*OptionError, Encoding); the name solves the
// model and encoding asked for (*NameError); the fallback is one of its
// model's (FallbacksOf; *OptionError, Fallback); a CH weight is a finite
// number at least 0, and only for sat (*OptionError, CHWeight). Every
// error wraps ErrUnknown. Solver, Raw and Scheduler validate before they
// build.
func Validate(s Spec) error {
	e, ok := Lookup(s.Name)
	if !ok {
		return &NameError{Name: s.Name, Want: s.Model}
	}
	if s.Encoding != "" && !slices.Contains(Encodings(), s.Encoding) {
		return &OptionError{"Encoding", fmt.Sprintf("must be csp, scas or dcas (or cp, the time-and-resource model), got %q", s.Encoding)}
	}
	want := s.model(e)
	if want != e.Model() || want == WholeNode && s.Encoding != "" && s.Encoding != e.Encoding {
		return &NameError{Name: s.Name, Entry: e, Want: want, WantEncoding: s.Encoding}
	}
	fbs := FallbacksOf(e.Encoding)
	if s.Fallback != "" && !slices.Contains(fbs, s.Fallback) {
		return &OptionError{"Fallback", fmt.Sprintf("must be one of %s for %s, got %q", strings.Join(fbs, ", "), e.Model(), s.Fallback)}
	}
	switch {
	case math.IsNaN(s.CHWeight) || math.IsInf(s.CHWeight, 0) || s.CHWeight < 0:
		return &OptionError{"CHWeight", fmt.Sprintf("must be a finite number at least 0, got %v", s.CHWeight)}
	case s.CHWeight != 0 && e.Encoding != CP:
		return &OptionError{"CHWeight", "applies to the time-and-resource model (the cp encoding)"}
	case s.CHWeight != 0 && s.Name != "sat":
		return &OptionError{"CHWeight", "applies to the sat solver, not " + s.Name}
	}
	return nil
}
