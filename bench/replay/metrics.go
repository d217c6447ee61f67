package replay

import (
	"fmt"
	"math"
	"slices"

	"github.com/optsched/optsched/model"
)

// JobResult is one job's line of a Report. Times are seconds since 1970
// as the server recorded them; durations are seconds.
type JobResult struct {
	K      int    `json:"k"`
	LogID  string `json:"log_id"`
	Name   string `json:"name"`
	ID     string `json:"id"`
	Procs  int    `json:"procs"`
	Chunks int    `json:"chunks"`
	NCPUs  int    `json:"ncpus_per_chunk"`
	// SubmitAt is when Run submitted it, after the first job (s).
	SubmitAt float64 `json:"submit_at_s"`
	Sleep    int64   `json:"sleep_s"`
	Walltime int64   `json:"walltime_s"`
	// State: "ran" (started and finished), "not-run" (finished without
	// starting: deleted), "unfinished" (no end, or no record).
	State string `json:"state"`
	// Exit is the exit status, nil when the server gave none.
	Exit   *int  `json:"exit_status"`
	Starts int   `json:"starts"`
	Queued int64 `json:"qtime"`
	Start  int64 `json:"stime"`
	End    int64 `json:"end"`
	// Wait = stime − qtime; Run = the used walltime, at least 1; BSLD the
	// bounded slowdown (10 s); 0 for a job that did not run.
	Wait int64   `json:"wait_s"`
	Run  int64   `json:"run_s"`
	BSLD float64 `json:"bsld"`
	// Nodes the job ran on and their CH cost (lan-code; 1 for one node,
	// 0 when a node is not in the topology or the job did not run).
	Nodes []string `json:"nodes"`
	CH    int64    `json:"ch_cost"`
}

// Summary aggregates a Report's jobs. Means are over the jobs that ran.
type Summary struct {
	Jobs int `json:"jobs"`
	// Ran: started and finished; Failed: of those, with an exit status
	// other than 0; NotRun: finished without starting; Unfinished: not
	// finished (or not found) when the run ended.
	Ran        int `json:"ran"`
	Failed     int `json:"failed"`
	NotRun     int `json:"not_run"`
	Unfinished int `json:"unfinished"`
	// RanTwice counts jobs the server started more than once.
	RanTwice int     `json:"ran_more_than_once"`
	MeanWait float64 `json:"mean_wait_s"`
	MaxWait  int64   `json:"max_wait_s"`
	MeanBSLD float64 `json:"mean_bsld"`
	MaxBSLD  float64 `json:"max_bsld"`
	// Makespan is from the first qtime to the last end, s.
	Makespan int64 `json:"makespan_s"`
	// Utilisation is node-seconds used / (nodes × makespan).
	Utilisation float64 `json:"utilisation"`
	// NodeSeconds is Σ nodes × run over the jobs that ran.
	NodeSeconds int64 `json:"node_seconds"`
	Nodes       int   `json:"nodes"`
	// MeanCH is the mean CH cost of the MultiNode jobs that ran on two or
	// more nodes; MeanCHAll over every job that ran (one-node jobs cost 1).
	MultiNode int     `json:"multi_node_jobs"`
	MeanCH    float64 `json:"mean_ch_multi_node"`
	MeanCHAll float64 `json:"mean_ch"`
}

// Compute joins the submitted jobs with their records and derives the
// metrics on cluster c (its Nodes count for utilisation, its Topology for
// the CH cost, priced by cost).
func Compute(sub []Submitted, recs []Record, c *Cluster, cost model.CostModel) ([]JobResult, Summary, error) {
	byID := make(map[string]*Record, len(recs))
	for i := range recs {
		byID[recs[i].ID] = &recs[i]
	}
	out := make([]JobResult, len(sub))
	s := Summary{Jobs: len(sub), Nodes: len(c.Nodes)}
	var first, last int64
	var sumWait, sumBSLD, sumCH, sumCHAll float64
	for i, j := range sub {
		r := &out[i]
		*r = JobResult{K: j.K, LogID: j.LogID, Name: j.Name, ID: j.ID, Procs: j.Procs, Chunks: j.Chunks, NCPUs: j.NCPUs,
			SubmitAt: j.At.Seconds(), Sleep: j.Sleep, Walltime: j.Walltime, State: "unfinished", Nodes: []string{}}
		rec := byID[j.ID]
		if rec == nil {
			s.Unfinished++
			continue
		}
		if rec.HasExit {
			e := rec.Exit
			r.Exit = &e
		}
		r.Starts, r.Queued, r.Start, r.End = rec.Starts, rec.Queued, rec.Start, rec.End
		if rec.Queued > 0 && (first == 0 || rec.Queued < first) {
			first = rec.Queued
		}
		switch {
		case !rec.Done || rec.Start > 0 && rec.End == 0:
			// Not finished, or deleted while running without an end.
			s.Unfinished++
			continue
		case rec.Start == 0:
			r.State = "not-run"
			s.NotRun++
			continue
		}
		if rec.End < rec.Start || rec.Start < rec.Queued {
			return nil, Summary{}, fmt.Errorf("replay: job %s: times out of order (qtime %d, stime %d, end %d)", j.ID, rec.Queued, rec.Start, rec.End)
		}
		r.State = "ran"
		s.Ran++
		if !rec.HasExit || rec.Exit != 0 {
			s.Failed++
		}
		if rec.Starts > 1 {
			s.RanTwice++
		}
		last = max(last, rec.End)
		r.Wait = rec.Start - rec.Queued
		r.Run = rec.End - rec.Start
		if rec.HasUsed {
			r.Run = rec.Used
		}
		r.Run = max(r.Run, 1)
		r.BSLD = model.BoundedSlowdown(float64(r.Wait), float64(r.Run))
		r.Nodes = slices.Clone(rec.Nodes)
		r.CH = chCost(c.Topology, r.Nodes, cost)
		sumWait += float64(r.Wait)
		sumBSLD += r.BSLD
		s.MaxWait = max(s.MaxWait, r.Wait)
		s.MaxBSLD = math.Max(s.MaxBSLD, r.BSLD)
		s.NodeSeconds += int64(len(r.Nodes)) * r.Run
		sumCHAll += float64(r.CH)
		if len(r.Nodes) >= 2 {
			s.MultiNode++
			sumCH += float64(r.CH)
		}
	}
	if s.Ran > 0 {
		s.MeanWait = sumWait / float64(s.Ran)
		s.MeanBSLD = sumBSLD / float64(s.Ran)
		s.MeanCHAll = sumCHAll / float64(s.Ran)
		s.Makespan = last - first
	}
	if s.MultiNode > 0 {
		s.MeanCH = sumCH / float64(s.MultiNode)
	}
	if s.Makespan > 0 && s.Nodes > 0 {
		s.Utilisation = float64(s.NodeSeconds) / (float64(s.Nodes) * float64(s.Makespan))
	}
	return out, s, nil
}

// chCost prices a node set on t; 0 when t is nil or a node is not in it.
func chCost(t *model.Topology, nodes []string, cost model.CostModel) int64 {
	if len(nodes) == 0 {
		return 0
	}
	if len(nodes) == 1 {
		return 1
	}
	if t == nil {
		return 0
	}
	ids := make([]int, len(nodes))
	for i, n := range nodes {
		id, ok := t.Lookup(n)
		if !ok {
			return 0
		}
		ids[i] = id
	}
	return cost.Cost(t, ids)
}
