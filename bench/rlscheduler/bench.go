package rlscheduler

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"time"
)

// Config is one run of the benchmark: one trace, one mode.
type Config struct {
	Workload *Workload
	// Trace names the trace in the output (its path); Paper is the trace
	// whose published row is printed beside ours ("lublin-1", "hpc2n"),
	// "" for none.
	Trace, Paper string
	// DropFirst is what the workload was loaded with, for the output.
	DropFirst int
	// Starts and Len are the sequences (default Starts and
	// SequenceLength).
	Starts []int
	Len    int
	// Backfill selects their backfilling for the published policies.
	Backfill bool
	// Policies are the columns: published policies (Published) replayed
	// by the published loop, and deciders (Deciders' names, "easy"
	// built in) simulated by events.
	Policies []string
	// Deciders builds the event-driven policies by name, one per
	// sequence; "easy" needs no entry.
	Deciders map[string]func() Decider
	// Choosers builds the learned policies by name, one per sequence
	// (given, so that a sampling policy can seed from it):
	// each picks the heads of the published loop (ReplayChooser, no
	// backfilling whatever Backfill says).
	Choosers map[string]func(Sequence) Chooser
	// Runners builds the policies simulated elsewhere by name (the
	// learned designs run in bench/sim on placed nodes, every allocation
	// through model.Check): each returns its schedule of the sequence,
	// which Run verifies on the protocol's counter and scores like any
	// other. Their protocol is "simulated" (event-driven: they may start
	// any job that fits, whatever Backfill says).
	Runners map[string]func(context.Context, Sequence) (*Schedule, error)
	// Notes describes a column in the output (for a learned policy:
	// which weights, trained on what), by name.
	Notes map[string]string
	// Bound, when set, proves a lower bound on the sum of bounded
	// slowdowns of a sequence's jobs (offline).
	Bound func(ctx context.Context, seq Sequence) (BoundValue, error)
	// Parallel runs this many sequences at once (0: GOMAXPROCS).
	Parallel int
	// Progress, when set, is called after each sequence of each column.
	Progress func(column string, done, total int)
}

// A BoundValue is a proven lower bound on a sequence's sum of bounded
// slowdowns.
type BoundValue struct {
	Sum float64
	// Upper is the sum of a feasible schedule's bounded slowdowns (0:
	// none), so the optimum lies in [Sum, Upper].
	Upper float64
	// Exact reports that Sum is the proven optimum.
	Exact  bool
	starts []int64
}

// Result is a benchmark run's outcome; its JSON field names are stable.
type Result struct {
	Trace        string         `json:"trace"`
	Paper        string         `json:"paper,omitempty"`
	Backfill     bool           `json:"backfill"`
	Nodes        int64          `json:"nodes"`
	ProcsPerNode float64        `json:"procs_per_node"`
	DropFirst    int            `json:"drop_first"`
	Sequences    []SequenceInfo `json:"sequences"`
	Policies     []PolicyResult `json:"policies"`
	Bound        *BoundResult   `json:"bound,omitempty"`
	// PublishedRL is the learned policy's published figure of the row.
	PublishedRL *float64 `json:"published_rl,omitempty"`
}

// SequenceInfo describes a sequence.
type SequenceInfo struct {
	Start int `json:"start"`
	Jobs  int `json:"jobs"`
	// Capped counts its jobs wider than the cluster, run on all of it.
	Capped int `json:"capped,omitempty"`
}

// PolicyResult is one column.
type PolicyResult struct {
	Name string `json:"name"`
	// Protocol is "published" (the published decision loop, with their
	// backfilling when the run's backfill is set), "event-driven"
	// (Simulate), "published-loop-chooser" (a learned policy choosing
	// the heads of the published loop, no backfilling: ReplayChooser) or
	// "simulated" (a Runner's schedule, made elsewhere).
	Protocol string `json:"protocol"`
	// Mean is the mean over the sequences of each sequence's mean
	// bounded slowdown; PerSequence those, in Starts order.
	Mean        float64   `json:"mean_bsld"`
	PerSequence []float64 `json:"per_sequence"`
	// Published is the paper's figure for the cell, when it has one (for
	// a learned chooser, the published RL figure of the row without
	// backfilling).
	Published *float64 `json:"published,omitempty"`
	// Decisions sums the counts of a Decider that keeps them (Counter).
	Decisions *DecisionCounts `json:"decisions,omitempty"`
	// Gap is the mean over sequences of (value − bound)/value.
	Gap       *float64 `json:"gap_to_bound,omitempty"`
	ElapsedMS float64  `json:"elapsed_ms"`
	// Note is Config.Notes' description of the column (its weights).
	Note string `json:"note,omitempty"`
}

