package rlscheduler

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/optsched/optsched/model"
)

// Starts are the published code's ten start positions of the test
// sequences, in the loaded job list; the same for every trace.
var Starts = []int{1981, 2756, 4299, 8850, 3316, 2714, 5228, 7762, 4022, 7085}

// SequenceLength is the published sequence length, in jobs.
const SequenceLength = 1024

// A Sequence is a run of consecutive jobs of a Workload.
type Sequence struct {
	W *Workload
	// Start is the position of its first job in W.Jobs; Len its jobs.
	Start, Len int
}

// Jobs returns the sequence's jobs.
func (s Sequence) Jobs() []Job { return s.W.Jobs[s.Start : s.Start+s.Len] }

// Check reports whether the sequence lies within the workload.
func (s Sequence) Check() error {
	if s.Len < 1 {
		return fmt.Errorf("rlscheduler: a sequence needs at least one job, got %d", s.Len)
	}
	if s.Start < 0 || s.Start+s.Len > len(s.W.Jobs) {
		return fmt.Errorf("rlscheduler: sequence [%d, %d) is outside the workload's %d jobs", s.Start, s.Start+s.Len, len(s.W.Jobs))
	}
	return nil
}

// nodes returns each job's nodes, capped at the cluster (a job wider than
// the cluster runs on all of it), and how many were capped.
func (s Sequence) nodes() ([]int, int) {
	n := make([]int, s.Len)
	capped := 0
	for i, j := range s.Jobs() {
		n[i] = s.W.NodesOf(j)
		if int64(n[i]) > s.W.MaxNodes {
			n[i] = int(s.W.MaxNodes)
			capped++
		}
	}
	return n, capped
}

// A Schedule is the start time of every job of a sequence.
type Schedule struct {
	Seq    Sequence
	Starts []int64
	// Capped counts jobs wider than the cluster, run on all of it.
	Capped int
}

// ScheduleOf is the schedule of the sequence whose job i starts at
// starts[i] (a schedule made elsewhere; Verify checks it).
func (s Sequence) ScheduleOf(starts []int64) (*Schedule, error) {
	if len(starts) != s.Len {
		return nil, fmt.Errorf("rlscheduler: %d starts for a sequence of %d jobs", len(starts), s.Len)
	}
	_, capped := s.nodes()
	return &Schedule{Seq: s, Starts: starts, Capped: capped}, nil
}

// BSLD is a job's bounded slowdown, max(1, (wait + run)/max(run, 10)), on
// its real run time.
func BSLD(j Job, start int64) float64 {
	return model.BoundedSlowdown(float64(start-j.Submit), float64(j.Run))
}

// Mean is the mean bounded slowdown of the schedule's jobs.
func (s *Schedule) Mean() float64 {
	var sum float64
	for i, j := range s.Seq.Jobs() {
		sum += BSLD(j, s.Starts[i])
	}
	return sum / float64(s.Seq.Len)
}

// Verify checks a schedule independently of how it was made: every job
// starts at or after its submit time, and at no time do the running jobs
// (each for its real run time; a finish at t frees its nodes for a start
// at t) take more nodes than the cluster has.
func (s *Schedule) Verify() error {
	jobs := s.Seq.Jobs()
	if len(s.Starts) != len(jobs) {
		return fmt.Errorf("rlscheduler: %d starts for %d jobs", len(s.Starts), len(jobs))
	}
	nodes, _ := s.Seq.nodes()
	type ev struct {
		t int64
		d int
	}
	evs := make([]ev, 0, 2*len(jobs))
	for i, j := range jobs {
		if s.Starts[i] < j.Submit {
			return fmt.Errorf("rlscheduler: job %d starts at %d, before its submit time %d", j.Number, s.Starts[i], j.Submit)
		}
		evs = append(evs, ev{s.Starts[i], nodes[i]}, ev{s.Starts[i] + j.Run, -nodes[i]})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if a.t != b.t {
			if a.t < b.t {
				return -1
			}
			return 1
		}
		return a.d - b.d // finishes first
	})
	used := 0
	for _, e := range evs {
		used += e.d
		if used > int(s.Seq.W.MaxNodes) {
			return fmt.Errorf("rlscheduler: %d nodes in use at time %d, more than the cluster's %d", used, e.t, s.Seq.W.MaxNodes)
		}
	}
	return nil
}

// A Key is a published policy's priority: the queue is stable-sorted by
// it, ascending. now is the decision time (the published code's keys do
// not read it; the intended forms do).
type Key func(j Job, now int64) [2]float64

func pos(x float64) float64 {
	if x <= 0 {
		return 0.1
	}
	return x
}

