package slurmsched

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/optsched/optsched/model/hostlist"
	"github.com/optsched/optsched/sched"
)

// A Runner runs the scontrol commands of Apply.
type Runner interface {
	// Place runs `scontrol update JobId=job ReqNodeList=nodes
	// NumNodes=k-k AdminComment=optsched:placed` (PlacedMark).
	Place(ctx context.Context, job, nodes string, k int) error
	// Show returns the job's fields as `scontrol show job -o job` prints
	// them (JobState, ReqNodeList, NumNodes, …).
	Show(ctx context.Context, job string) (map[string]string, error)
	// Release runs `scontrol release` on the jobs.
	Release(ctx context.Context, jobs []string) error
}

// An Outcome is what Apply did, a value apart from the Plan: one
// StartOutcome per start of the plan, in the plan's order.
type Outcome struct {
	Starts []StartOutcome
}

// A StartOutcome is what came of one start: Status is StatusReleased, or
// why not.
type StartOutcome struct {
	Job, Status string
}

// StatusReleased is the Status of a start that was placed, read back
// right and released.
const StatusReleased = "released"

// Released counts the starts that were released.
func (o *Outcome) Released() int {
	if o == nil {
		return 0
	}
	n := 0
	for _, s := range o.Starts {
		if s.Status == StatusReleased {
			n++
		}
	}
	return n
}

// status is what came of start i ("" when the plan was not applied: o
// is nil).
func (o *Outcome) status(i int) string {
	if o == nil || i >= len(o.Starts) {
		return ""
	}
	return o.Starts[i].Status
}

// Apply places each start of p, reads the job back, and releases the jobs
// whose placement read back right, in one call: sched.Apply with the
// commands of r (placer). It returns what came of each start, leaving the
// plan as it was. A start that fails is left held, with its Status
// saying why; so is every start when ctx ends before the release. The
// error lists the failures.
func Apply(ctx context.Context, p *Plan, r Runner) (*Outcome, error) {
	o := sched.Apply(ctx, corePlan(p.Starts), placer{r})
	out := &Outcome{Starts: make([]StartOutcome, len(o.Results))}
	var errs []error
	var released []string
	for i, res := range o.Results {
		s := &out.Starts[i]
		s.Job = p.Starts[i].Job
		var pe placeError
		switch {
		case !res.Ran:
			s.Status = "not placed: " + res.Err.Error()
		case errors.As(res.Err, &pe):
			s.Status = pe.stage + " failed (the job stays held): " + pe.err.Error()
		case o.CommitErr != nil:
			s.Status = "not released: " + o.CommitErr.Error()
			released = append(released, s.Job)
			continue
		default:
			s.Status = StatusReleased
			continue
		}
		errs = append(errs, fmt.Errorf("job %s: %s", s.Job, s.Status))
	}
	if o.CommitErr != nil {
		errs = append(errs, fmt.Errorf("scontrol release %s: %w", strings.Join(released, ","), o.CommitErr))
	}
	return out, errors.Join(errs...)
}

// placer is Apply's sched.Runner: a start is placed (scontrol update) and
// read back; the starts that read back right are committed by one
// scontrol release.
type placer struct{ r Runner }

// placeError is a start's failure at a stage ("placement", "read-back").
type placeError struct {
	stage string
	err   error
}

func (e placeError) Error() string { return e.stage + ": " + e.err.Error() }

// Start implements sched.Runner.
func (pl placer) Start(ctx context.Context, s sched.Start) sched.Result {
	if err := pl.r.Place(ctx, s.Job, s.Spec, len(s.Nodes)); err != nil {
		return sched.Result{Err: placeError{"placement", err}}
	}
	f, err := pl.r.Show(ctx, s.Job)
	if err == nil {
		err = readBack(f, s.Nodes, s.Spec)
	}
	if err != nil {
		return sched.Result{Err: placeError{"read-back", err}}
	}
	return sched.Result{}
}

// Commit implements sched.Committer.
func (pl placer) Commit(ctx context.Context, starts []sched.Start) error {
	ids := make([]string, len(starts))
	for i, s := range starts {
		ids[i] = s.Job
	}
	return pl.r.Release(ctx, ids)
}

// readBack checks that the job is still pending on nodes (hostlist
// nodeList), as placed.
func readBack(f map[string]string, nodes []string, nodeList string) error {
	if st := f["JobState"]; st != "PENDING" {
		return fmt.Errorf("job is %s", st)
	}
	got, err := hostlist.Expand(f["ReqNodeList"])
	if err != nil {
		return fmt.Errorf("ReqNodeList %q: %w", f["ReqNodeList"], err)
	}
	want := slices.Clone(nodes)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return fmt.Errorf("ReqNodeList reads %q, want %s", f["ReqNodeList"], nodeList)
	}
	k := fmt.Sprint(len(nodes))
	if nn := f["NumNodes"]; nn != k+"-"+k && !(nn == k && k == "1") {
		return fmt.Errorf("NumNodes reads %q, want %s-%s", nn, k, k)
	}
	return nil
}

// ParseShowJob splits one line of `scontrol show job -o` into its
// fields. A value runs to the next space-separated KEY= token.
func ParseShowJob(line string) map[string]string {
	out := map[string]string{}
	key := ""
	for _, tok := range strings.Fields(line) {
		k, v, ok := strings.Cut(tok, "=")
		if ok && k != "" && !strings.ContainsAny(k, "()[],") {
			key = k
			out[key] = v
			continue
		}
		if key != "" {
			out[key] += " " + tok
		}
	}
	return out
}

// Scontrol is the Runner that runs scontrol (Path, or scontrol on PATH),
// each call bounded by Timeout (0: 30 s).
type Scontrol struct {
	Path    string
	Timeout time.Duration
}

func (s Scontrol) run(ctx context.Context, args ...string) (string, error) {
	path := s.Path
	if path == "" {
		path = "scontrol"
	}
	t := s.Timeout
	if t <= 0 {
		t = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("scontrol %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Place runs scontrol update JobId=job ReqNodeList=nodes NumNodes=k-k.
func (s Scontrol) Place(ctx context.Context, job, nodes string, k int) error {
	_, err := s.run(ctx, "update", "JobId="+job, "ReqNodeList="+nodes, fmt.Sprintf("NumNodes=%d-%d", k, k), "AdminComment="+PlacedMark)
	return err
}

// Show runs scontrol show job -o job.
func (s Scontrol) Show(ctx context.Context, job string) (map[string]string, error) {
	out, err := s.run(ctx, "show", "job", "-o", job)
	if err != nil {
		return nil, err
	}
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	return ParseShowJob(line), nil
}

// Release runs scontrol release on the jobs, comma-separated.
func (s Scontrol) Release(ctx context.Context, jobs []string) error {
	_, err := s.run(ctx, "release", strings.Join(jobs, ","))
	return err
}