// DecisionCounts are what a Counter counts over a run: its decisions,
// those where a solver searched, and those where the search improved on
// the best list schedule.
type DecisionCounts struct {
	Decisions int `json:"decisions"`
	Searched  int `json:"searched"`
	Improved  int `json:"improved"`
}

// A Counter is a Decider that counts its decisions.
type Counter interface {
	Counts() DecisionCounts
}

// BoundResult is the offline lower bound of every sequence, as a mean
// bounded slowdown.
type BoundResult struct {
	Mean        float64   `json:"mean_bsld"`
	PerSequence []float64 `json:"per_sequence"`
	// Exact counts the sequences whose bound is the proven optimum.
	Exact int `json:"exact"`
	// Upper is the mean, and UpperPerSequence the per-sequence values,
	// of the best offline schedule found (it knows the future too): the
	// offline optimum lies between the bound and it.
	Upper            float64   `json:"offline_schedule_mean_bsld"`
	UpperPerSequence []float64 `json:"offline_schedule_per_sequence"`
	// Offline: the bound knows every arrival and real run time in
	// advance; no online policy can reach it in general.
	Offline   bool    `json:"offline"`
	ElapsedMS float64 `json:"elapsed_ms"`
}

// Run runs the benchmark.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Workload == nil {
		return nil, fmt.Errorf("rlscheduler: no workload")
	}
	if len(cfg.Starts) == 0 {
		cfg.Starts = Starts
	}
	if cfg.Len == 0 {
		cfg.Len = SequenceLength
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = runtime.GOMAXPROCS(0)
	}
	seqs := make([]Sequence, len(cfg.Starts))
	res := &Result{
		Trace: cfg.Trace, Paper: cfg.Paper, Backfill: cfg.Backfill, Nodes: cfg.Workload.MaxNodes,
		ProcsPerNode: cfg.Workload.PerNode(), DropFirst: cfg.DropFirst,
	}
	for i, st := range cfg.Starts {
		seqs[i] = Sequence{cfg.Workload, st, cfg.Len}
		if err := seqs[i].Check(); err != nil {
			return nil, fmt.Errorf("sequence %d: %w", i+1, err)
		}
		_, capped := seqs[i].nodes()
		res.Sequences = append(res.Sequences, SequenceInfo{Start: st, Jobs: cfg.Len, Capped: capped})
	}
	row := PaperRow(cfg.Paper, cfg.Backfill)
	if row != nil {
		rl := row.Value["rl"]
		res.PublishedRL = &rl
	}
	for _, name := range cfg.Policies {
		var (
			one    func(ctx context.Context, seq Sequence) (*Schedule, error)
			counts *DecisionCounts
			mu     sync.Mutex
		)
		protocol := "published"
		switch {
		case keys[name] != nil:
			one = func(ctx context.Context, seq Sequence) (*Schedule, error) {
				return Replay(ctx, seq, name, cfg.Backfill)
			}
		case cfg.Choosers[name] != nil:
			protocol = "published-loop-chooser"
			mk := cfg.Choosers[name]
			one = func(ctx context.Context, seq Sequence) (*Schedule, error) {
				return ReplayChooser(ctx, seq, mk(seq))
			}
		case cfg.Runners[name] != nil:
			protocol = "simulated"
			one = cfg.Runners[name]
		case name == "easy" || cfg.Deciders[name] != nil:
			protocol = "event-driven"
			mk := cfg.Deciders[name]
			if name == "easy" && mk == nil {
				mk = func() Decider { return EASY{} }
			}
			one = func(ctx context.Context, seq Sequence) (*Schedule, error) {
				d := mk()
				s, err := Simulate(ctx, seq, d)
				if c, ok := d.(Counter); ok && err == nil {
					mu.Lock()
					if counts == nil {
						counts = &DecisionCounts{}
					}
					n := c.Counts()
					counts.Decisions += n.Decisions
					counts.Searched += n.Searched
					counts.Improved += n.Improved
					mu.Unlock()
				}
				return s, err
			}
		default:
			return nil, fmt.Errorf("rlscheduler: no policy %q (have %v, easy and %v)", name, Published, slices.Sorted(maps.Keys(cfg.Deciders)))
		}
		t0 := time.Now()
		vals, err := each(ctx, seqs, cfg.Parallel, func(ctx context.Context, _ int, seq Sequence) (float64, error) {
			s, err := one(ctx, seq)
			if err != nil {
				return 0, err
			}
			if err := s.Verify(); err != nil {
				return 0, fmt.Errorf("%s: %w", name, err)
			}
			return s.Mean(), nil
		}, func(done int) {
			if cfg.Progress != nil {
				cfg.Progress(name, done, len(seqs))
			}
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		p := PolicyResult{Name: name, Protocol: protocol, Mean: mean(vals), PerSequence: vals, ElapsedMS: ms(time.Since(t0)), Decisions: counts, Note: cfg.Notes[name]}
		if row != nil {
			if v, ok := row.Value[name]; ok && protocol == "published" {
				p.Published = &v
			}
			// A learned chooser runs the loop without backfilling: beside
			// it, the published learned policy's figure of that row.
			if v, ok := row.Value["rl"]; ok && protocol == "published-loop-chooser" && !cfg.Backfill {
				p.Published = &v
			}
		}
		res.Policies = append(res.Policies, p)
	}
	if cfg.Bound != nil {
		t0 := time.Now()
		exact := make([]bool, len(seqs))
		upper := make([]float64, len(seqs))
		vals, err := each(ctx, seqs, cfg.Parallel, func(ctx context.Context, i int, seq Sequence) (float64, error) {
			b, err := cfg.Bound(ctx, seq)
			if err != nil {
				return 0, err
			}
			exact[i] = b.Exact
			upper[i] = b.Upper / float64(seq.Len)
			return b.Sum / float64(seq.Len), nil
		}, func(done int) {
			if cfg.Progress != nil {
				cfg.Progress("bound", done, len(seqs))
			}
		})
		if err != nil {
			return nil, fmt.Errorf("bound: %w", err)
		}
		b := &BoundResult{Mean: mean(vals), PerSequence: vals, Offline: true, ElapsedMS: ms(time.Since(t0)), Upper: mean(upper), UpperPerSequence: upper}
		for _, e := range exact {
			if e {
				b.Exact++
			}
		}
		res.Bound = b
		for i := range res.Policies {
			p := &res.Policies[i]
			var g float64
			for k, v := range p.PerSequence {
				if vals[k] > v*(1+1e-9) {
					return nil, fmt.Errorf("rlscheduler: the bound %.6f of sequence %d is above %s's %.6f", vals[k], k+1, p.Name, v)
				}
				g += (v - vals[k]) / v
			}
			g /= float64(len(vals))
			p.Gap = &g
		}
	}
	return res, nil
}

// each runs f on every sequence, parallel at once, in order of results.
func each(ctx context.Context, seqs []Sequence, parallel int, f func(context.Context, int, Sequence) (float64, error), progress func(done int)) ([]float64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([]float64, len(seqs))
	errs := make([]error, len(seqs))
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
		sem  = make(chan struct{}, parallel)
	)
	for i := range seqs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], errs[i] = f(ctx, i, seqs[i])
			if errs[i] != nil {
				cancel()
			}
			mu.Lock()
			done++
			progress(done)
			mu.Unlock()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("sequence %d (start %d): %w", i+1, seqs[i].Start, err)
		}
	}
	return out, nil
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
