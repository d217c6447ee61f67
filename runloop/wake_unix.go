//go:build unix

package runloop

import (
	"os"
	"os/signal"
	"syscall"
)

// WakeSignals returns a channel that receives SIGUSR1, the wake-up of a
// daemon (sent by a server hook), and the function that stops the delivery.
func WakeSignals() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	return ch, func() { signal.Stop(ch) }
}
