package model

import (
	"slices"
	"testing"
)

func TestBlockWraps(t *testing.T) {
	topo, err := NewLayout(2, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	// Q = 0 1 2 3 4 5 9
	w := &Window{Time: 100, Topology: topo, Idle: []int{0, 1, 2, 3, 4, 5, 9}, Cost: DefaultCostModel}
	if got := w.Block(1, 3); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("D(1,3) = %v", got)
	}
	if got := w.Block(5, 4); !slices.Equal(got, []int{5, 9, 0, 1}) {
		t.Errorf("D(5,4) = %v, want wrap to the head", got)
	}
	if got := w.Block(6, 7); !slices.Equal(got, []int{9, 0, 1, 2, 3, 4, 5}) {
		t.Errorf("D(6,7) = %v", got)
	}
	// A block is the caller's: writing to it, or appending, leaves Idle
	// as it was, wrapped or not.
	for _, c := range [][2]int{{0, 7}, {1, 3}, {5, 4}, {6, 7}, {6, 1}} {
		b := w.Block(c[0], c[1])
		for k := range b {
			b[k] = -1
		}
		_ = append(b, -2)
		if !slices.Equal(w.Idle, []int{0, 1, 2, 3, 4, 5, 9}) {
			t.Fatalf("writing to D(%d,%d) changed Idle to %v", c[0], c[1], w.Idle)
		}
	}
}
