// Package scas builds the M_SCAS 0-1 program of [Lan23] §IV-A for a window
// under the static continuity strategy: every job occupies one block
// D(i, n_j) of consecutive positions of the idle sequence Q (wrapping to
// the head of Q), blocks do not share nodes, and the objective is the total
// CH cost. It produces a neutral encode.Program and decodes 0/1 vectors
// back into allocations; it knows no solver.
//
// Two formulations:
//
//	Paper (as in the paper and its published code, plus the node-capacity
//	rows the text omits):
//	  min  Σ_j Σ_i c(D(i,n_j))·y[j,i]
//	  (3)  Σ_i y[j,i] = 1                 every job starts once
//	  (4)  y[j,i] ≤ x[j,k]   k ∈ D(i,n_j)  a start takes its whole block
//	  (5)  Σ_k x[j,k] = n_j               and no other node
//	  cap  Σ_j x[j,k] ≤ 1                 a node serves one job
//
//	Strong (default): jobs of equal size r share one family of starts,
//	  min  Σ_r Σ_i c(D(i,r))·y[r,i]
//	  cnt  Σ_i y[r,i] = ε_r               ε_r jobs of size r
//	  cov  Σ_{(r,i): k ∈ D(i,r)} y[r,i] ≤ 1   a node serves one block
//	fewer variables, no symmetry between equal jobs, and a tighter LP.
//
// [Lan23]: Z. Lan et al., IEEE CLUSTER 2023.
package scas

import (
	"fmt"
	"strings"

	"github.com/optsched/optsched/encode"
	"github.com/optsched/optsched/model"
)

// Formulation selects the form of the program.
type Formulation int

const (
	// Strong groups equal-sized jobs and uses coverage rows.
	Strong Formulation = iota
	// Paper is the program of [Lan23] §IV-A with node-capacity rows.
	Paper
)

// String returns "strong" or "paper".
func (f Formulation) String() string {
	if f == Paper {
		return "paper"
	}
	return "strong"
}

// ParseFormulation parses "strong" or "paper".
func ParseFormulation(s string) (Formulation, error) {
	switch strings.TrimSpace(s) {
	case "strong":
		return Strong, nil
	case "paper":
		return Paper, nil
	}
	return 0, fmt.Errorf("unknown formulation %q (want strong or paper)", s)
}

// An Encoding is a window's M_SCAS program with what it takes to decode it.
type Encoding struct {
	Program     encode.Program
	Formulation Formulation
	Blocks      *encode.Blocks
	// starts[v] describes start variable v: size index and position;
	// -1 size for x variables.
	start []startVar
}

type startVar struct {
	size, pos int // size index into Blocks.Sizes (-1: not a start variable)
}

