package main

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/pbsched"
)

// TestCompactWaitFlags: --compact-wait and its companions are checked
// before anything is read, by pbs and slurm alike; on the fixture the
// rule on gives a plan (which passed Check) either way.
func TestCompactWaitFlags(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, server := range []string{"pbs", "slurm"} {
		for _, c := range []struct{ args, want string }{
			{"--compact-wait -1s", "--compact-wait must not be negative"},
			{"--compact-wait 1m --compact-wait-fraction 0", "--compact-wait-fraction must be in (0, 1000]"},
			{"--compact-wait 1m --compact-wait-fraction 1500", "--compact-wait-fraction must be in (0, 1000]"},
			{"--compact-wait 1m --compact-wait-min-nodes 1", "--compact-wait-min-nodes must be at least 2"},
			{"--compact-wait 1m --compact-wait-mode sometimes", `--compact-wait-mode must be since-submit, each-wait or blind, got "sometimes"`},
			{"--compact-wait 1m --compact-wait-elapsed -1", "--compact-wait-elapsed must be in [0, 1000]"},
			{"--compact-wait 1m --compact-wait-switch-nodes -2", "--compact-wait-switch-nodes must not be negative"},
		} {
			args := append([]string{server, "plan"}, strings.Fields(c.args)...)
			if code, _, errs := optsched(t, "", args...); code != exitUsage || !strings.Contains(errs, c.want) {
				t.Errorf("%s %s: exit %d, %q", server, c.args, code, errs)
			}
		}
	}
	code, out, errs := optsched(t, "", "pbs", "plan", "--compact-wait", "10m", "--qstat", fixture("qstat.json"), "--pbsnodes", fixture("pbsnodes.json"),
		"--queues", fixture("queues.json"), "--timezone", "UTC", "-o", "json")
	if code != exitOK {
		t.Fatalf("pbs plan --compact-wait 10m: exit %d: %s", code, errs)
	}
	var doc pbsched.PlanDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
}

// TestCompactWaitModes: each --compact-wait-mode is the rule it names.
func TestCompactWaitModes(t *testing.T) {
	for mode, want := range map[string][2]bool{compactSinceSubmit: {false, false}, compactEachWait: {true, false}, compactBlind: {false, true}} {
		c := compactFlags{max: time.Minute, fraction: 1, minNodes: 3, mode: mode}
		if err := c.validate(); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if r := c.rule(); r.PerWait != want[0] || r.Blind != want[1] || r.Elapsed != 0 || r.SwitchNodes != 0 {
			t.Errorf("%s: %+v", mode, r)
		}
	}
	c := compactFlags{max: time.Minute, fraction: 1, minNodes: 2, mode: compactEachWait, elapsed: 1, switchN: 4}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	if r := c.rule(); r.Elapsed != 1 || r.SwitchNodes != 4 || r.MinNodes != 2 || !r.PerWait || r.Many {
		t.Errorf("--compact-wait-elapsed 1 --compact-wait-switch-nodes 4: %+v", r)
	}
	// The sixth session's settings: --compact-wait-many, and a fraction
	// above 1 (the cap alone bounds the wait).
	c = compactFlags{max: 5 * time.Minute, fraction: 1000, minNodes: 2, mode: compactEachWait, many: true}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	if r := c.rule(); !r.Many || r.Fraction != 1000 || r.Bound(60) != 300 {
		t.Errorf("--compact-wait-many --compact-wait-fraction 1000: %+v", r)
	}
}

// TestCompactWaitManyFlag: --compact-wait-many is accepted by pbs and
// slurm and reaches the rule.
func TestCompactWaitManyFlag(t *testing.T) {
	code, _, errs := optsched(t, "", "pbs", "plan", "--compact-wait", "5m", "--compact-wait-mode", "each-wait", "--compact-wait-fraction", "1000",
		"--compact-wait-min-nodes", "2", "--compact-wait-many", "--qstat", fixture("qstat.json"), "--pbsnodes", fixture("pbsnodes.json"),
		"--queues", fixture("queues.json"), "--timezone", "UTC", "-o", "json")
	if code != exitOK {
		t.Fatalf("pbs plan --compact-wait-many: exit %d: %s", code, errs)
	}
}

