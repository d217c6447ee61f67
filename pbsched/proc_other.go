//go:build !unix

package pbsched

import "os/exec"

// boundProcess: without process groups, the context kills qrun itself
// and cmd.WaitDelay bounds the wait for its pipes.
func boundProcess(cmd *exec.Cmd) {}
