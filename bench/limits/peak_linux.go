package limits

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// resetPeak prepares the sweep's process for the start of a child whose
// peak RSS is measured. On Linux a child shares its parent's memory from
// the fork to its exec, and the kernel carries the parent's peak RSS
// (VmHWM) over into the child's ru_maxrss at the exec. So the sweep
// returns its free memory to the system (the windows it generated) and
// resets its own peak to its current RSS (writing 5 to
// /proc/self/clear_refs, Linux 4.0 and later). It returns the peak that
// remains, the floor of the child's measurement, or nil when
// /proc/self/status cannot be read.
func resetPeak() *int64 {
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return nil
			}
			return &kib
		}
	}
	return nil
}