// TestCompactWaitLeavesFlag (seventh session): --compact-wait-leaves
// reaches the rule as the shape it names, an unknown shape is a usage
// error checked before anything is read, and `slurm plan` and `pbs plan`
// accept it on their fixtures.
func TestCompactWaitLeavesFlag(t *testing.T) {
	for name, want := range map[string]heuristics.LeafShape{"": heuristics.LeavesOff, "off": heuristics.LeavesOff, "fewest": heuristics.LeavesFewest, "best": heuristics.LeavesBest,
		"tree": heuristics.LeavesTree, "top": heuristics.LeavesTop} {
		c := compactFlags{max: time.Minute, fraction: 1000, minNodes: 3, mode: compactEachWait, many: true, leaves: name}
		if err := c.validate(); err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if r := c.rule(); r.Leaves != want || !r.Many {
			t.Errorf("%q: %+v", name, r)
		}
	}
	t.Setenv("PATH", t.TempDir())
	code, _, errs := optsched(t, "", "slurm", "plan", "--compact-wait", "10m", "--compact-wait-leaves", "most")
	if code != exitUsage || !strings.Contains(errs, "--compact-wait-leaves must be off, fewest, best, tree, top or best-fewest") {
		t.Errorf("bad --compact-wait-leaves: exit %d, %q", code, errs)
	}
	code, _, errs = optsched(t, "", "slurm", "plan", "--squeue", filepath.Join(slurmTestdata, "squeue.json"),
		"--sinfo", filepath.Join(slurmTestdata, "sinfo.json"), "--topology", filepath.Join(slurmTestdata, "scontrol-show-topology.txt"),
		"--compact-wait", "10m", "--compact-wait-mode", "each-wait", "--compact-wait-fraction", "1000", "--compact-wait-many", "--compact-wait-leaves", "fewest", "-o", "json")
	if code != exitOK {
		t.Fatalf("slurm plan --compact-wait-leaves fewest: exit %d: %s", code, errs)
	}
	code, _, errs = optsched(t, "", "pbs", "plan", "--compact-wait", "5m", "--compact-wait-leaves", "best", "--qstat", fixture("qstat.json"), "--pbsnodes", fixture("pbsnodes.json"),
		"--queues", fixture("queues.json"), "--timezone", "UTC", "-o", "json")
	if code != exitOK {
		t.Fatalf("pbs plan --compact-wait-leaves best: exit %d: %s", code, errs)
	}
	code, _, errs = optsched(t, "", "pbs", "plan", "--compact-wait", "30m", "--compact-wait-leaves", "tree", "--qstat", fixture("qstat.json"), "--pbsnodes", fixture("pbsnodes.json"),
		"--queues", fixture("queues.json"), "--timezone", "UTC", "-o", "json")
	if code != exitOK {
		t.Fatalf("pbs plan --compact-wait-leaves tree: exit %d: %s", code, errs)
	}
}

