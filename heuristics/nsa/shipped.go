package nsa

import (
	"bytes"
	_ "embed" // the shipped weights
	"sync"
)

//go:embed weights/nsa-cnn3.bin.gz
var shippedWeights []byte

var shippedOnce = sync.OnceValues(func() (*Policy, error) {
	return ReadPolicy(bytes.NewReader(shippedWeights))
})

// Shipped returns the policy shipped with optsched (the weights file
// embedded from weights/nsa-cnn3.bin.gz, produced by `optsched train nsa`
// with its defaults). The policy is shared: it is read-only in use.
func Shipped() (*Policy, error) { return shippedOnce() }
