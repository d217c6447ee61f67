package rlscheduler

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/optsched/optsched/bench/cpolicy"
)

// Learned is the name of the learned column: the rlscheduler design
// trained here (package bench/learned, which wires it in as a Chooser),
// choosing the heads of the published loop.
const Learned = "rl-here"

// The other learned designs' columns (package bench/learned, which wires
// them in as Runners): rlschert's picker without and with its killer, and
// joshh.
const (
	RLSchert     = "rlschert"
	RLSchertKill = "rlschert-kill"
	JoSHH        = "joshh"
)

// LearnedColumns are every learned column.
var LearnedColumns = []string{Learned, RLSchert, RLSchertKill, JoSHH}

// DeciderNames are the event-driven policies besides easy that NewConfig
// builds: cp, the CP/SAT scheduler, and cp-lists, its list schedules
// alone (no search).
var DeciderNames = []string{"cp", "cp-lists"}

// DefaultPolicies are the columns by default: the paper's, then EASY (and
// cp with backfilling, Setup.Check).
var DefaultPolicies = []string{"fcfs", "wfp3", "uni", "sjf", "f1", "easy"}

// A Setup is the benchmark as `optsched bench rlscheduler` takes it,
// before the log is read: Check resolves its defaults and refuses what
// does not make sense, NewConfig builds the Config of Run around the
// loaded workload.
type Setup struct {
	// Trace is the log's path; Paper the published row ("auto": from
	// the file name, PaperOf; "none"; "lublin-1" or "hpc2n").
	Trace, Paper string
	// DropFirst drops the log's first records (negative: the trace's
	// default, DropFirstOf).
	DropFirst int
	// Backfill, Starts and Len are Config's.
	Backfill bool
	Starts   []int
	Len      int
	// Policies are the columns (nil: DefaultPolicies, and cp with
	// Backfill).
	Policies []string
	// CP are the settings of the cp deciders: Limit, K and Objective.
	CP cpolicy.Policy
	// Bound proves an offline lower bound per sequence within BoundLimit.
	Bound      bool
	BoundLimit time.Duration
}

// A SetupError is a setting of a Setup that does not make sense; its
// message names the setting by the flag of optsched bench rlscheduler,
// the package's caller.
type SetupError struct{ Msg string }

func (e *SetupError) Error() string { return e.Msg }

// PaperOf guesses the published row from a trace's file name: lublin-1,
// hpc2n, or "" for none.
func PaperOf(path string) string {
	base := strings.ToLower(filepath.Base(path))
	switch {
	case strings.HasPrefix(base, "lublin_256"):
		return "lublin-1"
	case strings.HasPrefix(base, "hpc2n-2002"):
		return "hpc2n"
	}
	return ""
}

// DropFirstOf is the number of records to drop from a trace by default:
// HPC2N version 2.1 (HPC2N-2002-2.1*) has 5 records more than the 2.2
// file the paper used.
func DropFirstOf(path string) int {
	if strings.HasPrefix(strings.ToLower(filepath.Base(path)), "hpc2n-2002-2.1") {
		return 5
	}
	return 0
}

// Check returns s with its defaults resolved (Paper, DropFirst,
// Policies), or a *SetupError.
func (s Setup) Check() (Setup, error) {
	bad := func(format string, a ...any) (Setup, error) { return s, &SetupError{fmt.Sprintf(format, a...)} }
	if s.BoundLimit <= 0 {
		return bad("--bound-limit must be positive, got %v", s.BoundLimit)
	}
	if s.Len < 1 {
		return bad("--length must be positive, got %d", s.Len)
	}
	switch s.Paper {
	case "auto":
		s.Paper = PaperOf(s.Trace)
	case "none":
		s.Paper = ""
	case "lublin-1", "hpc2n":
	default:
		return bad("--paper must be lublin-1, hpc2n, none or auto, got %q", s.Paper)
	}
	if s.DropFirst < 0 {
		s.DropFirst = DropFirstOf(s.Trace)
	}
	if s.CP.Limit <= 0 {
		return bad("--time-limit must be positive, got %v", s.CP.Limit)
	}
	if s.CP.K < 1 {
		return bad("--cp-jobs must be positive, got %d", s.CP.K)
	}
	if s.CP.Objective != cpolicy.BSLD && s.CP.Objective != cpolicy.Wait {
		return bad("--cp-objective must be %s or %s, got %q", cpolicy.BSLD, cpolicy.Wait, s.CP.Objective)
	}
	if len(s.Policies) == 0 {
		s.Policies = slices.Clone(DefaultPolicies)
		if s.Backfill {
			s.Policies = append(s.Policies, "cp")
		}
	}
	for _, p := range s.Policies {
		if !slices.Contains(Published, p) && p != "easy" && !slices.Contains(DeciderNames, p) && !slices.Contains(LearnedColumns, p) {
			return bad("--policies: no policy %q (have %s, easy, %s, %s)", p, strings.Join(Published, ", "), strings.Join(DeciderNames, ", "), strings.Join(LearnedColumns, ", "))
		}
	}
	return s, nil
}

// NewConfig builds the Config of Run from a checked Setup and the
// workload loaded from its trace: the cp deciders and the offline bound.
// The learned column's Chooser is the caller's (package bench/learned
// imports this one).
func NewConfig(w *Workload, s Setup) Config {
	cfg := Config{
		Workload: w, Trace: s.Trace, Paper: s.Paper, DropFirst: s.DropFirst,
		Starts: s.Starts, Len: s.Len, Backfill: s.Backfill, Policies: s.Policies,
	}
	cp := cpolicy.Policy{Limit: s.CP.Limit, K: s.CP.K, Objective: s.CP.Objective}
	cfg.Deciders = map[string]func() Decider{
		"cp": func() Decider { return &CP{Policy: cp} },
		"cp-lists": func() Decider {
			lists := cp
			lists.NoSearch = true
			return &CP{Policy: lists}
		},
	}
	if s.Bound {
		limit := s.BoundLimit
		cfg.Bound = func(ctx context.Context, seq Sequence) (BoundValue, error) {
			return OfflineBound(ctx, seq, OfflineOptions{Limit: limit})
		}
	}
	return cfg
}
