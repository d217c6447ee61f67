package limits

import (
	"fmt"
	"slices"
	"strings"

	"github.com/optsched/optsched/bench/gaps"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
)

// Family says which model a window class is solved in, and so which
// solvers run on it.
type Family string

const (
	// WholeNode is the whole-node allocation model of `optsched solve`
	// (no --encoding flag): which jobs start now and on which nodes.
	WholeNode Family = "whole-node"
	// CP is the time-and-resource model, `optsched solve --encoding cp`.
	CP Family = "cp"
)

// A Class is a kind of window the sweep generates and solves.
type Class struct {
	// Name is the class's name in --classes and in the tables.
	Name string
	// Family selects the solvers that run on the class.
	Family Family
	// Args are the flags every solve of the class gets (--max-jobs 5,
	// --encoding cp).
	Args []string
	// Bounded says that the 1 GiB memory promise applies: every window of
	// the class has at most 10,000 nodes and 200 jobs.
	Bounded bool
	// Describe says what the windows are, for the help text.
	Describe string
	// Make generates window k of the class for seed, deterministically.
	Make func(seed uint64, k int) (*model.Window, error)
}

// scasClass adapts a class of bench scas (whole-node windows, with its
// cap on the multi-node jobs).
func scasClass(c gaps.Class, describe string) Class {
	var args []string
	if c.MaxJobs > 0 {
		args = []string{"--max-jobs", fmt.Sprint(c.MaxJobs)}
	}
	return Class{Name: c.Name, Family: WholeNode, Args: args, Bounded: true, Describe: describe, Make: c.Make}
}

// subSeed is the generator seed of window k of a sweep seeded with seed,
// as bench scas derives it.
func subSeed(seed uint64, k int) uint64 { return seed*1_000_003 + uint64(k) }

// Million is the generator configuration of window k of the million
// class: the 10⁶-node 100×100×100 layout, 30 % of it idle, 2,000 waiting
// jobs of the paper's trace ranges (1–40 nodes, 10–1800 s).
func Million(seed uint64, k int) instances.GenConfig {
	cfg := instances.PaperGenConfig()
	cfg.Seed = subSeed(seed, k)
	cfg.Layout = &model.LayoutSpec{Pods: 100, LeavesPerPod: 100, NodesPerLeaf: 100}
	cfg.Idle = 300_000
	cfg.Jobs = 2000
	return cfg
}

// MillionJobs is the waiting jobs of the million-jobs class (issue 36's
// time-promise case); MaxJobsIdle the idle nodes of the max-jobs class.
const (
	MillionJobs = 200_000
	MaxJobsIdle = 10
)

// EuroraHeavyJobs and EuroraHeavyLoad make the eurora-heavy class: four
// times the waiting jobs of the eurora class, on a cluster whose running
// jobs hold 95 % of the cores (the generator's default is 85 %).
const (
	EuroraHeavyJobs = 120
	EuroraHeavyLoad = 0.95
)

// Classes returns every window class of the sweep, in table order; the
// million classes come last, so that the memory its generation leaves
// behind in the sweep's process (see the package comment) does not raise
// the floor of the other classes' measurements.
func Classes() []Class {
	return []Class{
		scasClass(gaps.PaperClass(), "the NSA paper's 1000-node 25×4×10 layout, 50–1000 idle nodes, 8 jobs of 2–40 nodes, solved with --max-jobs 5"),
		scasClass(gaps.LargeClass(), "8,192-node k=32 fat-trees, 1,000–5,000 idle nodes, 50–200 jobs of 1–40 nodes"),
		scasClass(gaps.LargeLayoutClass(), "the same on the 10,000-node 25×40×10 layout"),
		{Name: "eurora", Family: CP, Args: []string{"--encoding", "cp"}, Bounded: true,
			Describe: "the 65-node Eurora-like cluster at 85 % load, 30 waiting jobs (--encoding cp)",
			Make: func(seed uint64, k int) (*model.Window, error) {
				return instances.Eurora(instances.EuroraConfig{Seed: subSeed(seed, k), Jobs: 30})
			}},
		{Name: "eurora-heavy", Family: CP, Args: []string{"--encoding", "cp"}, Bounded: true,
			Describe: fmt.Sprintf("the same at %.0f %% load with %d waiting jobs", 100*EuroraHeavyLoad, EuroraHeavyJobs),
			Make: func(seed uint64, k int) (*model.Window, error) {
				return instances.Eurora(instances.EuroraConfig{Seed: subSeed(seed, k), Jobs: EuroraHeavyJobs, Load: EuroraHeavyLoad})
			}},
		{Name: "whole-cp", Family: CP, Args: []string{"--encoding", "cp"}, Bounded: true,
			Describe: "the large class's whole-node windows given to --encoding cp",
			Make:     gaps.LargeClass().Make},
		{Name: "million", Family: WholeNode, Describe: "the 10⁶-node 100×100×100 layout, 300,000 idle nodes, 2,000 jobs (outside the 1 GiB promise; its peak is reported)",
			Make: func(seed uint64, k int) (*model.Window, error) { return instances.Generate(Million(seed, k)) }},
		{Name: "million-jobs", Family: WholeNode, Describe: fmt.Sprintf("the million class with %d waiting jobs (outside the 1 GiB promise)", MillionJobs),
			Make: func(seed uint64, k int) (*model.Window, error) {
				cfg := Million(seed, k)
				cfg.Jobs = MillionJobs
				return instances.Generate(cfg)
			}},
		{Name: "max-jobs", Family: WholeNode, Describe: fmt.Sprintf("the paper's 1000-node layout, %d idle nodes, %d waiting jobs: the most a window may hold, nearly all beyond what its idle nodes can take (outside the 1 GiB promise)", MaxJobsIdle, windowjson.MaxJobs),
			Make: func(seed uint64, k int) (*model.Window, error) {
				cfg := instances.PaperGenConfig()
				cfg.Seed, cfg.Idle, cfg.Jobs = subSeed(seed, k), MaxJobsIdle, windowjson.MaxJobs
				return instances.Generate(cfg)
			}},
	}
}

