//go:build !linux

package limits

// resetPeak does nothing outside Linux, where the floor of a child's peak
// RSS is not known.
func resetPeak() *int64 { return nil }
