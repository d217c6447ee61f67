package limits

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/optsched/optsched/model/windowjson"
)

// DefaultLimits are the time limits of the sweep: 1 ms, 10 ms, 100 ms
// and 1 s.
var DefaultLimits = []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second}

// Config configures Sweep.
type Config struct {
	// Exe is the optsched executable the runs exec.
	Exe string
	// Env, when set, returns extra environment variables for the run with
	// these arguments (the tests run their own binary as optsched this
	// way); the runs inherit the sweep's environment otherwise.
	Env func(args []string) []string
	// Classes, Solvers and Limits span the cells: every class with every
	// solver of its family at every limit.
	Classes []Class
	Solvers []Solver
	Limits  []time.Duration
	// Windows per class, generated from Seed.
	Windows int
	Seed    uint64
	// Dir receives the windows; empty for a temporary folder removed at
	// the end.
	Dir string
	// RunTimeout bounds a run past its time limit: a child still running
	// then is killed and the run is a failure. Zero means two minutes.
	RunTimeout time.Duration
	// Progress, when set, receives a line per run.
	Progress io.Writer
	// Tick, when set, is called after every run (a progress bar).
	Tick func()
}

// Runs returns the number of runs Sweep makes with cfg (fewer when a
// solver turns out to be unavailable).
func (cfg *Config) Runs() int {
	n := 0
	for _, c := range cfg.Classes {
		for _, s := range cfg.Solvers {
			if s.Family == c.Family {
				n += len(cfg.Limits) * cfg.Windows
			}
		}
	}
	return n
}

// A Run is one solve of one window by one solver at one time limit.
type Run struct {
	Class  string `json:"class"`
	Solver string `json:"solver"`
	// Limit is the --time-limit given.
	Limit  Duration `json:"limit"`
	Window int      `json:"window"`
	// Bounded copies the class's: the 1 GiB promise applies to the run.
	Bounded bool `json:"memory_bound"`
	// Args are the arguments the executable was given.
	Args []string `json:"args"`
	// Status is the status of the answer (optimal, feasible, fallback,
	// infeasible, unknown); empty when the run failed or the solver is
	// unavailable.
	Status string `json:"status,omitempty"`
	// ElapsedMS is the answer's elapsed_ms: the solve's wall time measured
	// inside the process.
	ElapsedMS float64 `json:"elapsed_ms"`
	// WallMS is the process's wall time, start-up and output included.
	WallMS float64 `json:"wall_ms"`
	// MaxRSSKiB is the process's peak resident set size, nil when the
	// platform does not report it.
	MaxRSSKiB *int64 `json:"max_rss_kib"`
	// RSSFloorKiB, when known, is what MaxRSSKiB cannot go below on this
	// platform: the sweep's own resident set when the child started (see
	// the package comment).
	RSSFloorKiB *int64 `json:"rss_floor_kib,omitempty"`
	ExitCode    int    `json:"exit_code"`
	// Unavailable, when set, says why this optsched lacks the solver
	// (lpsolve or clp in a build without cgo): the first line of the
	// standard error of its first run.
	Unavailable string `json:"unavailable,omitempty"`
	// Failure says why a run failed: the first line of its standard
	// error, or what was wrong with its output; empty for an answer.
	Failure string `json:"failure,omitempty"`
}

// Answered reports whether the run produced an answer whose elapsed time
// counts.
func (r *Run) Answered() bool { return r.Status != "" && r.Failure == "" && r.Unavailable == "" }

// Duration is a time.Duration that reads and writes as a Go duration
// string ("10ms") in JSON.
type Duration time.Duration

// MarshalJSON writes d as a string such as "100ms".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// String is the Go duration string.
func (d Duration) String() string { return time.Duration(d).String() }

// Sweep generates the windows and makes every run, one at a time, in the
// order class, solver, limit, window. A solver found unavailable is not
// run again: its later runs are recorded as unavailable. It fails only
// when the windows cannot be written or ctx ends; a failed run is a Run
// with its Failure.
func Sweep(ctx context.Context, cfg Config) ([]Run, error) {
	if cfg.Exe == "" {
		return nil, errors.New("limits: no executable to run")
	}
	if cfg.Windows < 1 || len(cfg.Limits) == 0 {
		return nil, errors.New("limits: need at least one window and one time limit")
	}
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "optsched-limits-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	timeout := cfg.RunTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	unavailable := map[string]string{}
	var runs []Run
	for _, c := range cfg.Classes {
		var solvers []Solver
		for _, s := range cfg.Solvers {
			if s.Family == c.Family {
				solvers = append(solvers, s)
			}
		}
		if len(solvers) == 0 {
			continue
		}
		files, err := writeWindows(dir, c, cfg.Seed, cfg.Windows)
		if err != nil {
			return runs, err
		}
		for _, s := range solvers {
			key := string(s.Family) + "/" + s.Name
			for _, limit := range cfg.Limits {
				for k, file := range files {
					if err := ctx.Err(); err != nil {
						return runs, err
					}
					args := append([]string{"solve", "--time-limit", limit.String()}, c.Args...)
					args = append(append(args, s.Args...), "-o", "json", file)
					r := Run{Class: c.Name, Solver: s.Name, Limit: Duration(limit), Window: k, Bounded: c.Bounded, Args: args}
					if msg, ok := unavailable[key]; ok {
						r.Unavailable = msg
					} else {
						measure(ctx, &cfg, &r, limit+timeout)
						if r.Unavailable != "" {
							unavailable[key] = r.Unavailable
						}
					}
					runs = append(runs, r)
					if cfg.Progress != nil {
						fmt.Fprintln(cfg.Progress, r.line())
					}
					if cfg.Tick != nil {
						cfg.Tick()
					}
				}
			}
		}
	}
	return runs, nil
}

