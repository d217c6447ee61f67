package runloop

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Graceful handles SIGINT and SIGTERM for cycles that act: the first
// signal closes stopping (the daemon stops after the cycle in flight,
// whose commands all run and are logged), the second ends the returned
// context (the command in flight is killed, the rest are not run, the
// cycle is logged as interrupted). Each signal is noted on
// errOut (nil: nowhere). release restores the default handling.
func Graceful(parent context.Context, errOut io.Writer) (ctx context.Context, stopping <-chan struct{}, release func()) {
	if errOut == nil {
		errOut = io.Discard
	}
	ctx, cancel := context.WithCancelCause(parent)
	stop := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case <-done:
				return
			case s := <-sigs:
				n++
				if n == 1 {
					fmt.Fprintf(errOut, "optsched: %v: finishing the cycle in flight, then stopping (again to abort it)\n", s)
					close(stop)
					continue
				}
				fmt.Fprintf(errOut, "optsched: %v again: aborting the cycle\n", s)
				cancel(fmt.Errorf("aborted by a second %v", s))
				return
			}
		}
	}()
	return ctx, stop, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}
