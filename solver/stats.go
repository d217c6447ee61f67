package solver

// This file holds the answers' statistics, typed: a struct per solver
// family (as gonum's optimize.Stats), so that a program — a test, a
// benchmark, the -v listing — reads a field, not a name in a map.

// Stats are the counters of an answer: one struct per solver family,
// non-nil for the families that took part. A Portfolio's answer carries
// its own (Portfolio) beside those of its exact solver and its fallback.
//
// In an answer document they are the "stats" object: a key per family
// that took part, and in it every field of the family under the name its
// json tag gives. Those names are stable (docs/formats.md): a field is
// added, never renamed; one that does not apply is null.
type Stats struct {
	Portfolio *PortfolioStats `json:"portfolio,omitempty"`
	CSP       *CSPStats       `json:"csp,omitempty"`
	Free      *FreeStats      `json:"free,omitempty"`
	LP        *LPStats        `json:"lp,omitempty"`
	Brute     *BruteStats     `json:"brute,omitempty"`
	Anneal    *AnnealStats    `json:"anneal,omitempty"`
	Mishra    *MishraStats    `json:"mishra,omitempty"`
	Slurm     *SlurmStats     `json:"slurm,omitempty"`
	SAT       *SATStats       `json:"sat,omitempty"`
	BnB       *BnBStats       `json:"bnb,omitempty"`
}

// Empty reports whether no family's counters are set.
func (s *Stats) Empty() bool { return *s == Stats{} }

// Merge sets every family of s that is nil to o's.
func (s *Stats) Merge(o Stats) {
	merge(&s.Portfolio, o.Portfolio)
	merge(&s.CSP, o.CSP)
	merge(&s.Free, o.Free)
	merge(&s.LP, o.LP)
	merge(&s.Brute, o.Brute)
	merge(&s.Anneal, o.Anneal)
	merge(&s.Mishra, o.Mishra)
	merge(&s.Slurm, o.Slurm)
	merge(&s.SAT, o.SAT)
	merge(&s.BnB, o.BnB)
}

func merge[T any](dst **T, src *T) {
	if *dst == nil {
		*dst = src
	}
}

// PortfolioStats say how a Portfolio's answer came about.
type PortfolioStats struct {
	// ExactObjective is the objective of the exact solver's incumbent,
	// nil when it had none; FallbackObjective the fallback's, nil when
	// the fallback did not run.
	ExactObjective    *int64 `json:"exact_objective"`
	FallbackObjective *int64 `json:"fallback_objective"`
	// FallbackBelowExactBound: the fallback, on a wider formulation, went
	// below the exact solver's bound, which was dropped.
	FallbackBelowExactBound bool `json:"fallback_below_exact_bound"`
	// ExactTooLarge: the exact solver refused the problem (ErrTooLarge).
	ExactTooLarge bool `json:"exact_too_large"`
	// ExactAbandoned: the exact solver overran its share and was
	// abandoned; what it published stood.
	ExactAbandoned bool `json:"exact_abandoned"`
	// ExactNotStarted: the exact solver's share was spent before it
	// could start.
	ExactNotStarted bool `json:"exact_not_started"`
	// ExactRerun: the exact solver ran again in the time the fallback
	// left.
	ExactRerun bool `json:"exact_rerun"`
}

// CSPStats are the counters of the csp solver (the shortest-path model
// of the SCAS problem, its DP, Lagrangian and column-generation bounds
// and its dives).
type CSPStats struct {
	// Method is how the bound was proved or sought: trivial (every job
	// on a cheapest block of its size), dp (the exact DP over the
	// states), lagrange (the Lagrangian relaxation); Single: the
	// one-job shortcut answered.
	Method string `json:"method"`
	Single bool   `json:"single"`
	// Lazy: the trivial answer was found without pricing every block,
	// each job at the first free block of the least price any block of
	// its size can have (model.CostModel.MinCost).
	Lazy bool `json:"lazy"`
	// LazyFellBack: the lazy trivial path was tried and did not answer
	// (a job found no free block of that least price, or the topology
	// has no such price), so every block was priced.
	LazyFellBack bool `json:"lazy_fell_back"`
	// InterruptedBuilding: the deadline came while the graph was built;
	// the sequential placement answered.
	InterruptedBuilding bool `json:"interrupted_building"`
	// States is the size of the DP's state space (capped at its limit).
	States int `json:"states"`
	// The exact DP: rotation DPs run and skipped by their bound, wrap
	// DPs run, wraps alive, segment DPs.
	RotationDPs      int `json:"rotation_dps"`
	RotationsSkipped int `json:"rotations_skipped"`
	WrapDPs          int `json:"wrap_dps"`
	WrapsAlive       int `json:"wraps_alive"`
	SegmentDPs       int `json:"segment_dps"`
	// The Lagrangian relaxation and the column generation.
	LagrangeIterations   int     `json:"lagrange_iterations"`
	ColgenIterations     int     `json:"colgen_iterations"`
	ColgenMaster         float64 `json:"colgen_master"`
	ColgenWrapDPs        int     `json:"colgen_wrap_dps"`
	DiveColgenIterations int     `json:"dive_colgen_iterations"`
	// The dives and how they ended.
	Dives             int `json:"dives"`
	DiveRounds        int `json:"dive_rounds"`
	DiveBacktracks    int `json:"dive_backtracks"`
	DiveEndStuck      int `json:"dive_end_stuck"`
	DiveEndDP         int `json:"dive_end_dp"`
	DiveEndBacktracks int `json:"dive_end_backtracks"`
	DiveEndInfeasible int `json:"dive_end_infeasible"`
	DiveEndPruned     int `json:"dive_end_pruned"`
	// The reduced-cost search and the fixing DP.
	RCRoots          int `json:"rc_roots"`
	RCNodes          int `json:"rc_nodes"`
	RCRounds         int `json:"rc_rounds"`
	FixKeptIntegral  int `json:"fix_kept_integral"`
	FixResidualCells int `json:"fix_residual_cells"`
	LNSMoves         int `json:"lns_moves"`
	// ElapsedMS is the wall time of the solve.
	ElapsedMS float64 `json:"elapsed_ms"`
}

