package cycle

import "errors"

// ErrLocked is returned, wrapped with the lock's path and holder, when
// another cycle holds the lock.
var ErrLocked = errors.New("another optsched pbs cycle is running")
