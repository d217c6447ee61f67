//go:build !unix

package limits

import "os"

// maxRSSKiB reports that the peak resident set size is not measured on
// this platform.
func maxRSSKiB(*os.ProcessState) (int64, bool) { return 0, false }
