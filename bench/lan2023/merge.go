package lan2023

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
)

// MergeTables combines the results of a sharded RunTables (TableConfig
// Shard and Shards; each result as read back from its JSON) into the
// result of the whole run: the epochs in order and the summary over all
// of them. The shards must come from the same protocol — configuration
// apart from the shard, methods, trace and cluster size — and no epoch
// may appear twice; epochs missing from every shard are left out (the
// result's Epochs say which ran). Elapsed becomes the sum of the shards'
// wall times.
func MergeTables(results []TableResult) (*TableResult, error) {
	if len(results) == 0 {
		return nil, fmt.Errorf("%w: nothing to merge", ErrTableConfig)
	}
	base := results[0]
	key := func(r *TableResult) TableConfig {
		c := r.Config
		c.Shard, c.Shards = 0, 0
		c.Workers = 0 // shards may run with other worker counts: same tables
		return c
	}
	out := &TableResult{Benchmark: TablesBenchmark, Config: key(&base), Methods: base.Methods,
		TraceJobs: base.TraceJobs, Nodes: base.Nodes}
	seen := map[int]int{}
	for i := range results {
		r := &results[i]
		if r.Benchmark != TablesBenchmark {
			return nil, fmt.Errorf("%w: report %d is %q, not %q", ErrTableConfig, i+1, r.Benchmark, TablesBenchmark)
		}
		kr, kb := key(r), key(&base)
		if !reflect.DeepEqual(kr, kb) {
			a, _ := json.Marshal(kr)
			b, _ := json.Marshal(kb)
			return nil, fmt.Errorf("%w: report %d has configuration %s, report 1 %s", ErrTableConfig, i+1, a, b)
		}
		if !reflect.DeepEqual(r.Methods, base.Methods) || r.TraceJobs != base.TraceJobs || r.Nodes != base.Nodes {
			return nil, fmt.Errorf("%w: report %d ran other methods, another trace or another cluster than report 1", ErrTableConfig, i+1)
		}
		for _, ep := range r.Epochs {
			if ep.Index < 0 || ep.Index >= base.Config.Epochs {
				return nil, fmt.Errorf("%w: report %d has epoch %d of %d", ErrTableConfig, i+1, ep.Index, base.Config.Epochs)
			}
			if len(ep.Rows) != len(base.Methods) {
				return nil, fmt.Errorf("%w: report %d epoch %d has %d rows for %d methods", ErrTableConfig, i+1, ep.Index, len(ep.Rows), len(base.Methods))
			}
			if j, dup := seen[ep.Index]; dup {
				return nil, fmt.Errorf("%w: epoch %d is in reports %d and %d", ErrTableConfig, ep.Index, j, i+1)
			}
			seen[ep.Index] = i + 1
			out.Epochs = append(out.Epochs, ep)
			out.Windows += ep.Windows
		}
		out.Elapsed += r.Elapsed
	}
	slices.SortFunc(out.Epochs, func(a, b TableEpoch) int { return a.Index - b.Index })
	out.Summary = tblSummarise(out.Methods, out.Epochs)
	return out, nil
}
