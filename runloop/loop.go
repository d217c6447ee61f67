package runloop

import (
	"context"
	"errors"
	"io"
	"time"
)

// LoopOptions say how often Loop runs its cycle and how it is woken.
type LoopOptions struct {
	// Interval is the time between the starts of two cycles; Cycles the
	// number of cycles (0: until stopped).
	Interval time.Duration
	Cycles   int
	// PIDFile, when set, is where Loop writes its pid while it runs, for
	// a server hook to find. SIGUSR1 wakes a Loop whether or not it is
	// set: the next cycle starts WakeDelay after the signal (at once when
	// it is not positive) instead of at the interval.
	PIDFile   string
	WakeDelay time.Duration
	// Messages receives the notices of the signal handling (nil: none).
	Messages io.Writer
}

// A PIDFileError is Loop's failure to write its pid file before the first
// cycle.
type PIDFileError struct{ Err error }

// Error returns Err's message.
func (e PIDFileError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e PIDFileError) Unwrap() error { return e.Err }

// Loop runs cycle(ctx, n) for n = 1, 2, … with the signal handling of
// Graceful: the first SIGINT or SIGTERM stops the loop after the cycle in
// flight, a second ends the context the cycle runs under. A cycle starts
// Interval after the start of the one before, or WakeDelay after a
// SIGUSR1 (the signals that come during a cycle or its delay make one
// cycle). An error from cycle stops the loop and is returned; Loop
// returns nil after Cycles cycles (when Cycles > 0), after a signal, or
// when ctx ends. The caller checks that Interval is positive when the
// loop repeats.
func Loop(ctx context.Context, o LoopOptions, cycle func(ctx context.Context, n int) error) (err error) {
	ctx, stopping, release := Graceful(ctx, o.Messages)
	defer release()
	wake, stopWake := WakeSignals()
	defer stopWake()
	if o.PIDFile != "" {
		// After the handler is in place: SIGUSR1 would kill the process
		// before it.
		if err := WritePIDFile(o.PIDFile); err != nil {
			return PIDFileError{err}
		}
		defer func() { err = errors.Join(err, RemovePIDFile(o.PIDFile)) }()
	}
	for n := 1; ; n++ {
		start := time.Now()
		if err := cycle(ctx, n); err != nil {
			return err
		}
		if o.Cycles > 0 && n >= o.Cycles {
			return nil
		}
		select {
		case <-stopping:
			return nil
		default:
		}
		next := time.NewTimer(max(0, o.Interval-time.Since(start)))
		select {
		case <-stopping:
			next.Stop()
			return nil
		case <-ctx.Done():
			next.Stop()
			return nil
		case <-next.C:
		case <-wake:
			next.Stop()
			if o.WakeDelay > 0 {
				settle := time.NewTimer(o.WakeDelay)
				select {
				case <-stopping:
					settle.Stop()
					return nil
				case <-ctx.Done():
					settle.Stop()
					return nil
				case <-settle.C:
				}
			}
			// The wake-ups of the delay are this cycle's.
			select {
			case <-wake:
			default:
			}
		}
	}
}
