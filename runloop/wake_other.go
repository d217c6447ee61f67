//go:build !unix

package runloop

import "os"

// WakeSignals returns a channel that never receives: there is no SIGUSR1
// to wake a Loop with.
func WakeSignals() (<-chan os.Signal, func()) { return nil, func() {} }
