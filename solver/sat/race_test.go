//go:build race

package sat_test

// raceSlowdown scales the time limits of the tests whose assertions need
// the search to get somewhere (the race detector slows it about tenfold).
const raceSlowdown = 10
