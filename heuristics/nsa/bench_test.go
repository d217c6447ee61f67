package nsa

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// BenchmarkForward: one actor forward pass of each architecture at the
// paper's q = 100, β = 4 (batch 1, as NSA runs it; and a batch of 128, as
// training does, per sample).
func BenchmarkForward(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for a := Arch(0); a < numArch; a++ {
		for _, batch := range []int{1, 128} {
			n, err := NewNet(a, 4, 100, 100, 0.01, rng)
			if err != nil {
				b.Fatal(err)
			}
			x := randVec(rng, batch*400)
			nets := map[string]*Net{"": n}
			if a == CNN3 && batch == 1 {
				nets["-fused"] = n.Fused() // what NSA runs
			}
			for suffix, net := range nets {
				b.Run(a.String()+suffix+map[int]string{1: "/batch1", 128: "/batch128"}[batch], func(b *testing.B) {
					for b.Loop() {
						net.Forward(x, batch)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/sample")
				})
			}
			if a == CNN3 && batch == 1 && exactDot {
				// What NSA runs on a memo miss: the exact fast pass of the
				// fused network, on a full state and on one with 47 shown
				// positions (the mean of the short states on the Table
				// III/IV windows).
				f := newInfer(n.Fused())
				for _, live := range []int{100, 47} {
					xs := append([]float64(nil), x...)
					for c := range 4 {
						clear(xs[c*100+live : (c+1)*100])
					}
					b.Run(fmt.Sprintf("%s-fused-fast/live%d", a, live), func(b *testing.B) {
						for b.Loop() {
							f.forward(xs, live)
						}
						b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/sample")
					})
				}
			}
		}
	}
}

// BenchmarkStep: one annealing move of NSA (greedy, shipped policy) and
// of SA, on the shipped paper windows; ns/step is the figure to compare.
func BenchmarkStep(b *testing.B) {
	for _, name := range []string{"paper-s1-i50.json", "paper-s3-i300.json", "paper-s4-i500.json"} {
		w, err := instances.Load(name)
		if err != nil {
			b.Fatal(err)
		}
		sel := model.SelectJobs(w, 5)
		p := solver.NewProblem(w, sel.Multi)
		sa := heuristics.DefaultAnneal()
		n := Default()
		for _, s := range []struct {
			label string
			sv    solver.Solver
		}{{"sa", sa}, {"nsa", n}} {
			b.Run(name+"/"+s.label, func(b *testing.B) {
				for b.Loop() {
					if _, err := s.sv.Solve(context.Background(), p); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sa.Steps), "ns/step")
			})
		}
	}
}
