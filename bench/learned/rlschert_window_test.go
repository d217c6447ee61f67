package learned

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/optsched/optsched/bench/predict"
	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/heuristics/learn"
)

// refPredictor is UserPredictor as it was before it kept the users'
// elapsed-0 predictions: the reference the kept ones are held to.
type refPredictor struct {
	mape   bool
	byUser map[string][]ratio
}

func (p *refPredictor) observe(user string, run, request int64) {
	if user == "" || request <= 0 {
		return
	}
	h := append(p.byUser[user], ratio{run, request})
	if len(h) > 8*PredictK {
		h = h[len(h)-8*PredictK:]
	}
	p.byUser[user] = h
}

func (p *refPredictor) total(user string, request, elapsed int64) float64 {
	e, r := float64(elapsed), float64(request)
	x := r
	var buf []float64
	if h := p.byUser[user]; p.mape && user != "" && len(h) > 0 {
		for i := len(h) - 1; i >= 0 && len(buf) < PredictK; i-- {
			if h[i].run > elapsed {
				buf = append(buf, float64(h[i].run-elapsed))
			}
		}
		if len(buf) > 0 {
			x = e + predict.WeightedMedianInv(buf)
		}
	} else if user != "" && len(h) > 0 {
		for i := len(h) - 1; i >= 0 && len(buf) < PredictK; i-- {
			if h[i].run > elapsed {
				buf = append(buf, float64(h[i].run)/float64(h[i].req))
			}
		}
		if len(buf) > 0 {
			slices.Sort(buf)
			n := len(buf)
			m := buf[n/2]
			if n%2 == 0 {
				m = (buf[n/2-1] + buf[n/2]) / 2
			}
			x = m * r
		}
	}
	return max(min(x, max(r, e)), e, 1)
}

// refWindow is Schert.window as it was before it ranked in one pass (a
// prediction and a key for every waiting job, the fitting ones sorted
// stably by key), on the reference predictor: it returns the visible
// slots, their predictions and the jobs' valid flags.
func refWindow(d SchertDesign, pred *refPredictor, now int64, idle int, queue []sim.QueuedJob,
	running []sim.RunningJob) (vis [SchertVisible]int, pr [SchertVisible]float64, valid [SchertVisible]bool) {
	var qpred, qkey []float64
	h := 0
	for i, q := range queue {
		p := pred.total(q.User, q.Request, 0)
		k := p
		if d.RankRequest {
			k = float64(q.Request)
		}
		if d.Area {
			k *= float64(q.Nodes)
		}
		qpred, qkey = append(qpred, p), append(qkey, k)
		if d.Reserve == SchertReserveKey && k < qkey[h] {
			h = i
		}
	}
	for i := range vis {
		vis[i] = -1
	}
	if len(queue) == 0 {
		return vis, pr, valid
	}
	vis[0], pr[0], valid[0] = h, qpred[h], queue[h].Nodes <= idle
	shadow, spare := int64(math.MaxInt64), idle
	if d.Reserve != SchertReserveNone {
		if need := queue[h].Nodes; need <= idle {
			shadow, spare = now, idle-need
		} else {
			var ends []endAt
			for _, r := range running {
				ends = append(ends, endAt{max(r.Start+r.Request, now), r.Nodes})
			}
			slices.SortFunc(ends, func(a, b endAt) int { return cmp.Compare(a.t, b.t) })
			free := idle
			for _, e := range ends {
				free += e.nodes
				if free >= need {
					shadow, spare = e.t, free-need
					break
				}
			}
			if free < need {
				shadow, spare = math.MaxInt64, idle
			}
		}
	}
	var ord []int
	for i, q := range queue {
		if i != h && q.Nodes <= idle && (q.Nodes <= spare || now+q.Request <= shadow) {
			ord = append(ord, i)
		}
	}
	slices.SortStableFunc(ord, func(a, b int) int { return cmp.Compare(qkey[a], qkey[b]) })
	for j, i := range ord[:min(len(ord), SchertVisible-1)] {
		vis[j+1], pr[j+1], valid[j+1] = i, qpred[i], true
	}
	return vis, pr, valid
}

// observeBoth feeds a random finished job to both predictors.
func observeBoth(rng *rand.Rand, p *UserPredictor, ref *refPredictor, users []string) {
	u := users[rng.IntN(len(users))]
	run, req := int64(1+rng.IntN(300)), int64(rng.IntN(400)-20) // some requests ≤ 0: ignored
	p.Observe(u, run, req)
	ref.observe(u, run, req)
}

// TestUserPredictorKeptAsComputed: Total, whose elapsed-0 answers are
// kept per user until the user's history changes, returns bit for bit
// what it returned computing every answer, on random interleavings of
// finished jobs and predictions (at elapsed 0 mostly, for users with
// and without history, none, both rules switched back and forth).
func TestUserPredictorKeptAsComputed(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 2))
	users := []string{"", "a", "b", "c", "d"}
	asked := 0
	for trial := range 300 {
		p, ref := NewUserPredictor(), &refPredictor{byUser: map[string][]ratio{}}
		p.MAPE = rng.IntN(2) == 0
		for range 400 {
			switch r := rng.IntN(10); {
			case r < 3:
				observeBoth(rng, p, ref, users)
			case r == 3:
				p.MAPE = !p.MAPE
			default:
				ref.mape = p.MAPE
				u, req, el := users[rng.IntN(len(users))], int64(1+rng.IntN(400)), int64(0)
				if rng.IntN(4) == 0 {
					el = int64(rng.IntN(300))
				}
				asked++
				if got, want := p.Total(u, req, el), ref.total(u, req, el); math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("trial %d: Total(%q, %d, %d) = %v, computed %v (mape %v)", trial, u, req, el, got, want, p.MAPE)
				}
			}
		}
	}
	t.Logf("%d predictions", asked)
}

