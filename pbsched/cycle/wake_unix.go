//go:build unix

package cycle

import (
	"os"
	"os/signal"
	"syscall"
)

// wakeSignals returns a channel that receives SIGUSR1, the wake-up of the
// PBS hook (see WakeHook), and the function that stops the delivery.
func wakeSignals() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	return ch, func() { signal.Stop(ch) }
}
