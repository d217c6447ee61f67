//go:build unix

package pbsched

import (
	"os/exec"
	"syscall"
)

// boundProcess makes cmd run in a process group of its own and, when its
// context ends, kills the whole group: a qrun that leaves a child behind
// holding its output pipe cannot hold the cycle past the timeout (with
// cmd.WaitDelay, set by the caller, as the last resort).
func boundProcess(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