// randomWindowCase returns a random queue (few distinct requests and
// sizes: ties in the keys) and running set for a cluster of nodes.
func randomWindowCase(rng *rand.Rand, nodes int, users []string) (now int64, idle int, queue []sim.QueuedJob, running []sim.RunningJob) {
	now = int64(1000 + rng.IntN(100))
	busy := 0
	for range rng.IntN(6) {
		n := 1 + rng.IntN(nodes/3)
		if busy+n > nodes {
			break
		}
		busy += n
		running = append(running, sim.RunningJob{Key: 1000 + len(running), User: users[rng.IntN(len(users))],
			Start: now - int64(rng.IntN(200)), Request: int64(1 + rng.IntN(300)), Nodes: n})
	}
	idle = nodes - busy
	for k := range rng.IntN(30) {
		queue = append(queue, sim.QueuedJob{Submit: now - int64(rng.IntN(500)), Request: int64(10 * (1 + rng.IntN(6))),
			Nodes: 1 + rng.IntN(nodes/2), Key: k, User: users[rng.IntN(len(users))], Kills: rng.IntN(2)})
	}
	return now, idle, queue, running
}

// TestWindowAsSorted: the Queue design's window, which ranks the queue
// in one pass keeping the first four and predicts the visible jobs
// only, shows the same jobs in the same slots with the same predictions
// (bit for bit) and valid actions as the reference that predicted every
// job and sorted the fitting ones stably, for every reservation and
// rank key, on random queues with tied keys, one Schert across many
// decisions between which users' histories grow.
func TestWindowAsSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 3))
	users := []string{"", "a", "b", "c"}
	const nodes = 16
	full := 0
	for trial := range 300 {
		net := NewRLSchert(SchertNorm{Slot: 10}, learn.NewRand(1, 1))
		net.Design = SchertDesign{Queue: true, Reserve: SchertReserve(rng.IntN(3)), Area: rng.IntN(2) == 0,
			RankRequest: rng.IntN(2) == 0, MAPE: rng.IntN(2) == 0}
		s := NewSchert(net, false, false, 0)
		ref := &refPredictor{mape: net.Design.MAPE, byUser: map[string][]ratio{}}
		for range 20 {
			for range rng.IntN(4) {
				observeBoth(rng, s.Pred, ref, users)
			}
			now, idle, queue, running := randomWindowCase(rng, nodes, users)
			s.observe(now, idle, nodes, queue, running)
			vis, pr, valid := refWindow(net.Design, ref, now, idle, queue, running)
			o := &s.obs
			if o.vis != vis || [SchertVisible]bool(o.valid[:SchertVisible]) != valid {
				t.Fatalf("trial %d (%v): visible %v valid %v, the reference's %v %v", trial, net.Design, o.vis, o.valid, vis, valid)
			}
			for i, v := range vis {
				if v >= 0 && math.Float64bits(o.pred[i]) != math.Float64bits(pr[i]) {
					t.Fatalf("trial %d (%v): slot %d predicted %v, the reference %v", trial, net.Design, i, o.pred[i], pr[i])
				}
			}
			if vis[SchertVisible-1] >= 0 {
				full++
			}
		}
	}
	if full < 500 {
		t.Fatalf("%d windows full: too few to exercise the four's selection", full)
	}
	t.Logf("%d windows full", full)
}

// BenchmarkSchertDecisionQueue times one pick (the window, the image and
// the picker's network) of the shipped HPC2N weights on a queue of
// 20,000 waiting jobs of 500 users with histories and 200 running jobs,
// as the queues of the overloaded scaled logs grow: with its design's
// rank (the request × nodes) and with the predicted length × nodes.
func BenchmarkSchertDecisionQueue(b *testing.B) {
	for _, rank := range []string{"request", "length"} {
		b.Run(rank, func(b *testing.B) {
			net, err := ShippedRLSchert("hpc2n")
			if err != nil {
				b.Fatal(err)
			}
			net.Design.RankRequest = rank == "request"
			s := NewSchert(net, false, false, 1)
			rng := rand.New(rand.NewPCG(34, 4))
			users := make([]string, 500)
			for i := range users {
				users[i] = "u" + string(rune('a'+i%26)) + string(rune('a'+i/26))
				for range 10 {
					s.Pred.Observe(users[i], int64(60+rng.IntN(20000)), int64(600*(1+rng.IntN(40))))
				}
			}
			const now, nodes = 100000, 32768
			var q []sim.QueuedJob
			for i := range 20000 {
				q = append(q, sim.QueuedJob{Submit: int64(i), Request: int64(600 * (1 + rng.IntN(40))), Nodes: 1 + rng.IntN(64),
					Key: i, User: users[rng.IntN(len(users))]})
			}
			var r []sim.RunningJob
			busy := 0
			for i := range 200 {
				n := 1 + rng.IntN(300)
				busy += n
				r = append(r, sim.RunningJob{Key: 100000 + i, User: users[rng.IntN(len(users))], Start: now - int64(rng.IntN(20000)),
					Request: int64(600 * (1 + rng.IntN(40))), Nodes: n})
			}
			for b.Loop() {
				s.Pick(now, 40, nodes, q, r)
			}
		})
	}
}
