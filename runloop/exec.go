package runloop

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"time"
)

// A Commands runs one client command of a batch server to its end and
// returns its output; err is non-nil when it could not run or did not
// exit 0 (an *exec.ExitError then). Tests give their callers a fake one.
type Commands interface {
	Run(ctx context.Context, dir string, name string, args ...string) (stdout, stderr []byte, err error)
}

// Exec runs the commands as processes in dir ("" the caller's), each
// killed with its children (BoundProcess) after Timeout (default 60 s).
type Exec struct {
	Timeout time.Duration
}

// Run implements Commands.
func (e Exec) Run(ctx context.Context, dir, name string, args ...string) ([]byte, []byte, error) {
	timeout := e.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, name, args...)
	cmd.Dir = dir
	BoundProcess(cmd)
	cmd.WaitDelay = 2 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil && cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		err = fmt.Errorf("%s did not finish within %v and was killed: %w", name, timeout, err)
	}
	return out.Bytes(), errb.Bytes(), err
}
