package cycle

import (
	"errors"

	"github.com/optsched/optsched/runloop"
)

// ErrLocked is returned, wrapped with the lock's path and holder, when
// another cycle holds the lock.
var ErrLocked = errors.New("another optsched pbs cycle is running")

// A Lock is a held lock file.
type Lock = runloop.Lock

// TakeLock takes an exclusive flock(2) on path without waiting, so that
// only one cycle runs at a time on this host (the lock goes with the
// process if it dies), creating the file and its folder when needed. The
// holder's pid is written into the file for people; ErrLocked comes
// back, naming it, when the lock is taken.
func TakeLock(path string) (*Lock, error) { return runloop.TakeLock(path, ErrLocked) }