// Build encodes the problem of placing jobs (indices into w.Jobs) on w's
// idle sequence.
func Build(w *model.Window, jobs []int, f Formulation) (*Encoding, error) {
	b, err := encode.NewBlocks(w, jobs)
	if err != nil {
		return nil, err
	}
	e := &Encoding{Formulation: f, Blocks: b}
	e.Program.Name = "optsched_scas_" + f.String()
	nq := len(b.Q)
	if f == Strong {
		ys := make([][]int, len(b.Sizes))
		for s, r := range b.Sizes {
			ys[s] = make([]int, nq)
			for i := 0; i < nq; i++ {
				ys[s][i] = e.addStart(fmt.Sprintf("y_r%d_%d", r, i), float64(b.Cost[s][i]), s, i)
			}
			e.Program.AddRow(fmt.Sprintf("cnt_r%d", r), ys[s], encode.Repeat(nq, 1), encode.EQ, float64(len(b.Jobs[s])))
		}
		for k := 0; k < nq; k++ {
			var cols []int
			for s, r := range b.Sizes {
				for d := 0; d < r; d++ {
					cols = append(cols, ys[s][(k-d+nq)%nq])
				}
			}
			e.Program.AddRow(fmt.Sprintf("cov_%d", k), cols, encode.Repeat(len(cols), 1), encode.LE, 1)
		}
		return e, nil
	}
	// Paper form: one y family and one x family per job.
	var xs [][]int
	for s, r := range b.Sizes {
		for range b.Jobs[s] {
			jx := len(xs)
			y := make([]int, nq)
			for i := 0; i < nq; i++ {
				y[i] = e.addStart(fmt.Sprintf("y_%d_%d", jx, i), float64(b.Cost[s][i]), s, i)
			}
			x := make([]int, nq)
			for k := 0; k < nq; k++ {
				x[k] = e.addVar(fmt.Sprintf("x_%d_%d", jx, k))
			}
			xs = append(xs, x)
			e.Program.AddRow(fmt.Sprintf("start_%d", jx), y, encode.Repeat(nq, 1), encode.EQ, 1)
			for i := 0; i < nq; i++ {
				for d := 0; d < r; d++ {
					k := (i + d) % nq
					e.Program.AddRow(fmt.Sprintf("link_%d_%d_%d", jx, i, k), []int{y[i], x[k]}, []float64{1, -1}, encode.LE, 0)
				}
			}
			e.Program.AddRow(fmt.Sprintf("size_%d", jx), x, encode.Repeat(nq, 1), encode.EQ, float64(r))
		}
	}
	for k := 0; k < nq; k++ {
		cols := make([]int, len(xs))
		for jx := range xs {
			cols[jx] = xs[jx][k]
		}
		e.Program.AddRow(fmt.Sprintf("cap_%d", k), cols, encode.Repeat(len(cols), 1), encode.LE, 1)
	}
	return e, nil
}

func (e *Encoding) addStart(name string, cost float64, size, pos int) int {
	e.start = append(e.start, startVar{size, pos})
	return e.Program.AddVar(name, cost)
}

func (e *Encoding) addVar(name string) int {
	e.start = append(e.start, startVar{-1, -1})
	return e.Program.AddVar(name, 0)
}

// Decode maps a 0/1 solution vector (values above 0.5 count as 1) to
// allocations: the start variables set to 1 give each job's block. It
// returns an error if x has the wrong length or a size gets the wrong
// number of starts.
func (e *Encoding) Decode(x []float64) ([]model.Allocation, error) {
	if len(x) != e.Program.NumVars() {
		return nil, fmt.Errorf("scas: solution has %d values for %d variables", len(x), e.Program.NumVars())
	}
	starts := make([][]int, len(e.Blocks.Sizes))
	for v, sv := range e.start {
		if sv.size >= 0 && x[v] > 0.5 {
			starts[sv.size] = append(starts[sv.size], sv.pos)
		}
	}
	return e.Blocks.Allocate(starts)
}

// Size returns the variables, rows and nonzero coefficients of the
// program Build would write for jobs (indices into w.Jobs) in form f,
// without building it: Build's memory and the size of a written LP or
// MPS file grow with the nonzeros (about 16 bytes of memory and 25 of
// MPS text each). Jobs out of range count as nothing (Build refuses them).
func Size(w *model.Window, jobs []int, f Formulation) (vars, rows, nonzeros int64) {
	nq := int64(len(w.Idle))
	sizes := map[int]bool{}
	var sumR, nj int64
	for _, j := range jobs {
		if j < 0 || j >= len(w.Jobs) {
			continue
		}
		r := int64(w.Jobs[j].Nodes)
		nj++
		sumR += r
		sizes[int(r)] = true
	}
	if f == Strong {
		var sumSizes int64
		for r := range sizes {
			sumSizes += int64(r)
		}
		s := int64(len(sizes))
		return s * nq, s + nq, s*nq + nq*sumSizes
	}
	// Per job: nq starts, nq cells, a start row, nq·r links and a size
	// row; and nq capacity rows over all jobs.
	return 2 * nj * nq, 2*nj + nq*sumR + nq, nj*nq + 2*nq*sumR + nj*nq + nq*nj
}