// keys are the published policies' keys (see the package doc).
var keys = map[string]Key{
	"fcfs": func(j Job, _ int64) [2]float64 { return [2]float64{float64(j.Submit)} },
	"sjf":  func(j Job, _ int64) [2]float64 { return [2]float64{float64(j.Request), float64(j.Submit)} },
	"f1": func(j Job, _ int64) [2]float64 {
		return [2]float64{math.Log10(pos(float64(j.Request)))*float64(j.Procs) + 870*math.Log10(pos(float64(j.Submit)))}
	},
	"wfp3": func(j Job, _ int64) [2]float64 { return [2]float64{wfp3(float64(-1-j.Submit), j)} },
	"uni":  func(j Job, _ int64) [2]float64 { return [2]float64{uni(float64(-1-j.Submit), j)} },
	"wfp3-intended": func(j Job, now int64) [2]float64 {
		return [2]float64{wfp3(float64(now-j.Submit), j)}
	},
	"uni-intended": func(j Job, now int64) [2]float64 { return [2]float64{uni(float64(now-j.Submit), j)} },
}

func wfp3(wait float64, j Job) float64 {
	x := wait / float64(j.Request)
	return -(x * x * x) * float64(j.Procs)
}

func uni(wait float64, j Job) float64 {
	return -(wait + 1e-15) / (math.Log2(float64(j.Procs)+1e-15) * float64(j.Request))
}

// CmpKeys orders two policy keys ascending, lexicographically, NaN
// after every number, as the published loop's stable sort does.
func CmpKeys(a, b [2]float64) int {
	for i := range a {
		an, bn := math.IsNaN(a[i]), math.IsNaN(b[i])
		switch {
		case an && bn:
		case an:
			return 1
		case bn:
			return -1
		case a[i] < b[i]:
			return -1
		case a[i] > b[i]:
			return 1
		}
	}
	return 0
}

// Published lists the policies of the published protocol, in the
// paper's column order, then the intended forms of WFP3 and UNICEP.
var Published = []string{"fcfs", "wfp3", "uni", "sjf", "f1", "wfp3-intended", "uni-intended"}

// replay is the state of the published decision loop on one sequence.
type replay struct {
	jobs     []Job
	nodes    []int
	total    int
	perNode  float64
	free     int
	now      int64
	next     int   // next arrival
	queue    []int // waiting jobs, in the loop's order
	running  []int // started jobs not yet finished, in the loop's order
	start    []int64
	backfill bool
}

func (r *replay) runEnd(i int) int64 { return r.start[i] + r.jobs[i].Run }
func (r *replay) reqEnd(i int) int64 { return r.start[i] + r.jobs[i].Request }

func (r *replay) begin(i int) {
	r.start[i] = r.now
	r.free -= r.nodes[i]
	r.running = append(r.running, i)
	k := slices.Index(r.queue, i)
	r.queue = slices.Delete(r.queue, k, k+1)
}

// event advances one event: the next arrival if it is due no later than
// the next finish, else the next finish.
func (r *replay) event() error {
	if len(r.running) == 0 && r.next >= len(r.jobs) {
		return fmt.Errorf("rlscheduler: nothing runs or arrives while %d jobs wait", len(r.queue))
	}
	release := int64(math.MaxInt64)
	if len(r.running) > 0 {
		slices.SortStableFunc(r.running, func(a, b int) int { return cmp.Compare(r.runEnd(a), r.runEnd(b)) })
		release = r.runEnd(r.running[0])
	}
	if r.next < len(r.jobs) && r.jobs[r.next].Submit <= release {
		r.now = max(r.now, r.jobs[r.next].Submit)
		r.queue = append(r.queue, r.next)
		r.next++
		return nil
	}
	r.now = max(r.now, release)
	r.free += r.nodes[r.running[0]]
	r.running = r.running[1:]
	return nil
}

// fits is the published can_allocated.
func (r *replay) fits(i int) bool { return r.nodes[i] <= r.free }

// reservation is the head's reservation time: the running jobs, in order
// of start + requested time, release their nodes until the head's
// processors are free.
func (r *replay) reservation(head int) int64 {
	earliest := r.now
	slices.SortStableFunc(r.running, func(a, b int) int { return cmp.Compare(r.reqEnd(a), r.reqEnd(b)) })
	free := float64(r.free) * r.perNode
	for _, i := range r.running {
		free += float64(r.nodes[i]) * r.perNode
		earliest = r.reqEnd(i)
		if free >= float64(r.jobs[head].Procs) {
			break
		}
	}
	return earliest
}

// KeyOf returns a published policy's key (Published), as Replay orders
// the queue by it.
func KeyOf(policy string) (Key, error) {
	key, ok := keys[policy]
	if !ok {
		return nil, fmt.Errorf("rlscheduler: no published policy %q (have %v)", policy, Published)
	}
	return key, nil
}

