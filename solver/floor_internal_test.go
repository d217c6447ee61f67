package solver

import (
	"context"
	"testing"
	"time"
)

// TestFloorContext: past its deadline, a floor context still gives the
// floor; a cancelled (not timed-out) context is not extended.
func TestFloorContext(t *testing.T) {
	past, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	fctx, fcancel := floorContext(past, time.Hour)
	if fctx.Err() != nil {
		t.Error("the floor was not given past the deadline")
	}
	fcancel()
	if fctx.Err() == nil {
		t.Error("cancel did not end the floor context")
	}
	cctx, ccancel := context.WithTimeout(context.Background(), time.Hour)
	ccancel()
	gctx, gcancel := floorContext(cctx, time.Hour)
	defer gcancel()
	if gctx.Err() == nil {
		t.Error("a cancelled context was extended")
	}
}
