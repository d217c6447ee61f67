package solver

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/optsched/optsched/encode/scas"
)

// Config carries the settings a Factory may use.
type Config struct {
	// Formulation selects the M_SCAS program for solvers that build it.
	Formulation scas.Formulation
	// Progress, when set, receives incumbents and bounds as they improve
	// (optsched solve -v).
	Progress io.Writer
	// Seed seeds randomised solvers.
	Seed uint64
	// SA holds simulated-annealing parameters; zero fields take the
	// defaults of [Lan23] Table I.
	SA SAParams
}

// SAParams are the parameters of simulated annealing (heuristics.Anneal).
type SAParams struct {
	Tmax, Tmin        float64
	Steps, Destroy, Q int
	PaperCompat       bool
}

// A Factory makes a ready-to-use solver.
type Factory func(Config) (Solver, error)

// A Registry maps solver names to factories. It is filled explicitly by
// the program that uses it (no init-time registration).
type Registry struct {
	entries map[string]entry
}

type entry struct {
	help     string
	encoding string
	factory  Factory
}

// Register adds a solver under name, with a one-line description and the
// encoding it solves. It panics if name is empty or already registered (a
// programmer error).
func (r *Registry) Register(name, encoding, help string, f Factory) {
	if name == "" || f == nil {
		panic("solver: Register with empty name or nil factory")
	}
	if r.entries == nil {
		r.entries = map[string]entry{}
	}
	if _, dup := r.entries[name]; dup {
		panic("solver: " + name + " registered twice")
	}
	r.entries[name] = entry{help: help, encoding: encoding, factory: f}
}

// New makes the solver registered under name.
func (r *Registry) New(name string, cfg Config) (Solver, error) {
	e, ok := r.entries[name]
	if !ok {
		return nil, fmt.Errorf("unknown solver %q (known: %s)", name, strings.Join(r.Names(), ", "))
	}
	return e.factory(cfg)
}

// Encoding returns the encoding the solver registered under name solves.
func (r *Registry) Encoding(name string) string { return r.entries[name].encoding }

// Names returns the registered names in sorted order.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.entries))
	for n := range r.entries {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Help returns the description registered with name.
func (r *Registry) Help(name string) string { return r.entries[name].help }
