package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/optsched/optsched/model"
)

// fitState is the partial-node path's view of the free capacity during a
// cycle: what each free vnode has left after the jobs already on it and
// the jobs placed earlier in the cycle.
//
// The partial-node path is a documented simple placement, standing in
// until the CP/SAT time-and-resource solver (issue 8) can take these
// jobs: each unit of a job, in order, goes to the first vnode where it
// fits, trying vnodes already partly used (by running jobs or by this
// cycle) before idle ones, each group in topology order, so that idle
// vnodes stay whole for the window solve. place=scatter and vscatter put
// units on distinct vnodes, place=pack all of them on one; a job that is
// exclusive on a vnode (see exclusiveOn) may only use vnodes that are idle
// and then holds them. A unit fits a vnode when the vnode is free, not
// held, belongs to no other queue, has every property the unit names and
// enough of every consumable resource left.
type fitState struct {
	c *cluster
	// pristine: every owned vnode counts as free and idle with its full
	// capacity (to ask whether a job could ever run here).
	pristine bool
	left     map[*vnode]model.Resources
	taken    map[*vnode]bool
	touched  map[*vnode]bool
}

// newFitState returns the capacity view at the start of a cycle.
func newFitState(c *cluster, pristine bool) *fitState {
	f := &fitState{c: c, pristine: pristine, left: map[*vnode]model.Resources{}, taken: map[*vnode]bool{}, touched: map[*vnode]bool{}}
	for _, v := range c.vnodes {
		if pristine {
			// place clones before it changes anything and commits by
			// replacing maps, so the vnode's own map can be shared.
			f.left[v] = v.n.Available
			continue
		}
		r := maps.Clone(v.n.Available)
		for k, a := range v.n.Assigned {
			r[k] -= a
		}
		f.left[v] = r
	}
	return f
}

func (f *fitState) usable(v *vnode) bool { return (f.pristine || v.free) && !f.taken[v] }
func (f *fitState) idleNow(v *vnode) bool {
	return (f.pristine || v.idle) && !f.taken[v] && !f.touched[v]
}

// take marks vnode v as held whole by a job of the window solve.
func (f *fitState) take(v *vnode) { f.taken[v] = true }

// pbsVChunk is one chunk of a qrun -H vnode specification: a vnode and the
// resources the chunk uses on it.
type pbsVChunk struct {
	Vnode   string
	Amounts model.Resources
	Labels  map[string]string
}

