package limits

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// The promises the sweep checks.
const (
	// DeadlineSlackMS is how far past its time limit a solve may answer,
	// measured inside the process: 50 ms.
	DeadlineSlackMS = 50.0
	// MemoryBoundKiB is the peak RSS a solve of a bounded class (at most
	// 10,000 nodes and 200 jobs) must stay under: 1 GiB.
	MemoryBoundKiB = int64(1 << 20)
)

// A Cell summarises the runs of one solver on one class at one limit.
type Cell struct {
	Class   string   `json:"class"`
	Solver  string   `json:"solver"`
	Limit   Duration `json:"limit"`
	Bounded bool     `json:"memory_bound"`
	// Runs counts the runs; Answered those with an answer (any status,
	// unknown included), over which the times are taken.
	Runs     int `json:"runs"`
	Answered int `json:"answered"`
	// WorstOvershootMS and P99OvershootMS are the largest and the 99th
	// percentile (nearest rank) of elapsed_ms − limit over the answers;
	// MedianElapsedMS the median elapsed_ms. Zero without answers.
	WorstOvershootMS float64 `json:"worst_overshoot_ms"`
	P99OvershootMS   float64 `json:"p99_overshoot_ms"`
	MedianElapsedMS  float64 `json:"median_elapsed_ms"`
	// WorstWallMS is the longest process wall time over every run,
	// failures included.
	WorstWallMS float64 `json:"worst_wall_ms"`
	// PeakRSSKiB is the largest peak RSS over every run, nil when none
	// was measured.
	PeakRSSKiB *int64 `json:"peak_rss_kib"`
	// RSSFloorKiB is the largest floor of the runs' RSS measurements
	// (Run.RSSFloorKiB), nil when unknown: a PeakRSSKiB at or below it
	// says only that the solve peaked no higher.
	RSSFloorKiB *int64 `json:"rss_floor_kib,omitempty"`
	// Statuses counts the answers by status.
	Statuses map[string]int `json:"statuses"`
	// Failures are the runs that failed, as "window K: reason".
	Failures []string `json:"failures,omitempty"`
	// Unavailable, when set, says why the solver did not run.
	Unavailable string `json:"unavailable,omitempty"`
}

// Where names the cell: class/solver@limit.
func (c *Cell) Where() string { return fmt.Sprintf("%s/%s@%v", c.Class, c.Solver, c.Limit) }

// OverDeadline reports whether an answer of the cell came more than
// DeadlineSlackMS past its limit.
func (c *Cell) OverDeadline() bool { return c.Answered > 0 && c.WorstOvershootMS > DeadlineSlackMS }

// OverMemory reports whether a run of a bounded cell peaked at
// MemoryBoundKiB or more.
func (c *Cell) OverMemory() bool {
	return c.Bounded && c.PeakRSSKiB != nil && *c.PeakRSSKiB >= MemoryBoundKiB
}

// Summarise reduces runs to cells, one per (class, solver, limit), in
// the order the runs came.
func Summarise(runs []Run) []Cell {
	type key struct {
		class, solver string
		limit         Duration
	}
	index := map[key]int{}
	var cells []Cell
	var over, elapsed [][]float64
	for i := range runs {
		r := &runs[i]
		k := key{r.Class, r.Solver, r.Limit}
		j, ok := index[k]
		if !ok {
			j = len(cells)
			index[k] = j
			cells = append(cells, Cell{Class: r.Class, Solver: r.Solver, Limit: r.Limit, Bounded: r.Bounded, Statuses: map[string]int{}})
			over, elapsed = append(over, nil), append(elapsed, nil)
		}
		c := &cells[j]
		c.Runs++
		switch {
		case r.Unavailable != "":
			c.Unavailable = r.Unavailable
			continue
		case r.Failure != "":
			c.Failures = append(c.Failures, fmt.Sprintf("window %d: %s", r.Window, r.Failure))
		case r.Answered():
			c.Answered++
			c.Statuses[r.Status]++
			over[j] = append(over[j], r.OvershootMS())
			elapsed[j] = append(elapsed[j], r.ElapsedMS)
		}
		c.WorstWallMS = max(c.WorstWallMS, r.WallMS)
		if r.MaxRSSKiB != nil && (c.PeakRSSKiB == nil || *r.MaxRSSKiB > *c.PeakRSSKiB) {
			v := *r.MaxRSSKiB
			c.PeakRSSKiB = &v
		}
		if r.RSSFloorKiB != nil && (c.RSSFloorKiB == nil || *r.RSSFloorKiB > *c.RSSFloorKiB) {
			v := *r.RSSFloorKiB
			c.RSSFloorKiB = &v
		}
	}
	for j := range cells {
		if len(over[j]) == 0 {
			continue
		}
		slices.Sort(over[j])
		slices.Sort(elapsed[j])
		cells[j].WorstOvershootMS = over[j][len(over[j])-1]
		cells[j].P99OvershootMS = quantile(over[j], 0.99)
		cells[j].MedianElapsedMS = quantile(elapsed[j], 0.5)
	}
	return cells
}

