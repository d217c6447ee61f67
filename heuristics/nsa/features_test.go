package nsa

import (
	"math/rand/v2"
	"testing"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
)

// refFeatures is topoFeatures as first written: a scan of every node in
// id order with maps, the reference for the per-switch tables.
func refFeatures(t *model.Topology) (leaf, pod []float64, class []uint32) {
	leaf, pod = make([]float64, t.NumNodes()), make([]float64, t.NumNodes())
	for up, dst := range [][]float64{leaf, pod} {
		rank := map[int]int{}
		for id := range dst {
			g := t.Group(id, up)
			r, ok := rank[g]
			if !ok {
				r = len(rank)
				rank[g] = r
			}
			dst[id] = float64(r)
		}
		if len(rank) > 1 {
			for id := range dst {
				dst[id] /= float64(len(rank) - 1)
			}
		}
	}
	class = make([]uint32, len(leaf))
	classes := map[[2]float64]uint32{}
	for id := range class {
		k := [2]float64{leaf[id], pod[id]}
		c, ok := classes[k]
		if !ok {
			c = uint32(len(classes))
			classes[k] = c
		}
		class[id] = c
	}
	return leaf, pod, class
}

// TestTopoFeaturesMatchReference: on random topologies of every kind the
// per-switch features give every node the reference's leaf, pod and class.
func TestTopoFeaturesMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 200 {
		w := instances.RandomSmall(rng, i%instances.NumKinds, 16, 3)
		topo := w.Topology
		leaf, pod, class := refFeatures(topo)
		f := newTopoFeatures(topo)
		for id := range topo.NumNodes() {
			if f.leaf(id) != leaf[id] || f.pod(id) != pod[id] || f.class(id) != class[id] {
				t.Fatalf("window %d node %d: (%v, %v, %d), want (%v, %v, %d)", i, id,
					f.leaf(id), f.pod(id), f.class(id), leaf[id], pod[id], class[id])
			}
		}
	}
}
