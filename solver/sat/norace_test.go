//go:build !race

package sat_test

// raceSlowdown scales the time limits of the tests whose assertions need
// the search to get somewhere; 1 without the race detector.
const raceSlowdown = 1
