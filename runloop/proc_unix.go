//go:build unix

package runloop

import (
	"os/exec"
	"syscall"
)

// BoundProcess makes cmd run in a process group of its own and, when its
// context ends, kills the whole group: a client command (qrun, qsub,
// sbatch, scancel) that leaves a child behind holding its output pipe
// cannot hold its caller past the timeout (with cmd.WaitDelay, set by the
// caller, as the last resort). The group also keeps a terminal's Ctrl-C
// from reaching the command directly.
func BoundProcess(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