// place puts the units of cand on vnodes, using at most idleBudget vnodes
// that are idle now. On success the placement is committed and returned
// with one chunk per unit; otherwise nothing changes and why says what did
// not fit.
func (f *fitState) place(cand *candidate, idleBudget int) (chunks []pbsVChunk, usedIdle int, why string) {
	j := cand.job
	left := map[*vnode]model.Resources{} // tentative capacities
	capOf := func(v *vnode) model.Resources {
		if r, ok := left[v]; ok {
			return r
		}
		r := maps.Clone(f.left[v])
		left[v] = r
		return r
	}
	mine := map[*vnode]bool{}
	excl := map[*vnode]bool{}
	var assign []*vnode
	fits := func(v *vnode, u chunkReq) bool {
		if !f.usable(v) || v.n.Queue != "" && v.n.Queue != j.Queue {
			return false
		}
		if exclusiveOn(v.n, j.Place) && !mine[v] && !f.idleNow(v) {
			return false
		}
		if !mine[v] && f.idleNow(v) && usedIdle >= idleBudget {
			return false
		}
		for k, want := range u.labels {
			if !labelMatches(f.c, v, k, want) {
				return false
			}
		}
		r, ok := left[v] // read without copying; use copies
		if !ok {
			r = f.left[v]
		}
		for k, want := range u.amounts {
			if !f.c.checked[k] && !knownConsumables[k] {
				continue
			}
			if r[k] < want {
				return false
			}
		}
		return true
	}
	use := func(v *vnode, u chunkReq) {
		r := capOf(v)
		for k, want := range u.amounts {
			r[k] -= want
		}
		if !mine[v] {
			mine[v] = true
			if f.idleNow(v) {
				usedIdle++
			}
			if exclusiveOn(v.n, j.Place) {
				excl[v] = true
			}
		}
		assign = append(assign, v)
	}
	// order lists the vnodes to try: this job's own first (except when
	// scattering), then partly used ones, then idle ones, each in
	// topology order.
	order := func(scatter bool) []*vnode {
		var own, partly, idle []*vnode
		for _, v := range f.c.vnodes {
			switch {
			case mine[v]:
				if !scatter {
					own = append(own, v)
				}
			case !f.usable(v):
			case f.idleNow(v):
				idle = append(idle, v)
			default:
				partly = append(partly, v)
			}
		}
		return slices.Concat(own, partly, idle)
	}
	switch arr := j.Place.Arrangement; {
	case arr == "pack" && len(cand.units) > 1:
		ok := false
		need := model.Resources{}
		for _, u := range cand.units {
			for k, a := range u.amounts {
				need[k] += a
			}
		}
		whole := chunkReq{amounts: need, labels: cand.units[0].labels}
		for _, v := range order(false) {
			if allLabels(f.c, v, cand.units) && fits(v, whole) {
				for _, u := range cand.units {
					use(v, u)
				}
				ok = true
				break
			}
		}
		if !ok {
			if f.pristine {
				return nil, 0, fmt.Sprintf("place=pack: no vnode has room for all %d chunks even when empty", len(cand.units))
			}
			return nil, 0, fmt.Sprintf("place=pack: no free vnode has room for all %d chunks now", len(cand.units))
		}
	default:
		scatter := j.Place.Arrangement == "scatter" || j.Place.Arrangement == "vscatter"
		for i, u := range cand.units {
			placed := false
			for _, v := range order(scatter) {
				if fits(v, u) {
					use(v, u)
					placed = true
					break
				}
			}
			if !placed {
				what := fmt.Sprintf("chunk %d (%s)", i+1, describeUnit(u))
				switch {
				case f.pristine && scatter && i > 0:
					return nil, 0, fmt.Sprintf("place=%s: %s finds no vnode not already used by the job, even when all are empty", j.Place.Arrangement, what)
				case f.pristine:
					return nil, 0, what + " fits no vnode even when it is empty"
				case usedIdle >= idleBudget:
					return nil, 0, what + " fits no partly used vnode, and the idle vnodes left are held for higher-priority whole-node jobs"
				}
				return nil, 0, what + " fits no free vnode now"
			}
		}
	}
	// Commit.
	for v, r := range left {
		if mine[v] {
			f.left[v] = r
			if excl[v] {
				f.taken[v] = true
			} else {
				f.touched[v] = true
			}
		}
	}
	for i, v := range assign {
		chunks = append(chunks, pbsVChunk{Vnode: v.n.Name, Amounts: cand.units[i].written, Labels: cand.units[i].wlabels})
	}
	return chunks, usedIdle, ""
}

// allLabels reports whether vnode v has the properties of every unit.
func allLabels(c *cluster, v *vnode, units []chunkReq) bool {
	for _, u := range units {
		for k, want := range u.labels {
			if !labelMatches(c, v, k, want) {
				return false
			}
		}
	}
	return true
}

// describeUnit writes a unit's request as a select chunk.
func describeUnit(u chunkReq) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(u.amounts)) {
		parts = append(parts, k+"="+fmtAmount(k, u.amounts[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(u.labels)) {
		parts = append(parts, k+"="+u.labels[k])
	}
	return strings.Join(parts, ":")
}

// execVnode writes chunks in the exec_vnode form qrun -H takes:
// "(n1:ncpus=16:mem=64gb)+(n2:ncpus=16:mem=64gb)", numeric resources in
// sorted order, then string-valued ones; a chunk without resources is
// just "(n1)".
func execVnode(chunks []pbsVChunk) string {
	var b strings.Builder
	for i, ch := range chunks {
		if i > 0 {
			b.WriteByte('+')
		}
		b.WriteByte('(')
		b.WriteString(ch.Vnode)
		for _, k := range slices.Sorted(maps.Keys(ch.Amounts)) {
			fmt.Fprintf(&b, ":%s=%s", k, fmtAmount(k, ch.Amounts[k]))
		}
		for _, k := range slices.Sorted(maps.Keys(ch.Labels)) {
			fmt.Fprintf(&b, ":%s=%s", k, ch.Labels[k])
		}
		b.WriteByte(')')
	}
	return b.String()
}
