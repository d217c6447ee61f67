// Package learn is optsched's one learning core: the pieces of a small
// neural network and of its training by proximal policy optimisation
// (PPO) that every learned design shares, so that no design carries a
// second copy.
//
//   - Layers (Layer): Linear (torch.nn.Linear), Conv1d (without padding,
//     channel-major, as a matrix product over the unfolded input), Tanh
//     and ReLU, each with a forward pass on a batch and a backward pass
//     that accumulates its parameters' gradients; every backward pass is
//     checked against central finite differences in the tests. Matrix
//     products run on gonum's BLAS (Gemm).
//   - Seq, a stack of layers (an MLP is NewMLP), with Clone (shared
//     parameters, own buffers) and Copy (own parameters).
//   - Adam (Kingma and Ba; torch's defaults) with a clip of the
//     gradients' global norm.
//   - PPO: the masked softmax over a variable number of valid actions
//     (padding gets probability exactly 0), the action pick (greedy or
//     sampled), the gradient of the clipped surrogate with an entropy
//     bonus with respect to the logits (PPOLogitGrad), generalised
//     advantage estimation (GAE) and the per-batch normalisation of
//     advantages (Normalize).
//   - The PPO trainer the designs share: the recorded Decision (a choice
//     among N scored rows), its advantages and returns (EpisodeGAE,
//     NormalizeAdv), the minibatch passes (Minibatches, Pass), the
//     actor's step over rows of variable width or strided with masks
//     (PPO.Actor), the critic's step (PPO.Critic), and the defaulting of
//     a trainer's configuration (FillZero).
//   - NewRand, the seeded generator every trainer draws from (PCG: the
//     same seed and stream give the same numbers on every machine).
//
// heuristics/nsa (neural simulated annealing) and bench/learned (the
// learned job-selection designs) train with it. It imports no optsched
// package.
package learn
