package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// qrunTimeout bounds one qrun call; qrunWaitDelay how long after it the
// cycle still waits for the output pipes of what qrun left behind.
var (
	qrunTimeout   = 60 * time.Second
	qrunWaitDelay = 2 * time.Second
)

// applyPlan runs `qrun -H SPEC JOB` for every start of the plan, in order.
// A failing qrun does not stop the others: each start records its exit
// code and error, and the returned error lists the jobs whose qrun failed.
// Each qrun runs for at most qrunTimeout (its process group is killed
// then) and the cycle waits at most qrunWaitDelay more for its pipes.
// When ctx ends, the qrun in flight is killed and the starts not yet run
// are left unapplied (recorded as such).
func applyPlan(ctx context.Context, p *pbsPlan, qrun string) error {
	var failed []string
	for i, s := range p.Starts {
		if ctx.Err() != nil {
			failed = append(failed, fmt.Sprintf("%d starts not run: %v", len(p.Starts)-i, context.Cause(ctx)))
			break
		}
		cctx, cancel := context.WithTimeout(ctx, qrunTimeout)
		cmd := exec.CommandContext(cctx, qrun, "-H", s.ExecVnode(), s.Job)
		boundProcess(cmd)
		cmd.WaitDelay = qrunWaitDelay
		var stderr bytes.Buffer
		cmd.Stdout = &headWriter{b: &stderr, n: 1 << 16}
		cmd.Stderr = cmd.Stdout
		err := cmd.Run()
		if err != nil && cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			err = fmt.Errorf("qrun did not finish within %v and was killed: %w", qrunTimeout, err)
			stderr.Reset()
		}
		cancel()
		s.Applied = true
		if err == nil {
			continue
		}
		s.ExitCode = -1
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() >= 0 {
			s.ExitCode = ee.ExitCode()
		}
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 500 {
			msg = msg[:497] + "..."
		}
		if msg == "" {
			msg = err.Error()
		}
		s.Error = msg
		failed = append(failed, fmt.Sprintf("%s (exit %d: %s)", s.Job, s.ExitCode, msg))
	}
	if len(failed) > 0 {
		return fmt.Errorf("qrun failed for %d of %d jobs: %s", len(failed), len(p.Starts), strings.Join(failed, "; "))
	}
	return nil
}

// headWriter keeps the first n bytes written to it and drops the rest.
type headWriter struct {
	b *bytes.Buffer
	n int
}

func (h *headWriter) Write(p []byte) (int, error) {
	if room := h.n - h.b.Len(); room > 0 {
		h.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// auditEntry is one line of the audit log: a cycle's input digest, its
// decisions and the commands' exit codes, or why it failed.
type auditEntry struct {
	LoggedAt string `json:"logged_at"`
	Command  string `json:"command"`
	// Apply: the cycle was to run qrun (--apply); the plan's starts carry
	// the exit codes of the qruns that ran.
	Apply bool `json:"apply"`
	// Error is set when the cycle failed (bad input, unsafe plan, qrun
	// failures); Plan is absent when it failed before deciding.
	Error       string      `json:"error,omitempty"`
	InputSHA256 string      `json:"input_sha256,omitempty"`
	Plan        *pbsPlanDoc `json:"plan,omitempty"`
}

// appendAudit appends one JSON line to the audit log at path, creating it
// (and its folder) when needed. The line is written with one write call
// on a file opened for appending.
func appendAudit(path string, e auditEntry) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("audit log %s: %w", path, err)
	}
	return f.Close()
}

// errLocked is returned when another cycle holds the lock.
var errLocked = errors.New("another optsched pbs cycle is running")
