package sat

import (
	"errors"
	"fmt"
	"strings"

	"github.com/optsched/optsched/encode/cnf"
	"github.com/optsched/optsched/encode/cp"
)

// SerialHorizon returns a start slot by which every job of m can have
// started: after the last running job's and reservation's end, the sum of
// all durations. Some optimal schedule (indeed every left-justified one)
// starts every job by then, as each start is the window time or the end
// of something that started earlier.
func SerialHorizon(m *cp.Model) int {
	h := 0
	for _, nd := range m.Nodes {
		for _, r := range nd.Running {
			h = max(h, r.EndSlot)
		}
		for _, rv := range nd.Reserved {
			h = max(h, int((rv[1]-m.Window.Time+m.Grid-1)/m.Grid))
		}
	}
	for _, j := range m.Jobs {
		h = max(h, j.EST)
	}
	for _, j := range m.Jobs {
		h += j.Dur
	}
	return h
}

// LowerBound returns LB = Σ_i ω_i·EST_i (plus κ·Σ_i cp.Model.CHMin(i)
// with the CH term), the least W any schedule can have.
func LowerBound(m *cp.Model) int64 {
	var lb int64
	for i, j := range m.Jobs {
		lb += j.Weight*int64(j.EST) + m.CHKappa*m.CHMin(i)
	}
	return lb
}

// Domains returns start-slot ranges [lo_i, hi_i] that hold every
// left-justified schedule with W ≤ bound: hi_i = EST_i + (bound − LB)/ω_i,
// at most the serial horizon. With bound < LB, every range is [EST, EST].
func Domains(m *cp.Model, bound int64) (lo, hi []int) {
	lb, serial := LowerBound(m), SerialHorizon(m)
	lo, hi = make([]int, len(m.Jobs)), make([]int, len(m.Jobs))
	for i, j := range m.Jobs {
		lo[i] = j.EST
		slack := max(0, bound-lb) / j.Weight
		hi[i] = int(min(int64(max(serial, j.EST)), int64(j.EST)+slack))
	}
	return lo, hi
}

// EncodeBounded writes to s the complete CNF of "a schedule of m's jobs
// with W = Σ_i ω_i·s_i ≤ bound": the base, every node block, and the
// objective bound as a unit clause, the starts restricted to the
// compressed time domain (cnf.Closure; the grid when the closure is over
// its work limit). It is satisfiable exactly when such a schedule exists
// (on the grid); enc.Decode reads a model back.
func EncodeBounded(m *cp.Model, bound int64, s cnf.Sink) (*cnf.Encoder, error) {
	return EncodeBoundedGrid(m, bound, s, false)
}

// EncodeBoundedGrid is EncodeBounded, on every slot of the grid when grid
// is true.
func EncodeBoundedGrid(m *cp.Model, bound int64, s cnf.Sink, grid bool) (*cnf.Encoder, error) {
	lo, hi := Domains(m, bound)
	enc, err := cnf.New(m, s, lo, hi)
	if err != nil {
		return nil, err
	}
	cands, err := cnf.Closure(m, lo, hi, nil, closureWork)
	switch {
	case grid:
	case err == nil:
		if err := enc.Compress(cands); err != nil {
			return nil, err
		}
	case !errors.Is(err, cnf.ErrClosureTooLarge):
		return nil, err
	}
	enc.Base()
	enc.EncodeAll()
	root, err := enc.AtMost(bound - LowerBound(m))
	if err != nil {
		return nil, err
	}
	s.Add([]cnf.Lit{root})
	return enc, nil
}

// Comments describes an encoding for the DIMACS header: what the CNF
// asks and which variables hold each job's start and units.
func Comments(m *cp.Model, enc *cnf.Encoder, bound int64) []string {
	w := m.Window
	out := []string{
		"optsched CP/SAT encoding of a time-and-resource window (Bridi et al., IEEE TPDS 2016; see encode/cnf)",
		fmt.Sprintf("window time %d, grid %d s: slot s is time %d + s*%d", w.Time, m.Grid, w.Time, m.Grid),
		fmt.Sprintf("satisfiable iff some schedule has W = sum_i w_i*s_i <= %d (LB %d)", bound, LowerBound(m)),
	}
	if m.ExactWeights {
		out = append(out, fmt.Sprintf("that is, weighted queue time (Eq. 2) <= %.9g", m.ObjectiveOfWeighted(float64(bound))))
	}
	for i, j := range m.Jobs {
		if c := enc.Candidates(i); enc.Compressed() {
			out = append(out, fmt.Sprintf("job %s weight %d start slots %s: [s <= s'] for s' = %s is %s",
				j.ID, j.Weight, ints(c), ints(c[:len(c)-1]), litRange(enc, func(k int) cnf.Lit { return enc.Start(i, c[k]) }, 0, len(c)-1)))
		} else {
			out = append(out, fmt.Sprintf("job %s weight %d start slots [%d, %d]: [s <= s'] for s' = %d.. is %s",
				j.ID, j.Weight, enc.Lo[i], enc.Hi[i], enc.Lo[i], litRange(enc, func(s int) cnf.Lit { return enc.Start(i, s) }, enc.Lo[i], enc.Hi[i])))
		}
		for o, opt := range j.Options {
			out = append(out, fmt.Sprintf("job %s units on %s: [units >= k] for k = 1.. is %s", j.ID,
				w.Topology.Name(m.Nodes[opt.Node].ID), litRange(enc, func(k int) cnf.Lit { return enc.Units(i, o, k) }, 1, opt.MaxUnits+1)))
		}
	}
	return out
}

// ints writes a list of slots as {a b c}.
func ints(v []int) string {
	var b strings.Builder
	b.WriteByte('{')
	for k, x := range v {
		if k > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, x)
	}
	b.WriteByte('}')
	return b.String()
}

// litRange writes the literals f(a), …, f(b−1) compactly.
func litRange(enc *cnf.Encoder, f func(int) cnf.Lit, a, b int) string {
	if a >= b {
		return "none"
	}
	first, last := f(a), f(b-1)
	if int(last-first) == b-1-a {
		return fmt.Sprintf("vars %d-%d", first, last)
	}
	s := ""
	for k := a; k < b; k++ {
		s += fmt.Sprintf(" %d", f(k))
	}
	return "lits" + s
}
