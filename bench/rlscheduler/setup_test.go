package rlscheduler

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/bench/cpolicy"
)

func goodSetup() Setup {
	return Setup{Trace: "instances/traces/HPC2N-2002-2.1-cln.swf.gz", Paper: "auto", DropFirst: -1, Len: 8,
		CP: cpolicy.Policy{Limit: time.Second, K: 4, Objective: cpolicy.BSLD}, Bound: true, BoundLimit: time.Second}
}

// TestSetupDefaults: the published row and the records dropped come from
// the file name, the columns are the paper's and EASY (and cp with
// backfilling); what is given stays.
func TestSetupDefaults(t *testing.T) {
	s, err := goodSetup().Check()
	if err != nil {
		t.Fatal(err)
	}
	if s.Paper != "hpc2n" || s.DropFirst != 5 || !slices.Equal(s.Policies, DefaultPolicies) {
		t.Errorf("resolved %+v", s)
	}
	g := goodSetup()
	g.Trace, g.Backfill, g.DropFirst, g.Paper = "lublin_256.swf", true, 0, "none"
	if s, err = g.Check(); err != nil || s.Paper != "" || s.DropFirst != 0 || s.Policies[len(s.Policies)-1] != "cp" {
		t.Errorf("resolved %+v, %v", s, err)
	}
	if PaperOf("x/lublin_256.swf.gz") != "lublin-1" || PaperOf("other.swf") != "" || DropFirstOf("HPC2N-2002-2.2.swf") != 0 {
		t.Error("PaperOf or DropFirstOf")
	}
	cfg := NewConfig(nil, s)
	if cfg.Bound == nil || len(cfg.Deciders) != len(DeciderNames) {
		t.Errorf("config %+v", cfg)
	}
	for _, n := range DeciderNames {
		cp, ok := cfg.Deciders[n]().(*CP)
		if !ok || cp.Policy.NoSearch != (n == "cp-lists") || cp.Policy.K != 4 {
			t.Errorf("%s: %#v", n, cp)
		}
	}
}

// TestSetupErrors: each setting that makes no sense is a *SetupError
// naming its flag.
func TestSetupErrors(t *testing.T) {
	for flag, f := range map[string]func(*Setup){
		"--bound-limit":  func(s *Setup) { s.BoundLimit = 0 },
		"--length":       func(s *Setup) { s.Len = 0 },
		"--paper":        func(s *Setup) { s.Paper = "sdsc" },
		"--time-limit":   func(s *Setup) { s.CP.Limit = 0 },
		"--cp-jobs":      func(s *Setup) { s.CP.K = 0 },
		"--cp-objective": func(s *Setup) { s.CP.Objective = "makespan" },
		"--policies":     func(s *Setup) { s.Policies = []string{"fcfs", "lottery"} },
	} {
		s := goodSetup()
		f(&s)
		_, err := s.Check()
		var se *SetupError
		if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), flag) {
			t.Errorf("%s: %v", flag, err)
		}
	}
}
