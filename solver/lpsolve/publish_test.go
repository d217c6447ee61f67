//go:build cgo

package lpsolve

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// recorder is a Publisher that keeps every offer.
type recorder struct {
	mu     sync.Mutex
	offers [][]model.Allocation
	objs   []int64
}

func (r *recorder) Offer(obj int64, _ string, allocs []model.Allocation, build func() []model.Allocation) {
	if allocs == nil {
		allocs = build()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.offers, r.objs = append(r.offers, allocs), append(r.objs, obj)
}

func (r *recorder) Raise(float64) {}

// TestPublishesWhileSolving: on a program whose branch and bound finds
// incumbents long before it can prove one (example window, five jobs,
// paper form), lp_solve's incumbents are published while it runs — more
// offers than the final answer's one — each a valid allocation priced
// right, none better than the answer.
func TestPublishesWhileSolving(t *testing.T) {
	w, err := instances.Load("example-window.json")
	if err != nil {
		t.Fatal(err)
	}
	sel := model.SelectJobs(w, 5)
	// The limits double until lp_solve gets past its first incumbent: on
	// a loaded machine under -race, encoding and loading the paper form
	// take seconds of the limit.
	for _, limit := range []time.Duration{300 * time.Millisecond, 600 * time.Millisecond, 1200 * time.Millisecond, 2400 * time.Millisecond, 4800 * time.Millisecond, 9600 * time.Millisecond} {
		rec := &recorder{}
		p := solver.NewProblem(w, sel.Multi)
		p.Publisher = rec
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		res, err := Solver{Formulation: scas.Paper}.Solve(ctx, p)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		rec.mu.Lock()
		offers, objs := rec.offers, rec.objs
		rec.mu.Unlock()
		t.Logf("limit %v: %v objective %d, offers %v", limit, res.Status, res.Objective, objs)
		for i, a := range offers {
			if err := model.Check(w, a); err != nil || len(a) != len(sel.Multi) || solver.Objective(w, a) != objs[i] || objs[i] < res.Objective {
				t.Fatalf("offer %d (objective %d): %v; answer %d", i, objs[i], err, res.Objective)
			}
		}
		if len(offers) >= 2 {
			return
		}
	}
	t.Error("no incumbent published while lp_solve ran")
}