// TestCompactWaitDefaults: each server's plan and run commands default to
// the compact wait chosen for it offline (docs/pbs.md, docs/slurm.md), and
// --compact-wait 0 turns it off.
func TestCompactWaitDefaults(t *testing.T) {
	pbsRule := heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Elapsed: 2, Leaves: heuristics.LeavesTree, LeavesFraction: 2}
	slurmRule := heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, MinNodes: 3, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesFewest, LeavesFraction: 0.5}
	type cmdOf struct {
		name string
		cmd  func(func(*compactFlags)) *cobra.Command
		want heuristics.CompactWait
	}
	cmds := []cmdOf{
		{"pbs plan", func(g func(*compactFlags)) *cobra.Command {
			return newPBSPlanCmd(&streams{}, func(o *pbsOptions) error { g(&o.compact); return nil })
		}, pbsRule},
		{"pbs run", func(g func(*compactFlags)) *cobra.Command {
			return newPBSRunCmd(&streams{}, func(o *pbsOptions) error { g(&o.compact); return nil })
		}, pbsRule},
		{"slurm plan", func(g func(*compactFlags)) *cobra.Command {
			return newSlurmPlanCmd(&streams{}, func(o *slurmOptions) error { g(&o.compact); return nil })
		}, slurmRule},
		{"slurm run", func(g func(*compactFlags)) *cobra.Command {
			return newSlurmRunCmd(&streams{}, func(o *slurmOptions) error { g(&o.compact); return nil })
		}, slurmRule},
	}
	for _, c := range cmds {
		for _, args := range [][]string{nil, {"--compact-wait", "0"}} {
			var got *compactFlags
			cmd := c.cmd(func(f *compactFlags) { got = f })
			cmd.SetArgs(args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			if err := cmd.Execute(); err != nil || got == nil {
				t.Fatalf("%s %v: %v", c.name, args, err)
			}
			if err := got.validate(); err != nil {
				t.Fatalf("%s %v: %v", c.name, args, err)
			}
			want := c.want
			if args != nil {
				want.Max = 0
			}
			if r := got.rule(); r != want {
				t.Errorf("%s %v: rule %+v, want %+v", c.name, args, r, want)
			}
			if r := got.rule(); r.On() != (args == nil) {
				t.Errorf("%s %v: on = %v", c.name, args, r.On())
			}
		}
	}
}

// TestCompactWaitLeavesFractionFlag (eighth session):
// --compact-wait-leaves-fraction reaches the rule, defaults to each
// server's value (0, off, where a server has none), and a value outside [0, 1000] is a usage error naming
// the flag, checked before anything is read; `pbs plan` and `slurm plan`
// accept it on their fixtures.
func TestCompactWaitLeavesFractionFlag(t *testing.T) {
	c := compactFlags{max: time.Minute, fraction: 1000, minNodes: 2, mode: compactEachWait, leaves: "tree", leavesF: 0.5}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	if r := c.rule(); r.LeavesFraction != 0.5 || r.Leaves != heuristics.LeavesTree {
		t.Errorf("rule %+v", r)
	}
	t.Setenv("PATH", t.TempDir())
	for _, server := range []string{"pbs", "slurm"} {
		for _, v := range []string{"-0.5", "1001", "NaN", "x"} {
			code, _, errs := optsched(t, "", server, "plan", "--compact-wait", "10m", "--compact-wait-leaves", "fewest", "--compact-wait-leaves-fraction", v)
			if code != exitUsage || !strings.Contains(errs, "--compact-wait-leaves-fraction") {
				t.Errorf("%s --compact-wait-leaves-fraction %s: exit %d, %q", server, v, code, errs)
			}
		}
	}
	for _, d := range []compactDefaults{pbsCompactDefaults, slurmCompactDefaults, {max: time.Minute, minNodes: 2}} {
		var f compactFlags
		f.add(pflag.NewFlagSet("t", pflag.ContinueOnError), "switch", "hold", d)
		if f.leavesF != d.leavesF {
			t.Errorf("default --compact-wait-leaves-fraction %v, want the server's %v", f.leavesF, d.leavesF)
		}
	}
	code, _, errs := optsched(t, "", "slurm", "plan", "--squeue", filepath.Join(slurmTestdata, "squeue.json"),
		"--sinfo", filepath.Join(slurmTestdata, "sinfo.json"), "--topology", filepath.Join(slurmTestdata, "scontrol-show-topology.txt"),
		"--compact-wait", "10m", "--compact-wait-leaves", "best", "--compact-wait-leaves-fraction", "1", "-o", "json")
	if code != exitOK {
		t.Fatalf("slurm plan --compact-wait-leaves-fraction 1: exit %d: %s", code, errs)
	}
	code, _, errs = optsched(t, "", "pbs", "plan", "--compact-wait", "30m", "--compact-wait-leaves", "tree", "--compact-wait-leaves-fraction", "0.5",
		"--qstat", fixture("qstat.json"), "--pbsnodes", fixture("pbsnodes.json"), "--queues", fixture("queues.json"), "--timezone", "UTC", "-o", "json")
	if code != exitOK {
		t.Fatalf("pbs plan --compact-wait-leaves-fraction 0.5: exit %d: %s", code, errs)
	}
}