// quantile returns the q-quantile of sorted values by nearest rank (the
// smallest value with at least a share q of the values at or below it).
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// A Verdict judges the cells against the promises.
type Verdict struct {
	// WorstOvershootMS is the largest overshoot of any answer, at
	// WorstOvershootAt (a cell's Where); empty without answers.
	WorstOvershootMS float64 `json:"worst_overshoot_ms"`
	WorstOvershootAt string  `json:"worst_overshoot_at,omitempty"`
	// OverDeadline are the cells with an answer more than 50 ms late.
	OverDeadline []string `json:"over_deadline"`
	// WorstRSSKiB is the largest peak RSS over the bounded cells, at
	// WorstRSSAt; nil when none was measured.
	WorstRSSKiB *int64 `json:"worst_rss_kib"`
	WorstRSSAt  string `json:"worst_rss_at,omitempty"`
	// OverMemory are the bounded cells that peaked at 1 GiB or more.
	OverMemory []string `json:"over_memory"`
	// UnboundedRSSKiB is the largest peak RSS over the cells outside the
	// promise (the million class), at UnboundedRSSAt.
	UnboundedRSSKiB *int64 `json:"unbounded_rss_kib,omitempty"`
	UnboundedRSSAt  string `json:"unbounded_rss_at,omitempty"`
	// Failures counts the failed runs, in FailedCells.
	Failures    int      `json:"failures"`
	FailedCells []string `json:"failed_cells,omitempty"`
	// Unavailable lists the solvers this optsched lacks.
	Unavailable []string `json:"unavailable,omitempty"`
	// OK holds when no cell is over its deadline or the memory bound and
	// no run failed.
	OK bool `json:"ok"`
}

// Judge returns the verdict on cells.
func Judge(cells []Cell) Verdict {
	v := Verdict{OverDeadline: []string{}, OverMemory: []string{}}
	first := true
	for i := range cells {
		c := &cells[i]
		if c.Unavailable != "" && !slices.Contains(v.Unavailable, c.Solver) {
			v.Unavailable = append(v.Unavailable, c.Solver)
		}
		if c.Answered > 0 && (first || c.WorstOvershootMS > v.WorstOvershootMS) {
			v.WorstOvershootMS, v.WorstOvershootAt, first = c.WorstOvershootMS, c.Where(), false
		}
		if c.OverDeadline() {
			v.OverDeadline = append(v.OverDeadline, c.Where())
		}
		if c.PeakRSSKiB != nil {
			worst, at := &v.WorstRSSKiB, &v.WorstRSSAt
			if !c.Bounded {
				worst, at = &v.UnboundedRSSKiB, &v.UnboundedRSSAt
			}
			if *worst == nil || *c.PeakRSSKiB > **worst {
				p := *c.PeakRSSKiB
				*worst, *at = &p, c.Where()
			}
		}
		if c.OverMemory() {
			v.OverMemory = append(v.OverMemory, c.Where())
		}
		if len(c.Failures) > 0 {
			v.Failures += len(c.Failures)
			v.FailedCells = append(v.FailedCells, c.Where())
		}
	}
	v.OK = len(v.OverDeadline) == 0 && len(v.OverMemory) == 0 && v.Failures == 0
	return v
}

// A Report is the outcome of a sweep: its settings, the cells, the
// verdict and, when kept, every run (`optsched bench limits -o json`
// prints it without the runs; --json FILE writes it with them).
type Report struct {
	Benchmark string   `json:"benchmark"`
	Exe       string   `json:"exe"`
	Seed      uint64   `json:"seed"`
	Windows   int      `json:"windows"`
	Limits    []string `json:"limits"`
	Classes   []string `json:"classes"`
	Solvers   []string `json:"solvers"`
	// Seconds is the wall time of the whole sweep.
	Seconds float64 `json:"seconds"`
	Cells   []Cell  `json:"cells"`
	Verdict Verdict `json:"verdict"`
	Runs    []Run   `json:"runs,omitempty"`
}

// NewReport summarises runs made with cfg in the given wall time.
func NewReport(cfg *Config, runs []Run, took time.Duration) Report {
	r := Report{Benchmark: "limits", Exe: cfg.Exe, Seed: cfg.Seed, Windows: cfg.Windows, Seconds: took.Seconds(), Runs: runs}
	for _, l := range cfg.Limits {
		r.Limits = append(r.Limits, l.String())
	}
	for _, c := range cfg.Classes {
		r.Classes = append(r.Classes, c.Name)
	}
	for _, s := range cfg.Solvers {
		if !slices.Contains(r.Solvers, s.Name) {
			r.Solvers = append(r.Solvers, s.Name)
		}
	}
	r.Cells = Summarise(runs)
	r.Verdict = Judge(r.Cells)
	return r
}

// statusOrder is the order statuses are listed in.
var statusOrder = []string{"optimal", "feasible", "fallback", "infeasible", "unknown"}

// StatusText lists the statuses counted, known ones first:
// "2 optimal, 1 fallback".
func StatusText(counts map[string]int) string {
	var parts []string
	for _, s := range statusOrder {
		if n := counts[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	var other []string
	for s, n := range counts {
		if n > 0 && !slices.Contains(statusOrder, s) {
			other = append(other, fmt.Sprintf("%d %s", n, s))
		}
	}
	slices.Sort(other)
	parts = append(parts, other...)
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}

// mib writes KiB as MiB.
func mib(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }
