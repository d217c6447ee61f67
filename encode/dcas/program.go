package dcas

import (
	"context"
	"fmt"
	"math/bits"

	"github.com/optsched/optsched/encode"
	"github.com/optsched/optsched/model"
)

// MaxVars bounds the variables Build writes (Σ_j Σ_v min(n_j, idle under
// v) plus the cost bits), so that exporting a huge window fails with a
// clear error instead of exhausting memory: about 0.5 GB of program.
const MaxVars = 5_000_000

// An Encoding is the count program of a window (see the package doc)
// with what Decode needs.
type Encoding struct {
	Program encode.Program
	Tree    *Tree
	// Jobs are the window indices of the encoded jobs.
	Jobs []int
	// z[i][v] lists the variables z[job i, v, k] for k = 1, 2, …; nil
	// where the job cannot use v.
	z [][][]int
}

// Build writes the count program of placing w's jobs (window indices) on
// its idle nodes. It fails when the jobs need more nodes than are idle, a
// job asks for fewer than one node, or the program would exceed MaxVars;
// it stops with ctx's error when ctx ends first.
func Build(ctx context.Context, w *model.Window, jobs []int) (*Encoding, error) {
	t, err := NewTree(ctx, w)
	if err != nil {
		return nil, err
	}
	need := 0
	for _, j := range jobs {
		if j < 0 || j >= len(w.Jobs) {
			return nil, fmt.Errorf("dcas: job index %d is not a job of the window", j)
		}
		if w.Jobs[j].Nodes < 1 {
			return nil, fmt.Errorf("dcas: job %s asks for %d nodes", w.Jobs[j].ID, w.Jobs[j].Nodes)
		}
		need += w.Jobs[j].Nodes
	}
	if need > t.Cap[0] {
		return nil, fmt.Errorf("dcas: the jobs need %d nodes and %d are idle", need, t.Cap[0])
	}
	nv := 0
	for _, j := range jobs {
		n := w.Jobs[j].Nodes
		for v := range t.Cap {
			if t.Counted[v] {
				nv += min(n, t.Cap[v])
			}
		}
		nv += costBits(w.Cost, t, n)
	}
	if nv > MaxVars {
		return nil, fmt.Errorf("dcas: the count program of %d jobs on %d idle nodes needs %d variables, above the limit of %d",
			len(jobs), t.Cap[0], nv, MaxVars)
	}
	e := &Encoding{Tree: t, Jobs: jobs, z: make([][][]int, len(jobs))}
	p := &e.Program
	p.Name = "optsched_dcas_" + w.Cost.Kind.String()
	p.VarNames = make([]string, 0, nv)
	p.Obj = make([]float64, 0, nv)
	leafRows := make([][]int, t.NumVertices())
	for i, j := range jobs {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		n := w.Jobs[j].Nodes
		e.z[i] = make([][]int, t.NumVertices())
		// X[i][v] as a list of columns with coefficient 1.
		for v := range t.Cap {
			if !t.Counted[v] {
				continue // the virtual top: the demand row sums its children
			}
			k := min(n, t.Cap[v])
			zs := make([]int, k)
			for q := range zs {
				zs[q] = p.AddVar(fmt.Sprintf("z_%d_%d_%d", i, v, q+1), 0)
			}
			e.z[i][v] = zs
			for q := 1; q < k; q++ {
				p.AddRow(fmt.Sprintf("mono_%d_%d_%d", i, v, q+1), []int{zs[q], zs[q-1]}, []float64{1, -1}, encode.LE, 0)
			}
			if t.IsLeaf(v) {
				leafRows[v] = append(leafRows[v], zs...)
			}
		}
		// Demand at the top, flow below.
		if t.Counted[0] {
			p.AddRow(fmt.Sprintf("dem_%d", i), e.z[i][0], encode.Repeat(len(e.z[i][0]), 1), encode.EQ, float64(n))
		} else {
			var cols []int
			for _, c := range t.Children[0] {
				cols = append(cols, e.z[i][c]...)
			}
			p.AddRow(fmt.Sprintf("dem_%d", i), cols, encode.Repeat(len(cols), 1), encode.EQ, float64(n))
		}
		for v := range t.Cap {
			if t.IsLeaf(v) || !t.Counted[v] {
				continue
			}
			cols := append([]int(nil), e.z[i][v]...)
			coefs := encode.Repeat(len(cols), 1)
			for _, c := range t.Children[v] {
				cols = append(cols, e.z[i][c]...)
				coefs = append(coefs, encode.Repeat(len(e.z[i][c]), -1)...)
			}
			p.AddRow(fmt.Sprintf("flow_%d_%d", i, v), cols, coefs, encode.EQ, 0)
		}
		e.addCost(w.Cost, i, n)
	}
	for v, cols := range leafRows {
		if t.IsLeaf(v) {
			p.AddRow(fmt.Sprintf("cap_%d", v), cols, encode.Repeat(len(cols), 1), encode.LE, float64(t.Cap[v]))
		}
	}
	return e, nil
}

// addCost adds job i's cost bits u[i,b] and the rows
// n·C ≥ V − n + 1 and C ≥ 1, with C = Σ_b 2^b·u[i,b] and V linear in z.
func (e *Encoding) addCost(m model.CostModel, i, n int) {
	p, t := &e.Program, e.Tree
	nb := costBits(m, t, n)
	us := make([]int, nb)
	for b := range us {
		us[b] = p.AddVar(fmt.Sprintf("u_%d_%d", i, b), float64(int64(1)<<b))
	}
	// V = a·H + v0 with H = (n−1)·Σ_ℓ D_ℓ·X_ℓ − 2·Σ_v Σ_k (k−1)·z[v,k].
	a, v0 := float64(m.HopCost), -float64(m.HopCost)*float64(n)*float64(n-1)/2
	if m.Kind == model.CostLanPaper {
		a, v0 = 2*float64(m.HopCost), 0
	}
	cols := append([]int(nil), us...)
	coefs := make([]float64, nb)
	for b := range coefs {
		coefs[b] = float64(n) * float64(int64(1)<<b)
	}
	// n·C − V ≥ −n + 1, i.e. n·C − a·H ≥ v0 − n + 1.
	for v := range t.Cap {
		for q, z := range e.z[i][v] {
			k := q + 1
			var h float64 // coefficient of z[v,k] in H
			if t.IsLeaf(v) {
				h += float64(n-1) * float64(t.Depth[v])
			}
			if t.Counted[v] {
				h -= 2 * float64(k-1)
			}
			if h != 0 {
				cols = append(cols, z)
				coefs = append(coefs, -a*h)
			}
		}
	}
	p.AddRow(fmt.Sprintf("cost_%d", i), cols, coefs, encode.GE, v0-float64(n)+1)
	p.AddRow(fmt.Sprintf("costmin_%d", i), us, bitWeights(nb), encode.GE, 1)
}

// costBits returns the bits of a job's cost variable: enough for the cost
// of n nodes every pair of which is as far apart as the tree allows.
func costBits(m model.CostModel, t *Tree, n int) int {
	maxDepth := 0
	for _, d := range t.Depth {
		maxDepth = max(maxDepth, d)
	}
	hmax := int64(n) * int64(n-1) * int64(maxDepth) // ≥ 2·d·C(n,2)
	c := m.FromHops(n, hmax)
	return max(1, bits.Len64(uint64(c)))
}

func bitWeights(n int) []float64 {
	s := make([]float64, n)
	for b := range s {
		s[b] = float64(int64(1) << b)
	}
	return s
}

// Decode maps a 0/1 solution vector of the program (values above 0.5
// count as 1) to allocations, through each job's leaf counts.
func (e *Encoding) Decode(x []float64) ([]model.Allocation, error) {
	if len(x) != e.Program.NumVars() {
		return nil, fmt.Errorf("dcas: solution has %d values for %d variables", len(x), e.Program.NumVars())
	}
	counts := make([]LeafCounts, len(e.Jobs))
	for i := range e.Jobs {
		for v, zs := range e.z[i] {
			if !e.Tree.IsLeaf(v) {
				continue
			}
			k := 0
			for _, z := range zs {
				if x[z] > 0.5 {
					k++
				}
			}
			counts[i].Add(v, k)
		}
	}
	return e.Tree.Decode(e.Jobs, counts)
}
