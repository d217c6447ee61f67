package replay

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A Clock tells the time and waits; tests give Run a fake one.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Options tune Run.
type Options struct {
	// Clock is the real clock when nil.
	Clock Clock
	// Poll is how often the records are read once every job is
	// submitted (default 2 s).
	Poll time.Duration
	// Timeout bounds the whole run, from the first submission (0: none).
	Timeout time.Duration
	// Cleanup bounds the deletion of the run's jobs after a timeout or a
	// cancel, and the wait for them to end (default 60 s); it runs on a
	// context of its own.
	Cleanup time.Duration
	// Progress, when set, hears what happens (a job submitted, the jobs
	// left), one line at a time.
	Progress func(format string, args ...any)
}

// ErrTimeout is Run's error when Options.Timeout passes first.
var ErrTimeout = errors.New("replay: timed out")

// A Submitted job is a Job and the id its server gave it.
type Submitted struct {
	Job
	ID string
}

// Outcome is what Run did.
type Outcome struct {
	// Submitted lists the jobs submitted, in order.
	Submitted []Submitted
	// Records are the server's last records of them.
	Records []Record
	// Deleted lists the ids Run asked the back end to delete (after a
	// timeout, a cancel or a failed submission); empty otherwise.
	Deleted []string
	// Began and Ended bound the run on the Clock.
	Began, Ended time.Time
}

// Run submits jobs through b at their times (Job.At after the first), waits
// until the server reports every one finished, and returns their records.
//
// If ctx is cancelled, Options.Timeout passes or a submission fails, Run
// stops submitting, deletes the jobs it submitted that have not finished
// (only those: Delete is given no other id), reads their records until
// they have ended (within Options.Cleanup) and returns the Outcome so far with the error (ctx.Err(),
// ErrTimeout, or the submission's).
func Run(ctx context.Context, b Backend, jobs []Job, opt Options) (*Outcome, error) {
	clk := opt.Clock
	if clk == nil {
		clk = realClock{}
	}
	if opt.Poll <= 0 {
		opt.Poll = 2 * time.Second
	}
	if opt.Cleanup <= 0 {
		opt.Cleanup = 60 * time.Second
	}
	say := opt.Progress
	if say == nil {
		say = func(string, ...any) {}
	}
	out := &Outcome{Began: clk.Now()}
	deadline := out.Began.Add(opt.Timeout)
	// wait waits until d has passed, or returns why the run must stop
	// first. It asks the Clock for one timer at a time.
	wait := func(d time.Duration) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if opt.Timeout > 0 {
			d = min(d, deadline.Sub(clk.Now()))
		}
		if d > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-clk.After(d):
			}
		}
		if opt.Timeout > 0 && !clk.Now().Before(deadline) {
			return fmt.Errorf("%w after %v", ErrTimeout, opt.Timeout)
		}
		return nil
	}
	fail := func(err error) (*Outcome, error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opt.Cleanup)
		defer cancel()
		var open []string
		done := map[string]bool{}
		for _, r := range out.Records {
			if r.Done {
				done[r.ID] = true
			}
		}
		for _, s := range out.Submitted {
			if !done[s.ID] {
				open = append(open, s.ID)
			}
		}
		if len(open) > 0 {
			say("deleting the %d unfinished jobs this run submitted", len(open))
			out.Deleted = open
			if derr := b.Delete(cctx, open); derr != nil {
				err = errors.Join(err, fmt.Errorf("replay: deleting this run's jobs: %w", derr))
			}
		}
		// A deleted running job ends a moment later (PBS kills it through
		// its mom): read the records until every job is done, within
		// Options.Cleanup.
		all := ids(out.Submitted)
		for len(all) > 0 {
			recs, rerr := b.Records(cctx, all)
			if rerr != nil {
				break
			}
			out.Records = own(recs, all)
			if countDone(out.Records, all) == len(all) || cctx.Err() != nil {
				break
			}
			select {
			case <-cctx.Done():
			case <-clk.After(min(opt.Poll, time.Second)):
			}
		}
		out.Ended = clk.Now()
		return out, err
	}
	for i, j := range jobs {
		if err := wait(out.Began.Add(j.At).Sub(clk.Now())); err != nil {
			return fail(err)
		}
		id, err := b.Submit(ctx, j)
		if err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			return fail(fmt.Errorf("replay: submitting job %d (%s): %w", j.K, j.Name, err))
		}
		out.Submitted = append(out.Submitted, Submitted{Job: j, ID: id})
		say("submitted %d/%d: %s %s (%d×%d CPUs, sleep %d s, walltime %d s)", i+1, len(jobs), id, j.Name, j.Chunks, j.NCPUs, j.Sleep, j.Walltime)
	}
	all := ids(out.Submitted)
	left := -1
	for {
		recs, err := b.Records(ctx, all)
		if err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			return fail(fmt.Errorf("replay: reading the records: %w", err))
		}
		out.Records = own(recs, all)
		n := len(all) - countDone(recs, all)
		if n == 0 {
			out.Ended = clk.Now()
			return out, nil
		}
		if n != left {
			say("%d of %d jobs not finished", n, len(all))
			left = n
		}
		if err := wait(opt.Poll); err != nil {
			return fail(err)
		}
	}
}

func ids(s []Submitted) []string {
	out := make([]string, len(s))
	for i := range s {
		out[i] = s[i].ID
	}
	return out
}

// own keeps the records of ids, whatever else a back end returned.
func own(recs []Record, ids []string) []Record {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	var out []Record
	for _, r := range recs {
		if want[r.ID] {
			out = append(out, r)
		}
	}
	return out
}

// countDone counts the ids whose record says done.
func countDone(recs []Record, ids []string) int {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	n := 0
	for _, r := range recs {
		if r.Done && want[r.ID] {
			n++
			delete(want, r.ID)
		}
	}
	return n
}
