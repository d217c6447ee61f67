package runloop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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

// CommandError is the error of a command that failed: its name, the
// error and what it said on stderr (at most 500 bytes of it).
func CommandError(name string, err error, stderr []byte) error {
	msg := strings.TrimSpace(string(stderr))
	if len(msg) > 500 {
		msg = msg[:497] + "..."
	}
	if msg == "" {
		return fmt.Errorf("%s: %w", name, err)
	}
	return fmt.Errorf("%s: %w: %s", name, err, msg)
}

// CancelJobs runs the server's cancel command (qdel, scancel) at path
// over ids, batch ids at a time. A batch that fails only because some
// of its jobs had finished (stderr lines containing finished) is not an
// error; any other line, or a failure with none, is.
func CancelJobs(ctx context.Context, cmd Commands, path string, ids []string, batch int, finished string) error {
	name := filepath.Base(path)
	var errs []error
	for part := range slices.Chunk(ids, max(batch, 1)) {
		_, stderr, err := cmd.Run(ctx, "", path, part...)
		if err == nil {
			continue
		}
		var other []string
		done := 0
		for _, line := range strings.Split(strings.TrimSpace(string(stderr)), "\n") {
			switch line = strings.TrimSpace(line); {
			case strings.Contains(line, finished):
				done++
			case line != "":
				other = append(other, line)
			}
		}
		if len(other) > 0 || done == 0 {
			errs = append(errs, CommandError(name, err, []byte(strings.Join(other, "\n"))))
		}
	}
	return errors.Join(errs...)
}
