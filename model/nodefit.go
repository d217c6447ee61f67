package model

// A NodeUse is one use of one node over [From, To), with the amounts as
// a vector over resource names the caller chose (nil: nothing counted, as
// for a whole-node use): the form of Check's per-node rule for callers
// that test many changes of one node's uses (the compaction of a units
// schedule, package heuristics).
type NodeUse struct {
	From, To int64
	Use      []int64
	// Excl says the use is exclusive (place=excl, or a whole-node job);
	// Units that it is a units allocation; Alloc that it is an
	// allocation (not a running job).
	Excl, Units, Alloc bool
}

// NodeUsesFit applies Check's rules for one node of a units schedule to
// its uses (see checkNode): whenever a units allocation is among the uses
// active at the start of an allocation, the uses active then fit the
// capacities (vectors over the same names as the uses') and no
// exclusive use shares the node with a units use. A node without a
// units use is the whole-node rules' matter: it fits here.
func NodeUsesFit(uses []NodeUse, capacity []int64) bool {
	hasUnits := false
	for _, u := range uses {
		hasUnits = hasUnits || u.Units
	}
	if !hasUnits {
		return true
	}
	total := make([]int64, len(capacity))
	for si, s := range uses {
		if !s.Alloc {
			continue
		}
		t := s.From
		unitsActive := false
		clear(total)
		for _, o := range uses {
			if o.From <= t && t < o.To {
				unitsActive = unitsActive || o.Units
				for r, v := range o.Use {
					total[r] += v
				}
			}
		}
		if !unitsActive {
			continue
		}
		// An exclusive pair that starts together counts once, at the
		// later index, when both are active then (checkNode's rule).
		for oi, o := range uses {
			if oi == si || !(o.From <= t && t < o.To) || !(s.Excl || o.Excl) || !(s.Units || o.Units) {
				continue
			}
			if o.From == t && o.Alloc && oi > si {
				continue
			}
			return false
		}
		for r, v := range total {
			if v > capacity[r] {
				return false
			}
		}
	}
	return true
}
