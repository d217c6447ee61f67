package sat

import (
	"context"
	"time"

	"github.com/optsched/optsched/encode/cp"
)

// GroupBound exposes the group bound to the package's external tests:
// LB + the largest bound of the partitions into groups of at most size
// jobs, each group solved to the end, in units of W = Σ ω_i·s_i.
func GroupBound(m *cp.Model, size int) (int64, error) {
	gb, err := Solver{}.groupBounds(context.Background(), m, nil, size, time.Now())
	if err != nil || gb == nil {
		return LowerBound(m), err
	}
	return LowerBound(m) + gb.total, nil
}
