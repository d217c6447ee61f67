//go:build !unix

package cycle

import "os"

// wakeSignals returns a channel that never receives: there is no SIGUSR1
// to wake a Loop with.
func wakeSignals() (<-chan os.Signal, func()) { return nil, func() {} }