// ClassNames lists the names of Classes.
func ClassNames() []string {
	var out []string
	for _, c := range Classes() {
		out = append(out, c.Name)
	}
	return out
}

// A Solver is a row of the tables: a name and the flags that select it
// on `optsched solve`.
type Solver struct {
	Name   string
	Family Family
	// Args select the solver (none: the default of the family).
	Args []string
	// Describe says what the row runs, for the help text.
	Describe string
}

// Solvers returns every solver of the sweep, in table order: the
// whole-node family, then the cp family. Heuristics run as --heuristic
// (alone, as a user runs them); exact solvers as --solver, with the
// family's default fallback unless the name says nofallback.
func Solvers() []Solver {
	h := func(name, describe string) Solver {
		return Solver{Name: name, Family: WholeNode, Args: []string{"--heuristic", name}, Describe: describe}
	}
	return []Solver{
		{Name: "default", Family: WholeNode, Describe: "no flag: csp with SA in the reserve"},
		{Name: "csp-nofallback", Family: WholeNode, Args: []string{"--solver", "csp", "--fallback", "none"}, Describe: "csp alone (--fallback none); with its fallback it is the default"},
		{Name: "lpsolve", Family: WholeNode, Args: []string{"--solver", "lpsolve"}, Describe: "lp_solve (cgo) with SA in the reserve"},
		{Name: "clp", Family: WholeNode, Args: []string{"--solver", "clp"}, Describe: "CLP (cgo) with SA in the reserve"},
		{Name: "free", Family: WholeNode, Args: []string{"--encoding", "dcas"}, Describe: "the free problem's exact solver (--encoding dcas) with SA in the reserve"},
		{Name: "free-nofallback", Family: WholeNode, Args: []string{"--solver", "free", "--fallback", "none"}, Describe: "free alone (--fallback none)"},
		h("sa", "--heuristic sa"),
		h("nsa", "--heuristic nsa (shipped weights)"),
		h("seq", "--heuristic seq"),
		h("slurm", "--heuristic slurm"),
		h("mishra-greedy", "--heuristic mishra-greedy"),
		h("mishra-balanced", "--heuristic mishra-balanced"),
		h("mishra-adaptive", "--heuristic mishra-adaptive"),
		{Name: "default", Family: CP, Describe: "no flag: sat, started from and falling back to the PBS list schedules"},
		{Name: "sat-nofallback", Family: CP, Args: []string{"--solver", "sat", "--fallback", "none"}, Describe: "sat alone (--fallback none)"},
		{Name: "bnb", Family: CP, Args: []string{"--solver", "bnb"}, Describe: "the branch and bound, started from the PBS list schedules"},
		{Name: "pbs-fifo", Family: CP, Args: []string{"--heuristic", "pbs-fifo"}, Describe: "--heuristic pbs-fifo"},
		{Name: "pbs-walltime", Family: CP, Args: []string{"--heuristic", "pbs-walltime"}, Describe: "--heuristic pbs-walltime"},
	}
}

// SolverNames lists the distinct names of Solvers.
func SolverNames() []string {
	var out []string
	for _, s := range Solvers() {
		if !slices.Contains(out, s.Name) {
			out = append(out, s.Name)
		}
	}
	return out
}

// SelectClasses returns the classes named, in the order given; an
// unknown name is an error naming the known ones.
func SelectClasses(names []string) ([]Class, error) {
	all := Classes()
	var out []Class
	for _, n := range names {
		n = strings.TrimSpace(n)
		i := slices.IndexFunc(all, func(c Class) bool { return c.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("unknown class %q (want %s)", n, strings.Join(ClassNames(), ", "))
		}
		if !slices.ContainsFunc(out, func(c Class) bool { return c.Name == n }) {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// SelectSolvers returns the solvers named (a name standing for its rows
// in every family), in table order; nil names select every solver. An
// unknown name is an error naming the known ones.
func SelectSolvers(names []string) ([]Solver, error) {
	all := Solvers()
	if names == nil {
		return all, nil
	}
	known := SolverNames()
	want := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if !slices.Contains(known, n) {
			return nil, fmt.Errorf("unknown solver %q (want %s)", n, strings.Join(known, ", "))
		}
		want[n] = true
	}
	var out []Solver
	for _, s := range all {
		if want[s.Name] {
			out = append(out, s)
		}
	}
	return out, nil
}
