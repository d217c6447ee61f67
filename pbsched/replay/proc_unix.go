//go:build unix

package replay

import (
	"os/exec"
	"syscall"
)

// boundProcess runs cmd in a process group of its own, killed whole when
// its context ends. The group also keeps a terminal's Ctrl-C from reaching
// a qsub or qdel directly: the replay decides what to do about it.
func boundProcess(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
