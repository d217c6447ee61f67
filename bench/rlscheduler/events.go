package rlscheduler

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
)

// A Waiting job, as a Decider sees it: no run time, only the request.
type Waiting struct {
	// Job indexes the sequence's jobs.
	Job     int
	Submit  int64
	Request int64 // requested time, ≥ 1 (a log's unknown request reads as 1)
	Nodes   int
}

// A Running job, as a Decider sees it.
type Running struct {
	// End is its estimated end, start + request, and at least now + 1: a
	// job still running past its request ends no earlier than the next
	// second.
	End   int64
	Nodes int
}

// A Decider chooses at an event which waiting jobs start now. waiting is
// in arrival order; the answer indexes it, and its jobs' nodes must add up
// to at most free.
type Decider interface {
	Decide(ctx context.Context, now int64, nodes, free int, running []Running, waiting []Waiting) ([]int, error)
}

// Simulate runs a Decider on a sequence in a proper event-driven
// simulation of the protocol's cluster: at each event time every finish
// due releases its nodes, every arrival due joins the queue, and the
// Decider chooses what starts. Jobs run their real run time; the Decider
// sees requested times only. Every start is checked to fit.
func Simulate(ctx context.Context, seq Sequence, d Decider) (*Schedule, error) {
	if err := seq.Check(); err != nil {
		return nil, err
	}
	jobs := seq.Jobs()
	nodes, capped := seq.nodes()
	total := int(seq.W.MaxNodes)
	start := make([]int64, len(jobs))
	var (
		queue   []int // waiting, in arrival order
		running []int // started and not finished
		free    = total
		next    int
		done    int
		now     = jobs[0].Submit
		wv      []Waiting
		rv      []Running
		chosen  []bool // by queue position, for one decision
	)
	for done < len(jobs) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		kept := running[:0]
		for _, i := range running {
			if start[i]+jobs[i].Run <= now {
				free += nodes[i]
			} else {
				kept = append(kept, i)
			}
		}
		running = kept
		for next < len(jobs) && jobs[next].Submit <= now {
			queue = append(queue, next)
			next++
		}
		if len(queue) > 0 {
			wv, rv = wv[:0], rv[:0]
			for _, i := range queue {
				wv = append(wv, Waiting{Job: i, Submit: jobs[i].Submit, Request: max(jobs[i].Request, 1), Nodes: nodes[i]})
			}
			for _, i := range running {
				rv = append(rv, Running{End: max(start[i]+max(jobs[i].Request, 1), now+1), Nodes: nodes[i]})
			}
			pick, err := d.Decide(ctx, now, total, free, rv, wv)
			if err != nil {
				return nil, err
			}
			used := 0
			chosen = slices.Grow(chosen[:0], len(queue))[:len(queue)]
			clear(chosen)
			for _, k := range pick {
				if k < 0 || k >= len(queue) || chosen[k] {
					return nil, fmt.Errorf("rlscheduler: decider chose waiting job %d of %d (or twice)", k, len(queue))
				}
				chosen[k] = true
				used += nodes[queue[k]]
			}
			if used > free {
				return nil, fmt.Errorf("rlscheduler: decider started %d nodes of jobs at %d with %d free", used, now, free)
			}
			for _, k := range pick {
				i := queue[k]
				start[i] = now
				running = append(running, i)
				done++
			}
			free -= used
			left := queue[:0]
			for k, i := range queue {
				if !chosen[k] {
					left = append(left, i)
				}
			}
			queue = left
		}
		t := int64(math.MaxInt64)
		if next < len(jobs) {
			t = jobs[next].Submit
		}
		for _, i := range running {
			t = min(t, start[i]+jobs[i].Run)
		}
		if done == len(jobs) {
			break
		}
		if t == math.MaxInt64 {
			return nil, fmt.Errorf("rlscheduler: %d jobs wait at %d, but nothing runs or arrives", len(queue), now)
		}
		now = max(t, now)
	}
	return &Schedule{Seq: seq, Starts: start, Capped: capped}, nil
}

// EASY is FCFS with EASY backfilling (Lifka's, on requested times): the
// head starts while it fits; when it does not, its reservation (shadow
// time) is the earliest estimated end at which enough nodes are free, and
// the nodes spare then are the extra nodes; a later job starts now if it
// fits and either ends by the shadow time or uses only extra nodes.
type EASY struct{}

// Decide implements Decider.
func (EASY) Decide(_ context.Context, now int64, _, free int, running []Running, waiting []Waiting) ([]int, error) {
	var pick []int
	k := 0
	for ; k < len(waiting) && waiting[k].Nodes <= free; k++ {
		pick = append(pick, k)
		free -= waiting[k].Nodes
	}
	if k >= len(waiting)-1 {
		return pick, nil
	}
	// The head's reservation, by the estimated ends; the jobs started
	// just now end by their requests.
	ends := slices.Clone(running)
	for _, p := range pick {
		ends = append(ends, Running{End: now + waiting[p].Request, Nodes: waiting[p].Nodes})
	}
	slices.SortFunc(ends, func(a, b Running) int { return cmp.Compare(a.End, b.End) })
	head := waiting[k]
	shadow, extra := int64(math.MaxInt64), 0
	avail := free
	for _, e := range ends {
		avail += e.Nodes
		if avail >= head.Nodes {
			shadow, extra = e.End, avail-head.Nodes
			break
		}
	}
	for j := k + 1; j < len(waiting) && free > 0; j++ {
		w := waiting[j]
		if w.Nodes > free {
			continue
		}
		switch {
		case now+w.Request <= shadow:
		case w.Nodes <= extra:
			extra -= w.Nodes
		default:
			continue
		}
		pick = append(pick, j)
		free -= w.Nodes
	}
	return pick, nil
}
