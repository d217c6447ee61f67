package pbs

import (
	"fmt"
	"strings"

	"github.com/optsched/optsched/model/hostlist"
)

// ResolveVnodes resolves a list of vnode names and hostlist expressions
// (the --nodes of `optsched pbs`) against the vnodes that exist. The list
// is split at the commas outside brackets; each entry is, in this order:
//
//   - the name of an existing vnode, taken literally: "pbshost[0]" names
//     the child vnode of a multi-vnode host, whose PBS name has brackets;
//   - a Slurm-style hostlist (hostlist.Expand): "cn[00-07]" names
//     cn00 … cn07, of which the existing ones are taken;
//   - when the hostlist names no existing vnode, the same ranges with the
//     brackets kept, the PBS naming of a multi-vnode host's children:
//     "pbshost[0-3]" names pbshost[0] … pbshost[3].
//
// It returns the existing vnodes named, in order without repeats, and the
// entries that named none (for a note). An entry that is neither an
// existing name nor a valid hostlist is an error.
func ResolveVnodes(list string, exists func(string) bool) (names, unmatched []string, err error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil, fmt.Errorf("empty vnode list")
	}
	seen := map[string]bool{}
	take := func(n string) bool {
		if !exists(n) {
			return false
		}
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
		return true
	}
	for _, entry := range hostlist.Split(list) {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			return nil, nil, fmt.Errorf("vnode list %q: empty entry", list)
		}
		if take(entry) {
			continue
		}
		expanded, err := hostlist.Expand(entry)
		if err != nil {
			return nil, nil, err
		}
		found := false
		for _, n := range expanded {
			found = take(n) || found
		}
		if !found && strings.Contains(entry, "[") {
			// The brackets kept: mark them so that the expansion leaves
			// them in place (the marks cannot occur in a valid name).
			marked := strings.NewReplacer("[", "\x01[", "]", "]\x02").Replace(entry)
			kept, err := hostlist.Expand(marked)
			if err == nil {
				unmark := strings.NewReplacer("\x01", "[", "\x02", "]")
				for _, n := range kept {
					found = take(unmark.Replace(n)) || found
				}
			}
		}
		if !found {
			unmatched = append(unmatched, entry)
		}
	}
	return names, unmatched, nil
}
