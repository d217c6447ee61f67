package sat

import "time"

// Stats are the counters of one Schedule call, typed: Schedule.Stats holds
// them as a map under the names Map gives, for JSON, and Schedule.Details
// holds a *Stats. A field is 0 (false) when its phase did not run.
type Stats struct {
	// ModelOptions are the job-node options of a window too large to
	// model in the time left (the list schedules answered on the window).
	ModelOptions int
	// BuildInterrupted: the model's build ran out of time.
	BuildInterrupted bool
	// TruncatedList: no list schedule finished; a truncated one answered.
	TruncatedList bool
	// IncumbentFromSGS: the serial schedules beat the list schedules as
	// the first incumbent; IncumbentFromSAT: the answer is the search's.
	IncumbentFromSGS, IncumbentFromSAT bool
	// The phases' wall times (ms since Schedule began for Quick; each
	// phase's own for the others) and the bound each proved, in units of
	// W − LB.
	QuickMS, TIMS, PoolMS, GroupMS, ElapsedMS        float64
	TIProvenDelta, PoolProvenDelta, GroupProvenDelta int64
	// TICandidates and TIFixed are the time-indexed relaxation's start
	// candidates and those its reduced costs fixed.
	TICandidates, TIFixed int
	// Search counts the quick and the main search, Prover the proving
	// search beside the main one.
	Search, Prover SearchStats
}

// SearchStats are the counters of the SAT searches of one Schedule.
type SearchStats struct {
	// EncodingInterrupted counts encodings the deadline stopped;
	// EncodingSkipped those not started (too large for the time or
	// memory left), the largest of which had EncodingSkippedVars
	// variables.
	EncodingInterrupted, EncodingSkipped, EncodingSkippedVars int
	// EncodingSkippedLeftMS is the time that was left (ms, -1 without a
	// deadline) when the largest skipped encoding was refused; it names
	// the reason of an answer without a schedule, not a counter of Map.
	EncodingSkippedLeftMS float64
	// DomainSlots are the start slots of the domains on the grid,
	// DomainCandidates those the compressed domains keep; ClosureFallback
	// counts searches that kept the grid (closure too large).
	DomainSlots, DomainCandidates, ClosureFallback int
	// DiagramClauses are the objective diagrams' clauses, LowDiagramClauses
	// those of probes from below; ObjectiveTooLarge: no exact diagram fit.
	DiagramClauses, LowDiagramClauses int
	ObjectiveTooLarge                 bool
	// CoarseProbes, FixProbeStarts (starts the fixing excluded),
	// SGSImprovements and LNSImprovements count the probes' kinds and
	// the incumbents the interludes found.
	CoarseProbes, FixProbeStarts, SGSImprovements, LNSImprovements int
	// ProvenDelta is the bound proved, in units of W − LB; SATCalls and
	// NodeBlocks the solver calls and the node blocks added lazily; Vars
	// and Clauses the last encoding's size.
	ProvenDelta              int64
	SATCalls, NodeBlocks     int
	Vars, Clauses            int
	LNSMS, SolveMS, EncodeMS float64
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Map returns the counters under their JSON names, the non-zero ones
// ("quick_ms", "prover_sat_calls", ...).
func (st *Stats) Map() map[string]float64 {
	m := map[string]float64{}
	put := func(k string, v float64) {
		if v != 0 {
			m[k] = v
		}
	}
	put("model_options", float64(st.ModelOptions))
	put("build_interrupted", b2f(st.BuildInterrupted))
	put("truncated_list", b2f(st.TruncatedList))
	put("incumbent_from_sgs", b2f(st.IncumbentFromSGS))
	put("incumbent_from_sat", b2f(st.IncumbentFromSAT))
	put("quick_ms", st.QuickMS)
	put("ti_ms", st.TIMS)
	put("pool_ms", st.PoolMS)
	put("group_ms", st.GroupMS)
	put("elapsed_ms", st.ElapsedMS)
	put("ti_proven_delta", float64(st.TIProvenDelta))
	put("pool_proven_delta", float64(st.PoolProvenDelta))
	put("group_proven_delta", float64(st.GroupProvenDelta))
	put("ti_candidates", float64(st.TICandidates))
	put("ti_fixed", float64(st.TIFixed))
	st.Search.put("", put)
	st.Prover.put("prover_", put)
	return m
}

func (s *SearchStats) put(prefix string, put func(string, float64)) {
	for _, kv := range []struct {
		k string
		v float64
	}{
		{"encoding_interrupted", float64(s.EncodingInterrupted)},
		{"encoding_skipped", float64(s.EncodingSkipped)},
		{"encoding_skipped_vars", float64(s.EncodingSkippedVars)},
		{"domain_slots", float64(s.DomainSlots)},
		{"domain_candidates", float64(s.DomainCandidates)},
		{"closure_fallback", float64(s.ClosureFallback)},
		{"diagram_clauses", float64(s.DiagramClauses)},
		{"low_diagram_clauses", float64(s.LowDiagramClauses)},
		{"objective_too_large", b2f(s.ObjectiveTooLarge)},
		{"coarse_probes", float64(s.CoarseProbes)},
		{"fix_probe_starts", float64(s.FixProbeStarts)},
		{"sgs_improvements", float64(s.SGSImprovements)},
		{"lns_improvements", float64(s.LNSImprovements)},
		{"proven_delta", float64(s.ProvenDelta)},
		{"sat_calls", float64(s.SATCalls)},
		{"node_blocks", float64(s.NodeBlocks)},
		{"vars", float64(s.Vars)},
		{"clauses", float64(s.Clauses)},
		{"lns_ms", s.LNSMS},
		{"solve_ms", s.SolveMS},
		{"encode_ms", s.EncodeMS},
	} {
		put(prefix+kv.k, kv.v)
	}
}
