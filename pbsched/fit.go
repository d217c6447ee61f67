package pbsched

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
// vnodes stay whole for the window solve. place=scatter puts units on
// distinct hosts and vscatter on distinct vnodes, place=pack all of them
// on one host (over its vnodes), place=group=r on vnodes with one value
// of r; a job that is
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
	// partly lists the usable vnodes that are not idle now, in topology
	// order; idleFrom is the index (in c.vnodes) of the first vnode that
	// is idle now. Vnodes only lose idleness during a cycle, so partly
	// only grows and idleFrom only moves forward (advance): the first fit
	// walks these instead of every vnode.
	partly   []*vnode
	idleFrom int
}

// advance brings partly and idleFrom up to date after vnodes were
// touched or taken.
func (f *fitState) advance(changed ...*vnode) {
	for _, v := range changed {
		if f.usable(v) && !f.idleNow(v) {
			i, found := slices.BinarySearchFunc(f.partly, v, func(a, b *vnode) int { return a.id - b.id })
			if !found {
				f.partly = slices.Insert(f.partly, i, v)
			}
		}
	}
	for f.idleFrom < len(f.c.vnodes) && !f.idleNow(f.c.vnodes[f.idleFrom]) {
		f.idleFrom++
	}
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
		for k, a := range c.used(v) {
			r[k] -= a
		}
		f.left[v] = r
	}
	for _, v := range c.vnodes {
		if f.usable(v) && !f.idleNow(v) {
			f.partly = append(f.partly, v)
		}
	}
	f.advance()
	return f
}

func (f *fitState) usable(v *vnode) bool { return (f.pristine || v.free) && !f.taken[v] }
func (f *fitState) idleNow(v *vnode) bool {
	return (f.pristine || v.idle) && !f.taken[v] && !f.touched[v]
}

// hostFree reports whether a job may take host h whole: every vnode of
// it with CPUs is optsched's, idle now and usable (vnodes without CPUs,
// such as the natural vnode, only need to run nothing).
func (f *fitState) hostFree(h string) bool {
	for _, n := range f.c.hostNodes[h] {
		v := f.c.byName[n.Name]
		switch {
		case v != nil:
			if !f.usable(v) || !f.idleNow(v) {
				return false
			}
		case n.Available["ncpus"] > 0 || len(n.Jobs) > 0 || !allZero(n.Assigned):
			return false
		}
	}
	return true
}

// idleOn counts the owned vnodes of host h that are idle now.
func (f *fitState) idleOn(h string) int {
	n := 0
	for _, m := range f.c.hostNodes[h] {
		if v := f.c.byName[m.Name]; v != nil && f.idleNow(v) {
			n++
		}
	}
	return n
}

// take marks vnode v as held whole by a job of the window solve.
func (f *fitState) take(v *vnode) { f.taken[v] = true; f.advance() }

// VChunk is one chunk of a qrun -H vnode specification: a vnode and the
// resources the chunk uses on it.
type VChunk struct {
	Vnode   string
	Amounts model.Resources
	Labels  map[string]string
}

// place puts the units of cand on vnodes, using at most idleBudget vnodes
// that are idle now. On success the placement is committed and returned
// with one chunk per unit; otherwise nothing changes and why says what did
// not fit.
//
// place=group=resource puts every chunk on vnodes with the same value of
// that resource: the groups are tried in the order of their values, and
// the first where the whole job fits is taken.
func (f *fitState) place(cand *candidate, idleBudget int) (chunks []VChunk, usedIdle int, why string) {
	j := cand.job
	pack := j.Place.Arrangement == "pack" && len(cand.units) > 1
	g := j.Place.Group
	if g == "" && !pack {
		return f.placeIn(cand, idleBudget, f.c.vnodes)
	}
	// The vnode sets to try in turn: each host (place=pack: every chunk
	// on one host, partly used hosts first), split by the value of the
	// group resource (place=group), or the groups alone.
	var sets [][]*vnode
	if pack {
		byHost := map[string][]*vnode{}
		var hosts []string
		for _, idle := range []bool{false, true} {
			for _, v := range f.c.vnodes {
				if h := f.c.hostOf[v.n.Name]; byHost[h] == nil && f.usable(v) && f.idleNow(v) == idle {
					hosts = append(hosts, h)
					byHost[h] = []*vnode{}
				}
			}
		}
		for _, v := range f.c.vnodes {
			if h := f.c.hostOf[v.n.Name]; byHost[h] != nil {
				byHost[h] = append(byHost[h], v)
			}
		}
		for _, h := range hosts {
			sets = append(sets, byHost[h])
		}
	} else {
		sets = [][]*vnode{f.c.vnodes}
	}
	if g != "" {
		var split [][]*vnode
		any := false
		for _, set := range sets {
			byVal := map[string][]*vnode{}
			for _, v := range set {
				if val := v.n.Text[g]; val != "" {
					byVal[val] = append(byVal[val], v)
					any = true
				}
			}
			for _, val := range slices.Sorted(maps.Keys(byVal)) {
				split = append(split, byVal[val])
			}
		}
		if !any {
			return nil, 0, fmt.Sprintf("place=group=%s: no vnode has resource %s", g, g)
		}
		sets = split
	}
	for _, set := range sets {
		if chunks, usedIdle, why = f.placeIn(cand, idleBudget, set); why == "" {
			return chunks, usedIdle, ""
		}
	}
	switch {
	case pack && f.pristine:
		return nil, 0, fmt.Sprintf("place=pack: no host has room for all %d chunks even when empty", len(cand.units))
	case pack:
		return nil, 0, fmt.Sprintf("place=pack: no free host has room for all %d chunks now", len(cand.units))
	}
	return nil, 0, fmt.Sprintf("place=group=%s: no group of vnodes with one %s takes every chunk (%s)", g, g, why)
}

