package cycle

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/pbsched"
	"github.com/optsched/optsched/pbsched/pbstest"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/brute"
)

// pbsTestdata holds the PBS 2022-shaped fixtures: 16 vnodes in every
// state, jobs with select strings, walltimes, an execution, a routing and
// a stopped queue, running, held and array jobs.
const pbsTestdata = "../../model/pbs/testdata"

func fixture(name string) string { return filepath.Join(pbsTestdata, name) }

// fixtureConfig returns a dry-run Config reading the fixtures, with the
// defaults of optsched pbs plan's flags (first fit for the partial-node
// jobs).
func fixtureConfig() *Config {
	return &Config{Stdin: strings.NewReader(""),
		QstatFile: fixture("qstat.json"), NodesFile: fixture("pbsnodes.json"), QueuesFile: fixture("queues.json"),
		Timezone: "UTC", Levels: []string{"tier0", "tier1"}, Period: time.Minute,
		Decide: pbsched.Options{TimeLimit: 2 * time.Second, Cost: "lan-code", Solver: catalog.DefaultWindow()}}
}

// TestPBSWholeNodeWindowIsOptimal: the whole-node jobs' window is solved
// to the optimum brute force finds on the same window.
func TestPBSWholeNodeWindowIsOptimal(t *testing.T) {
	p, _, err := fixtureConfig().Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p.Window == nil || len(p.Window.Jobs) != 2 || p.Solve.Status != "optimal" {
		t.Fatalf("window %+v, solve %+v", p.Window, p.Solve)
	}
	res, err := solver.SolveWindow(context.Background(), p.Window, brute.Solver{}, solver.Options{})
	if err != nil || res.Status != solver.Optimal {
		t.Fatalf("brute: %v %v", err, res)
	}
	if *p.Solve.Objective != res.Objective {
		t.Errorf("csp objective %d, brute optimum %d", *p.Solve.Objective, res.Objective)
	}
	if err := model.Check(p.Window, p.Allocs); err != nil {
		t.Error(err)
	}
	// The idle vnodes of the window are the fixture's idle vnodes minus
	// the one the GPU job took.
	if got := p.Window.NodeNames(p.Window.Idle); !slices.Equal(got, []string{"n003", "n004", "n008", "n010", "n013", "n014"}) {
		t.Errorf("window idle %v", got)
	}
}

// TestPBSSolverFailureFallsBack: a solver that errors, and one that finds
// nothing, are replaced by the heuristic, which the plan reports; the
// jobs still start.
func TestPBSSolverFailureFallsBack(t *testing.T) {
	for name, s := range map[string]solver.Solver{"error": failingSolver{err: true}, "nothing": failingSolver{}} {
		c := fixtureConfig()
		c.Decide.Solver = s
		p, _, err := c.Plan(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.Solve.Solver != "slurm" || !strings.Contains(p.Solve.Fallback, "broken") || len(p.Notes) == 0 {
			t.Errorf("%s: solve %+v, notes %v", name, p.Solve, p.Notes)
		}
		whole := 0
		for _, st := range p.Starts {
			if st.Path == pbsched.PathWhole {
				whole++
			}
		}
		if whole != 2 {
			t.Errorf("%s: %d whole-node starts after the fallback", name, whole)
		}
	}
	// Every solver failing is an error, never a silent empty plan.
	c := fixtureConfig()
	c.Decide.Solver = failingSolver{err: true}
	c.Decide.Fallbacks = []solver.Solver{failingSolver{}}
	if _, _, err := c.Plan(context.Background()); err == nil || !strings.Contains(err.Error(), "every solver failed") {
		t.Errorf("all solvers failing: %v", err)
	}
}

// failingSolver errors (err) or returns status unknown.
type failingSolver struct{ err bool }

func (failingSolver) Name() string { return "broken" }
func (f failingSolver) Solve(ctx context.Context, p *solver.Problem) (*solver.Result, error) {
	if f.err {
		return nil, errors.New("broken on purpose")
	}
	return &solver.Result{Status: solver.Unknown, Bound: solver.NoBound, Solver: "broken"}, nil
}

// TestPBSNeverNamesUnavailableVnodes: on 300 random clusters in every
// vnode state, no plan names a vnode that is not free, gives a busy
// vnode to a whole-node job, starts a job that is not queued in a started
// execution queue, or overfills a vnode. (The cycle's own checkPlan must
// pass too: it returns an error otherwise.)
func TestPBSNeverNamesUnavailableVnodes(t *testing.T) {
	for _, mode := range []string{pbsched.PartialFirstFit, pbsched.PartialCP} {
		var whole, partial, deferred int
		for seed := uint64(1); seed <= 300; seed++ {
			rc := pbstest.NewRandomCluster(rand.New(rand.NewPCG(seed, 6)))
			c := fixtureConfig()
			c.Decide.Partial = mode
			c.QstatFile, c.NodesFile, c.QueuesFile = rc.Write(t)
			c.Decide.TimeLimit = 200 * time.Millisecond
			p, _, err := c.Plan(context.Background())
			if err != nil {
				t.Fatalf("%s: seed %d: %v", mode, seed, err)
			}
			d := p.Doc("qrun", true, nil)
			w, pa := rc.Verify(t, seed, verifyStarts(d.Starts))
			whole, partial, deferred = whole+w, partial+pa, deferred+len(d.Deferred)
		}
		t.Logf("--partial %s: starts: %d whole-node, %d partial-node; %d deferred", mode, whole, partial, deferred)
		if whole < 25 || partial < 100 || deferred < 100 {
			t.Errorf("--partial %s: the random clusters exercise too little: %d whole-node, %d partial-node starts, %d deferred", mode, whole, partial, deferred)
		}
	}
}

// verifyStarts turns a plan's starts into what pbstest.Verify reads.
func verifyStarts(ds []pbsched.StartDoc) []pbstest.Start {
	out := make([]pbstest.Start, len(ds))
	for i, d := range ds {
		out[i] = pbstest.Start{Job: d.Job, ExecVnode: d.ExecVnode, Whole: d.Path == pbsched.PathWhole}
	}
	return out
}
