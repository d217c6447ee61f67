// Package dcas owns the free formulation of a whole-node window: the
// allocation problem of [Lan23] §III over any node sets (the dynamic
// strategy, DCAS), not only the runs of consecutive idle positions that
// M_SCAS and the CSP graph allow.
//
// The CH cost of a job depends only on how many of its nodes sit under each
// switch, not on which nodes: with d(a) the links from node a to the
// (virtual) top of the tree and X_s the job's nodes under switch s, the
// hops over all unordered pairs of its n nodes are
//
//	H = (n−1)·Σ_a d(a) − 2·Σ_s C(X_s, 2)
//
// (model.HopCounter), and Eq. (1) is model.CostModel.FromHops(n, H). So the
// free problem is a program over counts: X[j][v], the nodes of job j under
// tree vertex v, with the idle nodes under each leaf switch as capacity and
// n_j as demand. Tree is that count tree (the window's switch tree cut
// down to the switches with idle nodes), and Build writes it as a 0-1
// program for outside MILP solvers:
//
//	z[j,v,k] ∈ {0,1}    job j has at least k nodes under vertex v
//	                    (k = 1..min(n_j, idle under v)), so X[j][v] = Σ_k z[j,v,k]
//	mono   z[j,v,k+1] ≤ z[j,v,k]
//	dem    X[j][root] = n_j              (the roots' sum under a virtual top)
//	flow   X[j][v] = Σ_{c child of v} X[j][c]
//	cap    Σ_j X[j][ℓ] ≤ idle(ℓ)         every leaf switch ℓ
//	cost   n_j·C_j ≥ V_j − n_j + 1,  C_j ≥ 1,  C_j = Σ_b 2^b·u[j,b]
//	min    Σ_j C_j
//
// where V_j is c·(H_j − C(n_j,2)) under lan-code and 2c·H_j under
// lan-paper, and C(X,2) = Σ_k (k−1)·z[j,v,k] because z is monotone. Since
// V_j is an integer, the least integer C_j ≥ (V_j − n_j + 1)/n_j is
// ⌊V_j/n_j⌋, so the program's optimum is exactly the window's total CH
// cost, integer division included. Decode turns counts back into node
// lists: any X idle nodes of a leaf serve, since the cost cannot tell them
// apart.
//
// [Lan23]: Z. Lan et al., IEEE CLUSTER 2023.
package dcas
