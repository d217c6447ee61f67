package pbs

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/optsched/optsched/model"
)

// ErrNoTiers is returned by TierTopology when no vnode has any of the
// level resources: the cluster does not describe its switches that way.
var ErrNoTiers = errors.New("pbs: no vnode has a topology resource")

// TierTopology builds the switch tree that custom vnode resources
// describe, as ALCF's systems do with resources_available.tier0 and
// tier1: each resource names one level of switches, and each vnode's value
// names its switch at that level. On Polaris tier0 = "x3002-g0" (a rack)
// sits under tier1 = "g0" (a group); elsewhere tier0 = "x4000" is the
// rack and tier1 = "x4000c0" a chassis inside it. The order of levels is
// therefore not taken from their names: the level with the most distinct
// values is the leaf level, and each level must nest in the next one (a
// value at a finer level under a single value at the coarser one), which
// is checked.
//
// Switches are named "<resource>=<value>". Vnodes are numbered leaf by
// leaf, sorted by their switch values from the top down and then by name
// in natural order (n2 before n10), so that the idle sequence runs through
// the tree. Every vnode must have every level resource; ErrNoTiers comes
// back when none has any.
func TierTopology(nodes []Node, levels []string) (*model.Topology, error) {
	const src = "pbsnodes"
	if len(levels) == 0 {
		return nil, errors.New("pbs: no topology levels given")
	}
	seenLevel := map[string]bool{}
	for _, l := range levels {
		if l == "" || seenLevel[l] {
			return nil, fmt.Errorf("pbs: topology level %q is empty or given twice", l)
		}
		seenLevel[l] = true
	}
	found := false
	for i := range nodes {
		for _, l := range levels {
			if _, ok := nodes[i].Text[l]; ok {
				found = true
			}
		}
	}
	if !found {
		return nil, ErrNoTiers
	}
	vals := make([][]string, len(nodes)) // vals[i][k]: node i's value at levels[k]
	distinct := make([]map[string]bool, len(levels))
	for k := range levels {
		distinct[k] = map[string]bool{}
	}
	for i := range nodes {
		vals[i] = make([]string, len(levels))
		for k, l := range levels {
			v, ok := nodes[i].Text[l]
			if !ok || strings.TrimSpace(v) == "" {
				return nil, &Error{Source: src, Object: "node " + nodes[i].Name, Field: "resources_available." + l,
					Reason: fmt.Sprintf("missing: every vnode of the topology needs %s", strings.Join(levels, ", "))}
			}
			vals[i][k] = v
			distinct[k][v] = true
		}
	}
	// Finest level first: most distinct values; ties keep the given order.
	order := make([]int, len(levels))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(distinct[b]) - len(distinct[a]) })
	// Each finer value must sit under one coarser value.
	for x := 0; x+1 < len(order); x++ {
		fine, coarse := order[x], order[x+1]
		parent := map[string]int{} // fine value -> first node index
		for i := range nodes {
			v := vals[i][fine]
			if first, ok := parent[v]; ok && vals[first][coarse] != vals[i][coarse] {
				return nil, &Error{Source: src, Object: "node " + nodes[i].Name, Field: "resources_available." + levels[coarse],
					Reason: fmt.Sprintf("%q, but %s %q is under %s %q on node %s: the levels do not nest",
						vals[i][coarse], levels[fine], v, levels[coarse], vals[first][coarse], nodes[first].Name)}
			} else if !ok {
				parent[v] = i
			}
		}
	}
	idx := make([]int, len(nodes))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		for x := len(order) - 1; x >= 0; x-- {
			if c := NaturalCompare(vals[a][order[x]], vals[b][order[x]]); c != 0 {
				return c
			}
		}
		return NaturalCompare(nodes[a].Name, nodes[b].Name)
	})
	swName := func(k int, v string) string { return levels[k] + "=" + v }
	var specs []model.SwitchSpec
	specIdx := map[string]int{}
	add := func(name string) int {
		if i, ok := specIdx[name]; ok {
			return i
		}
		specIdx[name] = len(specs)
		specs = append(specs, model.SwitchSpec{Name: name})
		return len(specs) - 1
	}
	leaf := order[0]
	for _, i := range idx {
		s := add(swName(leaf, vals[i][leaf]))
		specs[s].Nodes = append(specs[s].Nodes, nodes[i].Name)
		for x := 0; x+1 < len(order); x++ {
			child := swName(order[x], vals[i][order[x]])
			p := add(swName(order[x+1], vals[i][order[x+1]]))
			if !slices.Contains(specs[p].Switches, child) {
				specs[p].Switches = append(specs[p].Switches, child)
			}
		}
	}
	t, err := model.BuildTopology(specs)
	if err != nil {
		return nil, &Error{Source: src, Reason: err.Error()}
	}
	return t, nil
}

// FlatTopology puts the named vnodes under one switch, in natural name
// order: the topology of a cluster that describes no switches (every pair
// of nodes two hops apart).
func FlatTopology(names []string) (*model.Topology, error) {
	sorted := slices.Clone(names)
	slices.SortFunc(sorted, NaturalCompare)
	return model.BuildTopology([]model.SwitchSpec{{Name: "switch=all", Nodes: sorted}})
}

// NaturalCompare orders strings with their digit runs compared as
// numbers: "n2" < "n10" < "x1000c0". It returns -1, 0 or +1.
func NaturalCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			na := strings.TrimLeft(a[si:i], "0")
			nb := strings.TrimLeft(b[sj:j], "0")
			if len(na) != len(nb) {
				return cmp.Compare(len(na), len(nb))
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			// Equal numbers: fewer leading zeros first, for a total order.
			if c := cmp.Compare(i-si, j-sj); c != 0 {
				return c
			}
			continue
		}
		if ca != cb {
			return cmp.Compare(int(ca), int(cb))
		}
		i++
		j++
	}
	return cmp.Compare(len(a)-i, len(b)-j)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