// writeWindows generates the windows of c and writes them to dir as
// window JSON, returning their paths.
func writeWindows(dir string, c Class, seed uint64, n int) ([]string, error) {
	var files []string
	for k := range n {
		w, err := c.Make(seed, k)
		if err != nil {
			return nil, fmt.Errorf("limits: class %s, window %d: %w", c.Name, k, err)
		}
		data, err := windowjson.Marshal(w)
		if err != nil {
			return nil, fmt.Errorf("limits: class %s, window %d: %w", c.Name, k, err)
		}
		f := filepath.Join(dir, fmt.Sprintf("%s-%d.json", c.Name, k))
		if err := os.WriteFile(f, append(data, '\n'), 0o644); err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// answer is what a run reads of `optsched solve -o json`: the fields that
// output.ResultDoc and output.ScheduleDoc share.
type answer struct {
	Status    string   `json:"status"`
	ElapsedMS *float64 `json:"elapsed_ms"`
}

// measure execs r.Args and fills r's measurements; the child is killed
// after kill.
func measure(ctx context.Context, cfg *Config, r *Run, kill time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, kill)
	defer cancel()
	cmd := exec.CommandContext(ctx, cfg.Exe, r.Args...)
	if cfg.Env != nil {
		cmd.Env = append(os.Environ(), cfg.Env(r.Args)...)
	}
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	r.RSSFloorKiB = resetPeak()
	start := time.Now()
	err := cmd.Run()
	r.WallMS = float64(time.Since(start).Microseconds()) / 1000
	if cmd.ProcessState != nil {
		r.ExitCode = cmd.ProcessState.ExitCode()
		if kib, ok := maxRSSKiB(cmd.ProcessState); ok {
			r.MaxRSSKiB = &kib
		}
	}
	var exit *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		r.Failure = fmt.Sprintf("killed %v after its start, still running", kill)
		return
	case err != nil && !errors.As(err, &exit):
		r.Failure = err.Error()
		return
	}
	classify(r, stdout.Bytes(), stderr.Bytes())
}

// classify reads a finished run's exit code and output: exit 0 with an
// answer is an answer; exit 1 with an answer of status unknown is status
// unknown (solve found nothing in time), and exit 3 with an answer of
// status infeasible is status infeasible (proven); a missing solver is
// unavailable; anything else is a failure.
func classify(r *Run, stdout, stderr []byte) {
	var a answer
	parsed := json.Unmarshal(stdout, &a) == nil && a.Status != "" && a.ElapsedMS != nil
	switch {
	case parsed && (r.ExitCode == 0 && a.Status != "unknown" && a.Status != "infeasible" ||
		r.ExitCode == 1 && a.Status == "unknown" || r.ExitCode == 3 && a.Status == "infeasible"):
		r.Status, r.ElapsedMS = a.Status, *a.ElapsedMS
	case r.ExitCode != 0 && !parsed && strings.Contains(string(stderr), "unavailable"):
		r.Unavailable = firstLine(stderr)
	case parsed:
		r.Failure = fmt.Sprintf("exit %d with status %q: %s", r.ExitCode, a.Status, firstLine(stderr))
	case r.ExitCode == 0:
		r.Failure = "exit 0 without a JSON answer: " + firstLine(stdout)
	default:
		r.Failure = fmt.Sprintf("exit %d: %s", r.ExitCode, firstLine(stderr))
	}
}

// firstLine is b's first non-empty line, trimmed, at most 200 bytes.
func firstLine(b []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			if len(l) > 200 {
				l = l[:200] + "…"
			}
			return l
		}
	}
	return "(no output)"
}

// line is the -v line of a run.
func (r *Run) line() string {
	head := fmt.Sprintf("%s/%s %v window %d:", r.Class, r.Solver, r.Limit, r.Window)
	rss := "rss not measured"
	if r.MaxRSSKiB != nil {
		rss = "rss " + mib(*r.MaxRSSKiB)
	}
	switch {
	case r.Unavailable != "":
		return head + " unavailable: " + r.Unavailable
	case r.Failure != "":
		return fmt.Sprintf("%s FAILED (wall %.1f ms, %s): %s", head, r.WallMS, rss, r.Failure)
	}
	return fmt.Sprintf("%s %s, elapsed %.3f ms (overshoot %+.3f ms), wall %.1f ms, %s", head, r.Status, r.ElapsedMS, r.OvershootMS(), r.WallMS, rss)
}

// OvershootMS is elapsed_ms − the limit: how far past its time limit the
// solve answered, measured inside the process (negative when it answered
// in time).
func (r *Run) OvershootMS() float64 {
	return r.ElapsedMS - float64(time.Duration(r.Limit).Microseconds())/1000
}
