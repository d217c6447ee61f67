// Package cnf encodes a time-and-resource model (encode/cp) as CNF for a
// SAT solver. The encoder writes clauses to a Sink — gini in solver/sat,
// or a DIMACS file for any outside solver (`optsched export --format
// cnf`) — and knows no solver.
//
// The decompositions, constraint by constraint (notation of encode/cp):
//
//   - Start times, order encoding: y_{i,s} ⇔ [s_i ≤ s] for s in the job's
//     domain [Lo_i, Hi_i) (y_{i,s} is false below Lo_i and true from Hi_i),
//     with y_{i,s} → y_{i,s+1}. "s_i = s" is y_{i,s} ∧ ¬y_{i,s−1}.
//   - alternative(job_i, [unit placements], u_i): the units on each node
//     in unary, x_{i,n,k} ⇔ [units_{i,n} ≥ k] with x_{i,n,k+1} → x_{i,n,k};
//     Σ_n units_{i,n} = u_i by a totalizer over these unary numbers whose
//     output u_i is asserted and output u_i + 1 refuted; place=pack adds an
//     at-most-one over the x_{i,n,1}.
//   - synchronize(job_i): structural — all units share y_i.
//   - cumulative against running jobs, and noOverlap against
//     reservations, are static: k units of i on n need s_i ≥ the slot at
//     which k units first fit beside n's running jobs (¬x_{i,n,k} ∨
//     ¬y_{i,rel−1}), and a reservation excludes a range of starts
//     (¬x_{i,n,1} ∨ y_{i,lo−1} ∨ ¬y_{i,hi}).
//   - cumulative(n, l) between waiting jobs, checked at each job's start
//     (usage rises only when a job starts, so the starts are the only
//     instants to check): for every ordered pair, act_{i@j} is implied by
//     "i runs at s_j" (s_i ≤ s_j < s_i + D_i; one clause per slot of s_j);
//     z_{i,j,n,k} is implied by x_{i,n,k} ∧ act_{i@j}; then, when j is on
//     n, Σ_i r_{i,l}·Σ_k z_{i,j,n,k} + r_{j,l}·Σ_k x_{j,n,k} + Σ_running
//     use_l·[s_j < end] ≤ cap_{n,l}, a pseudo-Boolean constraint encoded
//     as a reduced BDD with interval memoisation (Abío et al., "A New Look
//     at BDDs for Pseudo-Boolean Constraints", JAIR 2012). Only the
//     resources j needs are checked at j's start: for the others the
//     check at the latest earlier start covers it.
//   - noOverlap(n) for an exclusive job: ¬x_{i,n,1} ∨ ¬x_{j,n,1} ∨
//     ¬act_{i@j} for every other job i, in both directions.
//   - Objective bound Σ_i ω_i (s_i − Lo_i) ≤ B: a multi-valued decision
//     diagram over the jobs' unary delays [s_i − Lo_i ≥ v] = ¬y_{i,Lo_i+v−1},
//     reduced with the same interval memo, so the diagrams of successive
//     bounds share their nodes; the bound is one literal, AtMost(B), to
//     assume.
//
// Two optional additions help proofs and keep every bound's answer: the
// dominance clauses of left-justified schedules (LeftJustified: a job
// starts at its earliest slot or where something on its nodes ends, else
// it could start a slot earlier at lower cost), and known lower bounds on
// the weighted delay of groups of jobs (ObjectiveGroups), which order the
// objective diagram group by group and make a node false when its budget
// is below the bounds of the groups still ahead.
//
// The compressed time domain (Closure, Compress) keeps of each job's
// start slots only the event slots: Lo_i, the ends of the running jobs
// and reservations on its nodes, and the ends of the other jobs sharing
// a node with it at their own candidates — the slots at which a
// left-justified schedule can start a job, so the optimum and every
// bound's answer are kept. The order encoding then has one variable per
// candidate, and the pair blocks, dominance clauses and objective
// diagrams visit candidates only.
//
// PoolCuts adds the constraints of a counting relaxation (cp.Model.Pool)
// as redundant clauses: at each job's start, the pooled use of the jobs
// then running within the pooled capacity — implied by the model, so no
// schedule is lost.
//
// The optional CH term (CHTerm, for cp.Model.SetCHWeight) counts a job's
// nodes and its nodes below each switch with totalizers; the pair hop
// sum is then a linear function of those counts' literals, and one
// reduced BDD forces [CH_i ≥ v] for every value v the cost can take; the
// objective diagrams add κ·(CH_i − 1) as one more level per job.
//
// The per-(job, node) cumulative/noOverlap blocks can be emitted all at
// once (EncodeAll, a complete CNF as DIMACS needs) or on demand
// (NodeBlock), as solver/sat does: it adds a block when a candidate
// schedule violates it, a lazy but complete decomposition.
package cnf
