//go:build !unix

package main

import "errors"

// cycleLock is a held lock file.
type cycleLock struct{}

// lockCycle is not available without flock(2): acting on a PBS server
// needs the lock, so it fails.
func lockCycle(path string) (*cycleLock, error) {
	return nil, errors.New("lock: optsched pbs needs flock(2), available on Unix systems only")
}

func (l *cycleLock) unlock() error { return nil }