// FreeStats are the counters of the free solver (the DCAS problem).
type FreeStats struct {
	// SCASObjective is the objective of the SCAS optimum (or incumbent)
	// it starts from, nil when csp gave none; SCASOptimal whether csp
	// proved it.
	SCASObjective *int64 `json:"scas_objective"`
	SCASOptimal   bool   `json:"scas_optimal"`
	// LSObjective is the objective after the local search.
	LSObjective int64 `json:"ls_objective"`
	// RootBound is the bound at the root, LagrangeBound the Lagrangian
	// one (nil when not computed).
	RootBound     int64    `json:"root_bound"`
	LagrangeBound *float64 `json:"lagrange_bound"`
	// Nodes are the branch-and-bound nodes; Proven: optimality proved.
	Nodes  int64 `json:"nodes"`
	Proven bool  `json:"proven"`
	// ElapsedMS is the wall time of the solve.
	ElapsedMS float64 `json:"elapsed_ms"`
}

// LPStats are the counters of the LP-based solvers of the M_SCAS
// program: lp_solve (branch and bound) and CLP (the LP relaxation,
// rounded). A counter a solver does not report is nil.
type LPStats struct {
	// Formulation is the program's form (strong or paper); Rows, Cols
	// and Nonzeros its size (0 when it was not built in time).
	Formulation string `json:"formulation"`
	Rows        int    `json:"rows"`
	Cols        int    `json:"cols"`
	Nonzeros    int    `json:"nonzeros"`
	// Status is the LP solver's own status code (lp_solve's solve()
	// result, CLP's problem status), -1 when it did not run or was
	// abandoned.
	Status int `json:"lp_status"`
	// Iterations (simplex) and Nodes (branch and bound): lp_solve's;
	// CLP (lanl/clp) exposes neither.
	Iterations *int64 `json:"iterations"`
	Nodes      *int64 `json:"nodes"`
	// Integral, CLP: whether the LP solution is integral.
	Integral *bool `json:"lp_integral"`
	// Objective and DualBound, CLP: its objective value and the
	// Lagrangian bound of its duals, when finite.
	Objective *float64 `json:"lp_objective"`
	DualBound *float64 `json:"lp_dual_bound"`
	// SolveMS is the wall time of the LP solver's call (loading the
	// matrix included).
	SolveMS float64 `json:"lp_ms"`
}

// BruteStats are the counters of the brute-force enumeration.
type BruteStats struct {
	// Steps are the partial placements visited.
	Steps int `json:"steps"`
}

// AnnealStats are the counters of simulated annealing (sa, and nsa,
// whose repair is a policy).
type AnnealStats struct {
	// Steps are the moves tried, Accepted those kept (all of them with
	// PaperCompat), Improvements those that bettered the best.
	Steps        int `json:"steps"`
	Accepted     int `json:"accepted"`
	Improvements int `json:"improvements"`
}

// MishraStats are the counters of the Mishra allocators (adaptive: which
// rule placed each job).
type MishraStats struct {
	GreedyPicks   int `json:"greedy_picks"`
	BalancedPicks int `json:"balanced_picks"`
}

// SlurmStats are the counters of the Slurm allocator.
type SlurmStats struct {
	// FirstFitJobs were placed first-fit because the time ran out.
	FirstFitJobs int `json:"first_fit_jobs"`
}

