// Package nsa owns neural simulated annealing (NSA), [Lan23] §V: simulated
// annealing on the dynamic continuity strategy (heuristics.Anneal) whose
// repair step — where a removed job restarts in the current idle sequence
// — is chosen by a policy network trained with proximal policy
// optimisation (PPO), and everything that makes that policy: the state
// encoding, the networks of the paper's Table II with their forward and
// backward passes, Adam, the PPO trainer, the weights file and the
// shipped weights.
//
//   - State (§V-B1): a q×β matrix, q = 100 positions of the current idle
//     sequence (zero-padded), β = 4 features per position — the node's
//     leaf switch and pod (normalised ids), the current job's size
//     n_j/n_max and the mean size of the other jobs still to place /n_max
//     — or β = 5 with the published code's "idle" channel. Padding is
//     masked: masked logits are set to the lowest value before the
//     softmax (§V-B2), so they are never chosen.
//   - Networks (Table II): CNN-3 = Conv1d(β,16,10,1)–Tanh–Conv1d(16,8,5,2)–
//     Flatten(352)–Linear(352,256)–Linear(256,100) by default; CNN-1,
//     CNN-2, FCN-1, FCN-2, FCN-3 for the ablation (see Arch). The critic
//     is the same network with one output. The layers, Adam and the PPO
//     pieces (masked softmax, clipped-objective gradient) are those of
//     the learning core heuristics/learn, which every learned design
//     shares; matrix products run on gonum's BLAS; every layer's backward
//     pass is checked against finite differences in the tests.
//   - Training (§V-B3, Train): episodes destroy 1…n^D jobs of an SA
//     solution of a window and let the policy reinsert them largest
//     first, one start per job; the reward is 0 until the last job, then
//     minus the CH cost of the reinserted jobs. PPO with the clipped
//     objective (ε = 0.2), Adam (actor 3e-4, critic 1e-3), γ = 0.99, K
//     epochs per batch and an entropy bonus.
//   - NSA (the solver): heuristics.Anneal with the policy as its
//     StartChooser; same interface (solver.Solver, solver.WarmStarter)
//     and the same checks as SA. Its repair steps compute exactly what
//     Net.Forward computes, faster: the distribution of a state already
//     seen in the solve is reused (annealing revisits states: about nine
//     steps in ten on the Table III/IV windows), and a new state runs a
//     batch-1 pass (infer) with gonum's summation order written out in
//     SSE2 and the padding positions of the convolutions computed once.
//
// [Lan23]: Z. Lan et al., "Optimization of Topology-Aware Job Allocation
// on a High-Performance Computing Cluster by Neural Simulated Annealing",
// IEEE CLUSTER 2023, arXiv:2302.03517.
package nsa
