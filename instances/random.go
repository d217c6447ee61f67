package instances

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
)

// Topology kinds for RandomWindow.
const (
	KindLayout  = iota // the paper's 25×4×10 layout (or a smaller one)
	KindFatTree        // a k-ary fat-tree, k in 2..10
	KindSlurm          // a random Slurm topology.conf: 1–3 levels, uneven, sometimes several roots
	NumKinds
)

// RandomSlurm writes a random topology.conf with at most maxLeaves leaf
// switches of 1–12 nodes each, 1–3 levels, uneven fan-outs, and sometimes
// several roots.
func RandomSlurm(rng *rand.Rand, maxLeaves int) string {
	var b strings.Builder
	leaves := 2 + rng.IntN(max(1, maxLeaves-1))
	node := 0
	var names []string
	for l := range leaves {
		k := 1 + rng.IntN(12)
		fmt.Fprintf(&b, "SwitchName=l%d Nodes=h[%d-%d]\n", l, node, node+k-1)
		node += k
		names = append(names, fmt.Sprintf("l%d", l))
	}
	for level := 0; len(names) > 1 && level < 2; level++ {
		var up []string
		for i := 0; i < len(names); {
			k := 1 + rng.IntN(4)
			end := min(i+k, len(names))
			name := fmt.Sprintf("u%d_%d", level, len(up))
			fmt.Fprintf(&b, "SwitchName=%s Switches=%s\n", name, strings.Join(names[i:end], ","))
			up = append(up, name)
			i = end
		}
		names = up
	}
	return b.String()
}

// RandomSmall returns a small random window for cross-checking exact
// solvers against brute force: a topology of the given kind, maxIdle or
// fewer idle nodes chosen at random, and 1..maxJobs waiting jobs of 1–8
// nodes whose sizes sum to at most the idle count. About half use the
// lan-paper cost. Deterministic for rng's state.
func RandomSmall(rng *rand.Rand, kind, maxIdle, maxJobs int) *model.Window {
	var topo string
	switch kind {
	case KindLayout:
		topo = fmt.Sprintf(`{"layout": {"pods": %d, "leaves_per_pod": %d, "nodes_per_leaf": %d}}`,
			1+rng.IntN(4), 1+rng.IntN(4), 2+rng.IntN(9))
	case KindFatTree:
		topo = fmt.Sprintf(`{"fat_tree": {"k": %d}}`, 2*(2+rng.IntN(4)))
	default:
		topo = fmt.Sprintf(`{"slurm": %q}`, RandomSlurm(rng, 8))
	}
	w, err := windowjson.Parse([]byte(`{"time": 0, "topology": `+topo+`, "idle": [], "jobs": []}`), windowjson.Options{})
	if err != nil {
		panic("instances: RandomSmall built a bad window: " + err.Error())
	}
	n := w.Topology.NumNodes()
	idle := min(n, 2+rng.IntN(max(1, maxIdle-1)))
	w.Idle = rng.Perm(n)[:idle]
	slices.Sort(w.Idle)
	left := idle
	for j := 0; j < 1+rng.IntN(maxJobs) && left >= 1; j++ {
		size := 1 + rng.IntN(min(8, left))
		left -= size
		w.Jobs = append(w.Jobs, model.Job{ID: fmt.Sprint("j", j), Nodes: size, Walltime: 60, Queue: model.DefaultQueue})
	}
	if rng.IntN(2) == 0 {
		w.Cost.Kind = model.CostLanPaper
	}
	return w
}
