package solver

import (
	"fmt"
	"slices"
	"strings"
)

// A Factory makes a ready-to-use solver.
type Factory func() (Solver, error)

// A Registry maps solver names to factories. It is filled explicitly by
// the program that uses it (no init-time registration).
type Registry struct {
	entries map[string]entry
}

type entry struct {
	help    string
	factory Factory
}

// Register adds a solver under name with a one-line description. It
// panics if name is empty or already registered (a programmer error).
func (r *Registry) Register(name, help string, f Factory) {
	if name == "" || f == nil {
		panic("solver: Register with empty name or nil factory")
	}
	if r.entries == nil {
		r.entries = map[string]entry{}
	}
	if _, dup := r.entries[name]; dup {
		panic("solver: " + name + " registered twice")
	}
	r.entries[name] = entry{help: help, factory: f}
}

// New makes the solver registered under name.
func (r *Registry) New(name string) (Solver, error) {
	e, ok := r.entries[name]
	if !ok {
		return nil, fmt.Errorf("unknown solver %q (known: %s)", name, strings.Join(r.Names(), ", "))
	}
	return e.factory()
}

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
