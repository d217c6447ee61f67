package model

import (
	"fmt"
	"strings"
)

// A Place is a parsed PBS place statement (qsub -l place=…): how a job's
// units are arranged over nodes and whether the job shares its nodes. The
// zero value is PBS's default, free arrangement on shared nodes.
type Place struct {
	// Arrangement is ArrangeFree (units go anywhere, several to a node
	// when they fit; ParsePlace stores it as ""), ArrangePack (all units
	// on one node) or ArrangeScatter (at most one unit per node).
	Arrangement string
	// Exclusive reports "excl": while the job runs, no other job may use
	// its nodes (a noOverlap over the job and every other job on each of
	// its nodes, [Bridi16] §4).
	Exclusive bool
}

// The arrangements of a Place.
const (
	ArrangeFree    = "free"
	ArrangePack    = "pack"
	ArrangeScatter = "scatter"
)

// ParsePlace parses a PBS place statement: up to one arrangement (free,
// pack, scatter; vscatter is read as scatter, a vnode being a node here)
// and up to one sharing value (shared, excl; exclhost is read as excl),
// joined by ':' in any order. Grouping (group=resource) is not supported
// and is an error.
func ParsePlace(s string) (Place, error) {
	var p Place
	t := strings.TrimSpace(s)
	if t == "" {
		return p, fmt.Errorf("empty place statement")
	}
	var arr, share string
	for _, f := range strings.Split(t, ":") {
		f = strings.TrimSpace(f)
		switch f {
		case "free", "pack", "scatter", "vscatter":
			if arr != "" {
				return Place{}, fmt.Errorf("%q gives two arrangements (%s and %s)", s, arr, f)
			}
			arr = f
		case "shared", "excl", "exclhost":
			if share != "" {
				return Place{}, fmt.Errorf("%q gives two sharing values (%s and %s)", s, share, f)
			}
			share = f
		default:
			if strings.HasPrefix(f, "group=") {
				return Place{}, fmt.Errorf("%q: grouping (group=…) is not supported", s)
			}
			return Place{}, fmt.Errorf("%q: unknown value %q (want free, pack, scatter, vscatter, shared, excl or exclhost)", s, f)
		}
	}
	switch arr {
	case "", "free":
		p.Arrangement = "" // ArrangeFree, stored as the zero value
	case "pack":
		p.Arrangement = ArrangePack
	default:
		p.Arrangement = ArrangeScatter
	}
	p.Exclusive = share == "excl" || share == "exclhost"
	return p, nil
}

// Arrange returns the arrangement, ArrangeFree for "".
func (p Place) Arrange() string {
	if p.Arrangement == "" {
		return ArrangeFree
	}
	return p.Arrangement
}

// String writes p as a PBS place statement ("pack", "free:excl"); "" for
// the default (free, shared), which ParsePlace does not accept but a
// window file expresses by leaving place out.
func (p Place) String() string {
	arr := p.Arrange()
	if p.Exclusive {
		return arr + ":excl"
	}
	if arr == ArrangeFree {
		return ""
	}
	return arr
}
