//go:build unix

package limits

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSSKiB returns the peak resident set size of a finished process, in
// KiB, from its resource usage (ru_maxrss: KiB on Linux and the BSDs,
// bytes on macOS).
func maxRSSKiB(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0, false
	}
	v := int64(ru.Maxrss)
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		v /= 1024
	}
	return v, true
}
