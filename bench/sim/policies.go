package sim

import (
	"slices"

	"github.com/optsched/optsched/bench/trace"
)

// A policy is a per-job scheduling policy: the queue is kept in priority
// order (nil: arrival order); the head starts while it fits; then up to
// backfill later jobs (−1: all, 0: none) may start if they do not delay
// the head's reservation (EASY, on requested walltimes). A greedy policy
// instead starts, while any fits, the fitting job that fit ranks first.
type policy struct {
	priority func(j *trace.Job) [2]float64
	backfill int
	greedy   bool
	fit      func(j *trace.Job, idle int) [2]float64
}

// cmpKey orders keys lexicographically, smaller first.
func cmpKey(a, b [2]float64) int {
	for i := range a {
		switch {
		case a[i] < b[i]:
			return -1
		case a[i] > b[i]:
			return 1
		}
	}
	return 0
}

// wall is the job's requested walltime as its scheduler knows it at
// submission (requestOf): never its run time, which a scheduler learns only
// when the job ends. A job may run past its request (SWF does not forbid
// it, and jobs here are never killed at it).
func wall(j *trace.Job) float64 { return float64(requestOf(j.Walltime, j.Runtime)) }

// policies are the per-job policies by name:
//
//	fcfs          arrival order, no backfilling
//	easy          arrival order, EASY backfilling
//	sjf           shortest requested walltime first, EASY backfilling
//	saf           smallest area (walltime × nodes) first, EASY backfilling
//	drf           smallest demand (nodes) first — dominant resource
//	              fairness with one resource — EASY backfilling
//	tetris        packing: among the jobs that fit, the one whose demand
//	              aligns best with the free nodes (nodes × free), repeatedly
//	pbs-fifo      arrival order, backfilling limited to the first 10
//	              queued jobs (Bridi et al.'s PBSFifo)
//	pbs-walltime  shortest walltime first, backfilling limited to 400
//	              (Bridi et al.'s PBSWalltime)
var policies = map[string]policy{
	"fcfs": {backfill: 0},
	"easy": {backfill: -1},
	"sjf":  {backfill: -1, priority: func(j *trace.Job) [2]float64 { return [2]float64{wall(j), float64(j.Submit)} }},
	"saf":  {backfill: -1, priority: func(j *trace.Job) [2]float64 { return [2]float64{wall(j) * float64(j.Nodes), float64(j.Submit)} }},
	"drf":  {backfill: -1, priority: func(j *trace.Job) [2]float64 { return [2]float64{float64(j.Nodes), float64(j.Submit)} }},
	"tetris": {greedy: true, fit: func(j *trace.Job, idle int) [2]float64 {
		return [2]float64{-float64(j.Nodes) * float64(idle), float64(j.Submit)}
	}},
	"pbs-fifo":     {backfill: 10},
	"pbs-walltime": {backfill: 400, priority: func(j *trace.Job) [2]float64 { return [2]float64{wall(j), float64(j.Submit)} }},
}

// PolicyNames returns the per-job policy names, cp included, sorted.
func PolicyNames() []string {
	names := make([]string, 0, len(policies)+1)
	names = append(names, CP)
	for n := range policies {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
