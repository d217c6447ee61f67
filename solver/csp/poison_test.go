package csp

// The package's tests run with reused DP tables and suffix columns
// overwritten by a value no cell holds (tableBuf), so that a cell read
// before it is written shows in an answer instead of reading a stale
// value that might happen to fit.
func init() { poisonReused = true }
