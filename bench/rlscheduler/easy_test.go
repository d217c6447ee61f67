package rlscheduler

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
)

// TestEASYMatchesSim holds the EASY decider to bench/sim's EASY, a
// separate implementation on placed nodes, on three Lublin-1 sequences.
func TestEASYMatchesSim(t *testing.T) {
	w, err := Open(shipped[0].path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range Starts[:3] {
		seq := Sequence{w, st, SequenceLength}
		s, err := Simulate(context.Background(), seq, EASY{})
		if err != nil {
			t.Fatal(err)
		}
		var tr trace.Trace
		tr.Nodes = 256
		for i, j := range seq.Jobs() {
			tr.Jobs = append(tr.Jobs, trace.Job{ID: fmt.Sprint(i), Submit: j.Submit - seq.Jobs()[0].Submit, Runtime: j.Run, Walltime: j.Request, Nodes: w.NodesOf(j)})
		}
		topo, err := model.NewLayout(1, 1, 256)
		if err != nil {
			t.Fatal(err)
		}
		r, err := sim.Run(context.Background(), &tr, sim.Config{Topology: topo, Nodes: 256, Cost: model.DefaultCostModel, Policy: "easy", Check: false})
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, j := range r.Jobs {
			sum += max(1, float64(j.Start-j.Submit+(j.End-j.Start))/float64(max(j.End-j.Start, 10)))
		}
		if got, want := s.Mean(), sum/float64(len(r.Jobs)); math.Abs(got-want) > 1e-9*want {
			t.Errorf("start %d: EASY %.4f, bench/sim's easy %.4f", st, got, want)
		}
	}
}
