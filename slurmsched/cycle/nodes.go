package cycle

import "github.com/optsched/optsched/model/hostlist"

// expandNodes expands the --nodes hostlist.
func expandNodes(list string) ([]string, error) { return hostlist.Expand(list) }