// BnBStats are the counters of the branch-and-bound scheduler of the
// time-and-resource model.
type BnBStats struct {
	// ModelSkipped: the model could not be built in the time left and
	// the list schedules answered; TruncatedList: none of them finished,
	// a truncated one answered.
	ModelSkipped  bool `json:"model_skipped"`
	TruncatedList bool `json:"truncated_list"`
	// Nodes are the search nodes visited.
	Nodes int64 `json:"nodes"`
	// ElapsedMS is the wall time of the schedule.
	ElapsedMS float64 `json:"elapsed_ms"`
}

// SATStats are the counters of one call of the sat scheduler (the
// time-and-resource model). A field is 0 (false) when its phase did not
// run.
type SATStats struct {
	// ModelOptions are the job-node options of a window too large to
	// model in the time left (the list schedules answered on the window).
	ModelOptions int `json:"model_options"`
	// BuildInterrupted: the model's build ran out of time.
	BuildInterrupted bool `json:"build_interrupted"`
	// TruncatedList: no list schedule finished; a truncated one answered.
	TruncatedList bool `json:"truncated_list"`
	// IncumbentFromSGS: the serial schedules beat the list schedules as
	// the first incumbent; IncumbentFromSAT: the answer is the search's.
	IncumbentFromSGS bool `json:"incumbent_from_sgs"`
	IncumbentFromSAT bool `json:"incumbent_from_sat"`
	// The phases' wall times (ms since Solve began for Quick; each
	// phase's own for the others) and the bound each proved, in units of
	// W − LB.
	QuickMS          float64 `json:"quick_ms"`
	TIMS             float64 `json:"ti_ms"`
	PoolMS           float64 `json:"pool_ms"`
	GroupMS          float64 `json:"group_ms"`
	ElapsedMS        float64 `json:"elapsed_ms"`
	TIProvenDelta    int64   `json:"ti_proven_delta"`
	PoolProvenDelta  int64   `json:"pool_proven_delta"`
	GroupProvenDelta int64   `json:"group_proven_delta"`
	// TICandidates and TIFixed are the time-indexed relaxation's start
	// candidates and those its reduced costs fixed.
	TICandidates int `json:"ti_candidates"`
	TIFixed      int `json:"ti_fixed"`
	// Search counts the quick and the main search, Prover the proving
	// search beside the main one.
	Search SATSearchStats `json:"search"`
	Prover SATSearchStats `json:"prover"`
}

// SATSearchStats are the counters of the SAT searches of one sat call.
// gini, the SAT solver, does not expose its conflicts and decisions
// (they are in its internal packages): SATCalls, Vars and Clauses are
// what the encoding and the calls show.
type SATSearchStats struct {
	// EncodingInterrupted counts encodings the deadline stopped;
	// EncodingSkipped those not started (too large for the time or
	// memory left), the largest of which had EncodingSkippedVars
	// variables.
	EncodingInterrupted int `json:"encoding_interrupted"`
	EncodingSkipped     int `json:"encoding_skipped"`
	EncodingSkippedVars int `json:"encoding_skipped_vars"`
	// EncodingSkippedLeftMS is the time that was left (ms, -1 without a
	// deadline) when the largest skipped encoding was refused; it names
	// the reason of an answer without a schedule.
	EncodingSkippedLeftMS float64 `json:"encoding_skipped_left_ms"`
	// DomainSlots are the start slots of the domains on the grid,
	// DomainCandidates those the compressed domains keep; ClosureFallback
	// counts searches that kept the grid (closure too large).
	DomainSlots      int `json:"domain_slots"`
	DomainCandidates int `json:"domain_candidates"`
	ClosureFallback  int `json:"closure_fallback"`
	// DiagramClauses are the objective diagrams' clauses, LowDiagramClauses
	// those of probes from below; ObjectiveTooLarge: no exact diagram fit.
	DiagramClauses    int  `json:"diagram_clauses"`
	LowDiagramClauses int  `json:"low_diagram_clauses"`
	ObjectiveTooLarge bool `json:"objective_too_large"`
	// CoarseProbes, FixProbeStarts (starts the fixing excluded),
	// SGSImprovements and LNSImprovements count the probes' kinds and
	// the incumbents the interludes found.
	CoarseProbes    int `json:"coarse_probes"`
	FixProbeStarts  int `json:"fix_probe_starts"`
	SGSImprovements int `json:"sgs_improvements"`
	LNSImprovements int `json:"lns_improvements"`
	// ProvenDelta is the bound proved, in units of W − LB; SATCalls and
	// NodeBlocks the solver calls and the node blocks added lazily; Vars
	// and Clauses the last encoding's size.
	ProvenDelta int64   `json:"proven_delta"`
	SATCalls    int     `json:"sat_calls"`
	NodeBlocks  int     `json:"node_blocks"`
	Vars        int     `json:"vars"`
	Clauses     int     `json:"clauses"`
	LNSMS       float64 `json:"lns_ms"`
	SolveMS     float64 `json:"solve_ms"`
	EncodeMS    float64 `json:"encode_ms"`
}
