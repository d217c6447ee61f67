package cp

import (
	"time"

	"github.com/optsched/optsched/model"
)

// buildRate is how many options (pairs of a waiting job and a usable
// node) Build is taken to read per second, and buildShare the share of
// the time left, in percent, it may take: a window with more options
// than buildRate × buildShare % of the time left is not modelled at all
// (sat and bnb answer a list schedule instead). Build took 0.35–0.56 µs per option on the windows of
// cmd/optsched's BenchmarkPBSCycle (3,456 to 5.9 million options, a
// 2-core machine), and encoding the model for the search takes longer
// still, so a model that takes a quarter of the time to build leaves the
// search little to do.
const (
	buildRate  = 2_000_000
	buildShare = 25
)

// Options returns the options of w's model as Build would make
// them at most: its waiting jobs times its usable nodes (idle, or running
// a job).
func Options(w *model.Window) int {
	usable := make(map[int]bool, len(w.Idle))
	for _, k := range w.Idle {
		usable[k] = true
	}
	for _, r := range w.Running {
		for _, k := range r.Nodes {
			usable[k] = true
		}
	}
	return len(w.Jobs) * len(usable)
}

// Fits reports whether a model of the given options is built within
// buildShare percent of the time left (see buildRate).
func Fits(options int, left time.Duration) bool {
	return float64(options) <= buildRate*left.Seconds()*buildShare/100
}
