//go:build !unix

package runloop

import "errors"

// A Lock is a held lock file.
type Lock struct{}

// TakeLock is not available without flock(2): acting on a server needs
// the lock, so it fails.
func TakeLock(path string, locked error) (*Lock, error) {
	return nil, errors.New("lock: optsched's external schedulers need flock(2), available on Unix systems only")
}

// Unlock does nothing.
func (l *Lock) Unlock() error { return nil }
