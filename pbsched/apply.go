package pbsched

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/optsched/optsched/sched"
)

// A Runner starts one job on the vnodes of a qrun -H specification. It
// returns the command's exit code (0 on success, -1 when it did not run
// to an exit) and, when that is not 0, what the command said.
type Runner interface {
	Run(ctx context.Context, execVnode, job string) (exitCode int, msg string)
}

// Qrun is the Runner that runs `qrun -H SPEC -- JOB` (the "--" ends the
// options, so that no job id is ever read as one). Each call runs for at
// most Timeout (60 s when 0): then qrun and every process of its process
// group are killed, and the call waits at most WaitDelay (2 s when 0)
// more for the output pipes that something qrun left behind may hold.
type Qrun struct {
	// Path is the qrun binary.
	Path               string
	Timeout, WaitDelay time.Duration
	// Async runs `qrun -a`: qrun returns once the server has accepted
	// the run request (the job exists, is queued and the vnodes are
	// known), without waiting for the MoM to start it, as pbs_sched's
	// own run requests do (pbs_asyrunjob, its default when the server
	// has no runjob hook). A start the MoM then fails puts the job back
	// in the queue, where the next cycle sees it.
	Async bool
}

// Run implements Runner.
func (q Qrun) Run(ctx context.Context, execVnode, job string) (int, string) {
	timeout, delay := q.Timeout, q.WaitDelay
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	if delay <= 0 {
		delay = 2 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, q.Path, q.Args(execVnode, job)...)
	BoundProcess(cmd)
	cmd.WaitDelay = delay
	var out bytes.Buffer
	cmd.Stdout = &headWriter{b: &out, n: 1 << 16}
	cmd.Stderr = cmd.Stdout
	err := cmd.Run()
	if err == nil {
		return 0, ""
	}
	code := -1
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		code = ee.ExitCode()
	}
	msg := strings.TrimSpace(out.String())
	if cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		msg = fmt.Sprintf("qrun did not finish within %v and was killed: %v", timeout, err)
	}
	if msg == "" {
		msg = err.Error()
	}
	if len(msg) > 500 {
		msg = msg[:497] + "..."
	}
	return code, msg
}

// Args are qrun's arguments for one start (Apply records them in the
// plan).
func (q Qrun) Args(execVnode, job string) []string {
	if q.Async {
		return []string{"-a", "-H", execVnode, "--", job}
	}
	return []string{"-H", execVnode, "--", job}
}

// headWriter keeps the first n bytes written to it and drops the rest.
type headWriter struct {
	b *bytes.Buffer
	n int
}

func (h *headWriter) Write(p []byte) (int, error) {
	if room := h.n - h.b.Len(); room > 0 {
		h.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// An Outcome is what Apply did, a value apart from the Plan: one
// StartOutcome per start of the plan, in the plan's order.
type Outcome struct {
	Starts []StartOutcome
}

// A StartOutcome is what came of one start.
type StartOutcome struct {
	Job string
	// Applied says qrun ran for the start; ExitCode and Error are its
	// exit code and message (Error "" on success); Args the arguments it
	// ran with, when the Runner says.
	Applied  bool
	ExitCode int
	Error    string
	Args     []string
}

// Applied reports whether qrun ran for any start.
func (o *Outcome) Applied() bool {
	if o == nil {
		return false
	}
	for _, s := range o.Starts {
		if s.Applied {
			return true
		}
	}
	return false
}

// Apply starts the plan's jobs in order through r (sched.Apply, each
// start a qrun) and returns what came of each, leaving the plan as it
// was. A failing start does not stop the others: each records its exit
// code and message, and the returned error lists the jobs that failed.
// When ctx ends, the start in flight is the Runner's to stop and the
// starts not yet run stay unapplied (and are counted in the error).
// Apply never runs a plan that Check has not passed: callers check first.
func Apply(ctx context.Context, p *Plan, r Runner) (*Outcome, error) {
	plan := sched.Plan{Starts: make([]sched.Start, len(p.Starts))}
	for i, s := range p.Starts {
		plan.Starts[i] = sched.Start{Job: s.Job, Nodes: chunkVnodes(s.Chunks), Spec: s.ExecVnode()}
	}
	o := sched.Apply(ctx, plan, qrunner{r})
	out := &Outcome{Starts: make([]StartOutcome, len(o.Results))}
	var failed []string
	notRun := 0
	var cause error
	for i, res := range o.Results {
		so := &out.Starts[i]
		so.Job = p.Starts[i].Job
		if !res.Ran {
			notRun++
			cause = res.Err
			continue
		}
		so.Applied, so.ExitCode, so.Args = true, res.Code, res.Args
		if res.Err == nil {
			continue
		}
		so.Error = res.Err.Error()
		failed = append(failed, fmt.Sprintf("%s (exit %d: %s)", so.Job, res.Code, so.Error))
	}
	var errs []string
	if len(failed) > 0 {
		errs = append(errs, fmt.Sprintf("qrun failed for %d of %d jobs: %s", len(failed), len(p.Starts), strings.Join(failed, "; ")))
	}
	if notRun > 0 {
		errs = append(errs, fmt.Sprintf("%d of %d starts not run: %v", notRun, len(p.Starts), cause))
	}
	if len(errs) > 0 {
		return out, errors.New(strings.Join(errs, "; "))
	}
	return out, nil
}

// qrunner is Apply's sched.Runner: one qrun a start, through a Runner.
type qrunner struct{ r Runner }

// Start implements sched.Runner.
func (q qrunner) Start(ctx context.Context, s sched.Start) sched.Result {
	code, msg := q.r.Run(ctx, s.Spec, s.Job)
	res := sched.Result{Code: code}
	if a, ok := q.r.(interface {
		Args(execVnode, job string) []string
	}); ok {
		res.Args = a.Args(s.Spec, s.Job)
	}
	if code != 0 {
		res.Err = errors.New(msg)
	}
	return res
}
