//go:build !race

package main

// raceSlowdown scales the time limits of the tests that need a solver to
// find or prove something in time; 1 without the race detector.
const raceSlowdown = 1
