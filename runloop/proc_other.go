//go:build !unix

package runloop

import "os/exec"

// BoundProcess: without process groups, the context kills the command
// itself and cmd.WaitDelay bounds the wait for its pipes.
func BoundProcess(cmd *exec.Cmd) {}
