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

// A PlaceStatement is a PBS place statement as written ([PBS 2022.1 RG]
// pbs_resources, place): the one parser of that syntax is
// ParsePlaceStatement; ParsePlace reduces a statement to a Place, and
// model/pbs keeps statements as they are for the PBS scheduler.
type PlaceStatement struct {
	// Arrangement is "free" (the default), "pack" (all chunks on one
	// host), "scatter" (one chunk per host) or "vscatter" (one per vnode).
	Arrangement string
	// Sharing is "excl", "exclhost", "shared" or "" (the vnodes' sharing
	// attribute decides).
	Sharing string
	// Group is the resource of group=<resource>, "" when absent.
	Group string
}

// Exclusive reports whether the statement asks for its vnodes (or hosts)
// to itself.
func (p PlaceStatement) Exclusive() bool { return p.Sharing == "excl" || p.Sharing == "exclhost" }

// ParsePlaceStatement parses a place statement such as "scatter:excl",
// "pack:group=switch" or "free": up to one arrangement (free, pack,
// scatter, vscatter), up to one sharing value (excl, exclhost, shared)
// and up to one group=resource, joined by ':' in any order. The empty
// string is the default: free, sharing decided by the vnodes.
func ParsePlaceStatement(s string) (PlaceStatement, error) {
	p := PlaceStatement{Arrangement: "free"}
	t := strings.TrimSpace(s)
	if t == "" {
		return p, nil
	}
	var haveArr, haveShare, haveGroup bool
	for _, tok := range strings.Split(t, ":") {
		tok = strings.TrimSpace(tok)
		switch {
		case tok == "free" || tok == "pack" || tok == "scatter" || tok == "vscatter":
			if haveArr {
				return PlaceStatement{}, fmt.Errorf("%q gives two arrangements (%s and %s)", s, p.Arrangement, tok)
			}
			p.Arrangement, haveArr = tok, true
		case tok == "excl" || tok == "exclhost" || tok == "shared":
			if haveShare {
				return PlaceStatement{}, fmt.Errorf("%q gives two sharing values (%s and %s)", s, p.Sharing, tok)
			}
			p.Sharing, haveShare = tok, true
		case strings.HasPrefix(tok, "group="):
			g := strings.TrimPrefix(tok, "group=")
			if haveGroup || g == "" {
				return PlaceStatement{}, fmt.Errorf("%q: bad group", s)
			}
			p.Group, haveGroup = g, true
		default:
			return PlaceStatement{}, fmt.Errorf("%q: unknown value %q (want free, pack, scatter or vscatter; excl, exclhost or shared; group=resource)", s, tok)
		}
	}
	return p, nil
}

// ParsePlace parses a PBS place statement (ParsePlaceStatement) for the
// time-and-resource model: vscatter is read as scatter (a vnode being a
// node here), exclhost as excl. An empty statement and grouping
// (group=resource) are errors.
func ParsePlace(s string) (Place, error) {
	if strings.TrimSpace(s) == "" {
		return Place{}, fmt.Errorf("empty place statement")
	}
	st, err := ParsePlaceStatement(s)
	if err != nil {
		return Place{}, err
	}
	if st.Group != "" {
		return Place{}, fmt.Errorf("%q: grouping (group=…) is not supported", s)
	}
	var p Place
	switch st.Arrangement {
	case "pack":
		p.Arrangement = ArrangePack
	case "scatter", "vscatter":
		p.Arrangement = ArrangeScatter
	}
	p.Exclusive = st.Exclusive()
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
