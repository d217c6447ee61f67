//go:build !cgo

package clp

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/optsched/optsched/encode"
	"github.com/optsched/optsched/solver"
)

// TestUnavailable: without cgo every entry point says so.
func TestUnavailable(t *testing.T) {
	if Available {
		t.Error("Available without cgo")
	}
	b, x, st, err := LPBound(context.Background(), &encode.Program{})
	if !errors.Is(err, ErrUnavailable) || !math.IsNaN(b) || x != nil || st != Stopped {
		t.Errorf("LPBound: %g %v %v %v", b, x, st, err)
	}
	if res, err := (Solver{}).Solve(context.Background(), &solver.Problem{}); !errors.Is(err, ErrUnavailable) || res != nil {
		t.Errorf("Solve: %v %v", res, err)
	}
	if (Solver{}).Name() != "clp" {
		t.Error("name")
	}
}