// Replay runs a published policy (Published; key from the keys table) on
// a sequence, with or without their backfilling, and returns the
// schedule. ctx is checked between decisions.
func Replay(ctx context.Context, seq Sequence, policy string, backfill bool) (*Schedule, error) {
	key, ok := keys[policy]
	if !ok {
		return nil, fmt.Errorf("rlscheduler: no published policy %q (have %v)", policy, Published)
	}
	return replayLoop(ctx, seq, key, nil, backfill)
}

// A Chooser picks the head of the published decision loop in place of a
// key: a learned policy. waiting is the queue in arrival order (Job
// indexes the sequence); Choose returns an index into waiting. The loop
// then treats the chosen job as the published policies' head: it starts
// at once if it fits, else time advances event by event until it does.
type Chooser interface {
	Choose(now int64, free, nodes int, waiting []Waiting) int
}

// ReplayChooser runs the published decision loop with c choosing each
// head (without backfilling: the learned policies' "no backfilling"
// rows). Every start is checked to fit by the loop; the schedule can be
// checked with Verify.
func ReplayChooser(ctx context.Context, seq Sequence, c Chooser) (*Schedule, error) {
	return replayLoop(ctx, seq, nil, c, false)
}

func replayLoop(ctx context.Context, seq Sequence, key Key, chooser Chooser, backfill bool) (*Schedule, error) {
	if err := seq.Check(); err != nil {
		return nil, err
	}
	jobs := seq.Jobs()
	nodes, capped := seq.nodes()
	r := &replay{
		jobs: jobs, nodes: nodes, total: int(seq.W.MaxNodes), perNode: seq.W.PerNode(),
		free: int(seq.W.MaxNodes), now: jobs[0].Submit, next: 1, queue: []int{0},
		start: make([]int64, len(jobs)), backfill: backfill,
	}
	for i := range r.start {
		r.start[i] = -1
	}
	keyOf := make([][2]float64, len(jobs)) // the queue's keys, computed once a sort
	byKey := func(a, b int) int { return CmpKeys(keyOf[a], keyOf[b]) }
	bySubmit := func(a, b int) int { return cmp.Compare(jobs[a].Submit, jobs[b].Submit) }
	var waiting []Waiting
	for n := 0; ; n++ {
		if n%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		var head int
		if chooser != nil {
			waiting = waiting[:0]
			for _, i := range r.queue {
				waiting = append(waiting, Waiting{Job: i, Submit: jobs[i].Submit, Request: max(jobs[i].Request, 1), Nodes: nodes[i]})
			}
			k := chooser.Choose(r.now, r.free, r.total, waiting)
			if k < 0 || k >= len(waiting) {
				return nil, fmt.Errorf("rlscheduler: the chooser picked %d of %d waiting jobs", k, len(waiting))
			}
			head = r.queue[k]
		} else {
			for _, i := range r.queue {
				keyOf[i] = key(jobs[i], r.now)
			}
			slices.SortStableFunc(r.queue, byKey)
			head = r.queue[0]
		}
		if !r.fits(head) {
			if backfill {
				res := r.reservation(head)
				for !r.fits(head) {
					slices.SortStableFunc(r.queue, bySubmit)
					for _, i := range slices.Clone(r.queue) {
						if r.now+jobs[i].Request < res && r.fits(i) {
							r.begin(i)
						}
					}
					if err := r.event(); err != nil {
						return nil, err
					}
				}
			} else {
				for !r.fits(head) {
					if err := r.event(); err != nil {
						return nil, err
					}
				}
			}
		}
		if !r.fits(head) {
			return nil, fmt.Errorf("rlscheduler: job %d starts at %d on %d free nodes, needing %d", jobs[head].Number, r.now, r.free, nodes[head])
		}
		r.begin(head)
		if len(r.queue) > 0 {
			continue
		}
		if r.next >= len(jobs) {
			break
		}
		for len(r.queue) == 0 {
			if len(r.running) == 0 || jobs[r.next].Submit <= r.earliestRunEnd() {
				r.now = max(r.now, jobs[r.next].Submit)
				r.queue = append(r.queue, r.next)
				r.next++
				break
			}
			if err := r.event(); err != nil {
				return nil, err
			}
		}
	}
	return &Schedule{Seq: seq, Starts: r.start, Capped: capped}, nil
}

// earliestRunEnd sorts the running jobs by end and returns the first end.
func (r *replay) earliestRunEnd() int64 {
	slices.SortStableFunc(r.running, func(a, b int) int { return cmp.Compare(r.runEnd(a), r.runEnd(b)) })
	return r.runEnd(r.running[0])
}
