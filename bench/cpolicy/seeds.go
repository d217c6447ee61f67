package cpolicy

import (
	"cmp"
	"math"
	"slices"
)

// A seed is a serial list schedule of a decision's model.
type seed struct {
	name  string
	slots []int // start slot per job of the model
	w     int64 // Σ ω_i s_i
}

// A rule orders a model's jobs for the serial schedule: key(i), smaller
// first, ties in window (arrival) order.
type rule struct {
	name string
	key  func(pl *plan, i int) float64
}

// rules are the seeds' priority orders: Smith's rule on area (ω_i over
// requested time × nodes, largest first), smallest first, FCFS and WFP3
// ((wait/request)³ × nodes, largest first). Shortest request first (and
// ω_i per request, the same order under bsld weights) and F1 often win
// the window's objective but lose online: as seeds beside these, on the
// RLScheduler benchmark's sequences (Lublin-1, HPC2N; seeds alone), they
// raised the mean bounded slowdown from 30.8 to 40.6 (Lublin-1) and left
// HPC2N at 51.4–52.0; each rule alone gave 28.4 / 55.6 (Smith on area),
// 47.5 / 65.6 (smallest), 258.8 / 84.0 (FCFS), 91.2 / 80.0 (WFP3), 49.3
// / 65.0 (shortest), 35.9 / 65.5 (F1; log10(request)·nodes +
// 870·log10(submit), smallest first).
var rules = []rule{
	{"wspt-area", func(pl *plan, i int) float64 {
		j := &pl.jobs[i]
		return float64(j.req) * float64(j.nodes) / float64(j.weight)
	}},
	{"smallest", func(pl *plan, i int) float64 { return float64(pl.jobs[i].nodes) }},
	{"fcfs", func(*plan, int) float64 { return 0 }},
	{"wfp3", func(pl *plan, i int) float64 {
		j := &pl.jobs[i]
		r := float64(pl.now-j.submit) / float64(max(j.req, 1))
		return -r * r * r * float64(j.nodes)
	}},
}

// bestSeed returns the serial schedule of the plan's jobs of least
// Σ ω_i s_i over rules (the first on ties), on p, the plan's profile. A rule's
// schedule is given up as soon as it cannot be less than the best so far
// (serial's cutoff): the answer is the one of building every schedule.
func bestSeed(pl *plan, p *profile) seed {
	var best seed
	order := make([]int, len(pl.jobs))
	keys := make([]float64, len(pl.jobs))
	var spare []int // a schedule's slots, reused when it lost
	for r, ru := range rules {
		for i := range order {
			order[i] = i
			keys[i] = ru.key(pl, i)
		}
		// Stable: ties in window order (pdqsort on the pair key, index).
		slices.SortFunc(order, func(a, b int) int {
			if c := cmp.Compare(keys[a], keys[b]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		cutoff := int64(math.MaxInt64)
		if r > 0 {
			cutoff = best.w
		}
		if spare == nil {
			spare = make([]int, len(pl.jobs))
		}
		w, ok := p.serial(pl, order, spare, cutoff)
		if ok && (r == 0 || w < best.w) {
			best, spare = seed{name: ru.name, slots: spare, w: w}, best.slots
		}
	}
	return best
}

// A profile is the capacity left by the running jobs at every slot of
// the serial horizon.
type profile struct {
	base []int
	free []int
	// baseMax[b] and blockMax[b] are the most of base and of free at a
	// slot of block b (slots b·block up to (b+1)·block): a job of more
	// nodes starts in no slot of the block.
	baseMax, blockMax []int
	est               int64 // Σ ω_i EST_i
}

func newProfile(pl *plan) *profile {
	total := 0
	for _, j := range pl.jobs {
		total += j.dur
	}
	base := pl.base(total)
	p := &profile{base: base, free: make([]int, len(base)), est: pl.lowerBound()}
	p.baseMax = make([]int, (len(base)+block-1)/block)
	p.blockMax = make([]int, len(p.baseMax))
	copy(p.free, base)
	for b := range p.baseMax {
		p.baseMax[b] = p.maxOf(b)
	}
	return p
}

// block is the number of slots a profile's block maximum covers.
const block = 16

// maxOf returns the most capacity left at a slot of block b of p.free.
func (p *profile) maxOf(b int) int {
	return slices.Max(p.free[b*block : min((b+1)*block, len(p.free))])
}

// serial writes to slots the serial schedule of the jobs in order — each
// at the earliest slot from its EST where it fits for its whole duration
// — and returns its Σ ω_i s_i; or ok false as soon as that sum is sure to
// be at least cutoff (the jobs placed so far at their slots, the others
// at their ESTs at the earliest), with slots part written.
func (p *profile) serial(pl *plan, order []int, slots []int, cutoff int64) (w int64, ok bool) {
	copy(p.free, p.base)
	copy(p.blockMax, p.baseMax)
	rest := p.est // Σ ω_i EST_i of the jobs not placed yet
	for _, i := range order {
		j := &pl.jobs[i]
		n := j.nodes
		s := j.est
		for k := 0; k < j.dur; {
			// The job cannot cover slot x: the next start to try is past
			// it, or past x's block when no slot of that is free enough.
			// (The last slot, after every running and placed job, has
			// the whole capacity: the search ends before it.)
			switch x := s + k; {
			case p.blockMax[x/block] < n:
				s, k = (x/block+1)*block, 0
			case p.free[x] < n:
				s, k = x+1, 0
			default:
				k++
			}
		}
		for k := 0; k < j.dur; k++ {
			p.free[s+k] -= n
		}
		for b := s / block; b <= (s+j.dur-1)/block; b++ {
			p.blockMax[b] = p.maxOf(b)
		}
		slots[i] = s
		w += j.weight * int64(s)
		rest -= j.weight * int64(j.est)
		if w+rest >= cutoff {
			return w, false
		}
	}
	return w, true
}
