//go:build !cgo

package clp

import (
	"context"
	"math"

	"github.com/optsched/optsched/encode"
	"github.com/optsched/optsched/solver"
)

// Available reports whether CLP is linked into this binary. It is false:
// this binary was built without cgo.
const Available = false

// LPBound returns a NaN bound, status Stopped and ErrUnavailable: this
// binary was built without cgo.
func LPBound(ctx context.Context, prog *encode.Program) (bound float64, x []float64, status BoundStatus, err error) {
	return math.NaN(), nil, Stopped, ErrUnavailable
}

// Solve returns ErrUnavailable: this binary was built without cgo.
func (Solver) Solve(ctx context.Context, p *solver.Problem) (*solver.Result, error) {
	return nil, ErrUnavailable
}
