package sched

import "context"

// A Runner acts on one start in the server's commands (qrun; scontrol
// update and its read-back).
type Runner interface {
	Start(ctx context.Context, s Start) Result
}

// A Committer is a Runner whose starts take effect only once committed,
// all together (Slurm's one scontrol release of the placed jobs).
type Committer interface {
	Commit(ctx context.Context, starts []Start) error
}

// A Result is what acting on one start did.
type Result struct {
	Job string
	// Ran says the Runner was called (false: the context ended first);
	// Err is nil when the start succeeded (for a Committer: was staged).
	Ran bool
	Err error
	// Code is the exit code of the server's command when it has one (0
	// on success, -1 when it did not run to an exit); Args the command's
	// arguments, when the Runner says.
	Code int
	Args []string
	// Committed says a Committer committed the start; it is false for a
	// Runner that is not one.
	Committed bool
}

// An Outcome is what Apply did, a value apart from the Plan: a Result
// per start, in the plan's order, and the commit's error (for a
// Committer, when any start was staged).
type Outcome struct {
	Results []Result
	// Staged counts the starts the Committer was asked to commit;
	// CommitErr is its error, or the context's cause when the context
	// ended before the commit.
	Staged    int
	CommitErr error
}

// Apply acts on the starts of p in order through r. A failing start does
// not stop the others. Once ctx ends, the starts not yet acted on are
// not run (their Result has Ran false and Err the context's cause); the
// start in flight is the Runner's to stop. When r is a Committer, the
// starts that succeeded are then committed in one call, unless ctx has
// ended. Apply never acts on a plan that Check has not passed: callers
// check first.
func Apply(ctx context.Context, p Plan, r Runner) Outcome {
	o := Outcome{Results: make([]Result, len(p.Starts))}
	var staged []Start
	var at []int
	for i, s := range p.Starts {
		if ctx.Err() != nil {
			o.Results[i] = Result{Job: s.Job, Err: context.Cause(ctx)}
			continue
		}
		res := r.Start(ctx, s)
		res.Job, res.Ran = s.Job, true
		o.Results[i] = res
		if res.Err == nil {
			staged = append(staged, s)
			at = append(at, i)
		}
	}
	c, ok := r.(Committer)
	if !ok || len(staged) == 0 {
		return o
	}
	o.Staged = len(staged)
	if ctx.Err() != nil {
		o.CommitErr = context.Cause(ctx)
	} else {
		o.CommitErr = c.Commit(ctx, staged)
	}
	if o.CommitErr == nil {
		for _, i := range at {
			o.Results[i].Committed = true
		}
	}
	return o
}
