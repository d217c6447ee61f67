package nsa

import (
	"bytes"
	"sync"
)

// shippedWeights is set by shipped_weights.go once weights are trained.
var shippedWeights []byte

var shippedOnce = sync.OnceValues(func() (*Policy, error) {
	return ReadPolicy(bytes.NewReader(shippedWeights))
})

// Shipped returns the policy shipped with optsched (the weights file
// embedded from weights/nsa-cnn3.bin.gz, produced by `optsched train nsa`
// with its defaults). The policy is shared: it is read-only in use.
func Shipped() (*Policy, error) { return shippedOnce() }