// placeIn is place on the vnodes of set (in topology order) only.
func (f *fitState) placeIn(cand *candidate, idleBudget int, set []*vnode) (chunks []VChunk, usedIdle int, why string) {
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
	mineHost := map[string]bool{}
	excl := map[*vnode]bool{}
	var assign, own []*vnode
	hostScatter := j.Place.Arrangement == "scatter"
	fits := func(v *vnode, u chunkReq) bool {
		if !f.usable(v) || v.n.Queue != "" && v.n.Queue != j.Queue {
			return false
		}
		if h := f.c.hostOf[v.n.Name]; f.c.hasMultiVnodeHosts() && f.c.multiVnodeHost(h) {
			if hostScatter && mineHost[h] && !mine[v] {
				return false // one chunk per host; the vnode case is below
			}
			if hostExclusiveOn(v.n, j.Place) && !mineHost[h] && (!f.hostFree(h) || usedIdle+f.idleOn(h) > idleBudget) {
				return false
			}
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
			if !f.c.checks(k) {
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
			mineHost[f.c.hostOf[v.n.Name]] = true
			own = append(own, v)
			slices.SortFunc(own, func(a, b *vnode) int { return a.id - b.id })
			if f.idleNow(v) {
				usedIdle++
			}
			if exclusiveOn(v.n, j.Place) {
				excl[v] = true
			}
		}
		assign = append(assign, v)
	}
	// tryUnit places u on the first vnode that takes it: this job's own
	// first (except when scattering), then partly used ones, then idle
	// ones, each in topology order; the passes stop at the first fit.
	tryUnit := func(u chunkReq, scatter bool) bool {
		if !scatter {
			for _, v := range own {
				if fits(v, u) {
					use(v, u)
					return true
				}
			}
		}
		passes := [][]*vnode{set, set}
		if len(set) == len(f.c.vnodes) {
			passes = [][]*vnode{f.partly, f.c.vnodes[f.idleFrom:]}
		}
		for pass, idlePass := range []bool{false, true} {
			for _, v := range passes[pass] {
				if mine[v] || !f.usable(v) || f.idleNow(v) != idlePass {
					continue
				}
				if fits(v, u) {
					use(v, u)
					return true
				}
			}
		}
		return false
	}
	switch {
	default:
		scatter := j.Place.Arrangement == "scatter" || j.Place.Arrangement == "vscatter"
		for i, u := range cand.units {
			if !tryUnit(u, scatter) {
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
	// A job exclusive on a multi-vnode host holds all of it.
	for v := range mine {
		if h := f.c.hostOf[v.n.Name]; f.c.multiVnodeHost(h) && hostExclusiveOn(v.n, j.Place) {
			for _, n := range f.c.hostNodes[h] {
				if w := f.c.byName[n.Name]; w != nil && !f.taken[w] {
					if !mine[w] && f.idleNow(w) {
						usedIdle++
					}
					f.taken[w] = true
				}
			}
		}
	}
	for i, v := range assign {
		chunks = append(chunks, VChunk{Vnode: v.n.Name, Amounts: cand.units[i].written, Labels: cand.units[i].wlabels})
	}
	f.advance(slices.Collect(maps.Keys(mine))...)
	return chunks, usedIdle, ""
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
func execVnode(chunks []VChunk) string {
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
