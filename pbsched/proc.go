package pbsched

import (
	"os/exec"

	"github.com/optsched/optsched/runloop"
)

// BoundProcess is runloop.BoundProcess: cmd runs in a process group of its
// own, killed as a whole when its context ends, so that a PBS command
// (qrun, qsub, qdel) that leaves a child behind holding its output pipe
// cannot hold its caller past the timeout.
func BoundProcess(cmd *exec.Cmd) { runloop.BoundProcess(cmd) }
