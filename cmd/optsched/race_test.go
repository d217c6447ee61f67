//go:build race

package main

// raceSlowdown scales the time limits of the tests that need a solver to
// find or prove something in time (the race detector slows the SAT
// search tenfold or more).
const raceSlowdown = 10
