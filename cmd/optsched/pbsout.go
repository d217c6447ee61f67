package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// pbsPlanDoc is the JSON form of a cycle (`optsched pbs plan -o json`, and
// each line of the audit log). Field names are a contract.
type pbsPlanDoc struct {
	Version     int           `json:"version"`
	Server      string        `json:"pbs_server"`
	PBSVersion  string        `json:"pbs_version"`
	Time        int64         `json:"time"`
	InputSHA256 string        `json:"input_sha256"`
	DryRun      bool          `json:"dry_run"`
	Topology    string        `json:"topology"`
	Nodes       pbsNodesDoc   `json:"nodes"`
	WholeNode   pbsSolveDoc   `json:"whole_node"`
	PartialNode *cpDoc        `json:"partial_node,omitempty"`
	Starts      []pbsStartDoc `json:"starts"`
	Deferred    []pbsReason   `json:"deferred"`
	Skipped     []pbsReason   `json:"skipped"`
	Notes       []string      `json:"notes"`
	Failed      []pbsReason   `json:"failed,omitempty"`
}

// pbsNodesDoc counts the vnodes of a cycle.
type pbsNodesDoc struct {
	// Owned are the vnodes optsched schedules (in the topology); Idle
	// and PartlyUsed the free ones among them; NotFree counts the others
	// by state; Ignored are the vnodes outside --nodes or the topology.
	Owned      int            `json:"owned"`
	Idle       int            `json:"idle"`
	PartlyUsed int            `json:"partly_used"`
	NotFree    map[string]int `json:"not_free"`
	Ignored    int            `json:"ignored"`
}

// pbsStartDoc is one start of the plan.
type pbsStartDoc struct {
	Job       string   `json:"job"`
	Queue     string   `json:"queue"`
	Path      string   `json:"path"`
	Placement string   `json:"placement"`
	Why       string   `json:"why"`
	Nodes     []string `json:"nodes"`
	ExecVnode string   `json:"exec_vnode"`
	Command   []string `json:"command"`
	// Cost is the CH cost of a whole-node job's vnodes; null for
	// partial-node jobs.
	Cost *int64 `json:"cost"`
	// ExitCode and Error report qrun when the plan was applied.
	ExitCode *int   `json:"exit_code,omitempty"`
	Error    string `json:"error,omitempty"`
}

// doc returns the JSON form of the plan; qrun is the command written.
func (p *pbsPlan) doc(qrun string, dryRun bool) pbsPlanDoc {
	st := p.c.st
	d := pbsPlanDoc{Version: 1, Server: st.jobs.Server, PBSVersion: st.jobs.Version, Time: st.now,
		InputSHA256: st.digest, DryRun: dryRun, Topology: p.c.topoNote, WholeNode: p.Solve, PartialNode: p.CP,
		Starts: []pbsStartDoc{}, Deferred: nonNil(p.Deferred), Skipped: nonNil(p.c.skipped), Notes: nonNil(p.Notes)}
	if d.Server == "" {
		d.Server = st.nodes.Server
	}
	d.Nodes = p.c.nodeCounts()
	for _, s := range p.Starts {
		ev := s.ExecVnode()
		sd := pbsStartDoc{Job: s.Job, Queue: s.Queue, Path: s.Path, Placement: s.Placement, Why: s.Why,
			Nodes: s.Nodes(), ExecVnode: ev, Command: []string{qrun, "-H", ev, s.Job}}
		if s.Cost >= 0 {
			c := s.Cost
			sd.Cost = &c
		}
		if s.Applied {
			code := s.ExitCode
			sd.ExitCode = &code
			sd.Error = s.Error
			if s.ExitCode != 0 {
				d.Failed = append(d.Failed, pbsReason{s.Job, s.Error})
			}
		}
		d.Starts = append(d.Starts, sd)
	}
	return d
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// nodeCounts counts the owned vnodes by what they can take.
func (c *cluster) nodeCounts() pbsNodesDoc {
	d := pbsNodesDoc{Owned: len(c.vnodes), NotFree: map[string]int{}, Ignored: c.ignored}
	for _, v := range c.vnodes {
		switch {
		case v.idle:
			d.Idle++
		case v.free:
			d.PartlyUsed++
		default:
			d.NotFree[v.n.StateText()]++
		}
	}
	return d
}

// writeScript writes the plan as a POSIX shell script: one qrun -H line
// per start, each with a comment saying what it is, every deferred and
// skipped job with why it waits, and an exit status that is non-zero when
// any qrun failed (the script goes on after a failure).
func (p *pbsPlan) writeScript(out io.Writer, qrun string) error {
	d := p.doc(qrun, true)
	var b strings.Builder
	fmt.Fprintln(&b, "#!/bin/sh")
	server := d.Server
	if d.PBSVersion != "" {
		server += " (PBS " + d.PBSVersion + ")"
	}
	fmt.Fprintf(&b, "# optsched pbs plan for %s, state at %s\n", server, time.Unix(d.Time, 0).UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "# input sha256 %s\n", d.InputSHA256)
	fmt.Fprintf(&b, "# vnodes: %d owned: %d idle, %d partly used, %d not free%s; %d ignored\n",
		d.Nodes.Owned, d.Nodes.Idle, d.Nodes.PartlyUsed, sumValues(d.Nodes.NotFree), stateList(d.Nodes.NotFree), d.Nodes.Ignored)
	fmt.Fprintf(&b, "# topology: %s\n", d.Topology)
	if d.WholeNode.Jobs > 0 {
		fmt.Fprintf(&b, "# whole-node window: %d jobs, %s by %s%s, %.3f ms\n", d.WholeNode.Jobs, d.WholeNode.Status,
			d.WholeNode.Solver, solveFigures(d.WholeNode), d.WholeNode.ElapsedMS)
	}
	if cp := d.PartialNode; cp != nil && cp.Jobs > 0 {
		obj := ""
		if cp.Objective != nil {
			obj = fmt.Sprintf(", total queue time %.0f s", *cp.Objective)
		}
		fmt.Fprintf(&b, "# partial-node schedule: %d jobs, %s by %s%s, %.3f ms\n", cp.Jobs, cp.Status, cp.Solver, obj, cp.ElapsedMS)
	}
	for _, n := range d.Notes {
		fmt.Fprintf(&b, "# note: %s\n", n)
	}
	fmt.Fprintln(&b, "rc=0")
	if len(d.Starts) == 0 {
		fmt.Fprintln(&b, "# nothing starts this cycle")
	}
	for _, s := range d.Starts {
		cost := ""
		if s.Cost != nil {
			cost = fmt.Sprintf(", CH cost %d", *s.Cost)
		}
		fmt.Fprintf(&b, "# %s (queue %s): %s, placed by %s (%s), %s%s\n", s.Job, s.Queue, s.Path, s.Placement, s.Why, plural(len(s.Nodes), "vnode"), cost)
		fmt.Fprintf(&b, "%s -H %s %s || rc=1\n", shellQuote(qrun), shellQuote(s.ExecVnode), shellQuote(s.Job))
	}
	if len(d.Deferred) > 0 {
		fmt.Fprintf(&b, "# deferred (%d):\n", len(d.Deferred))
		for _, r := range d.Deferred {
			fmt.Fprintf(&b, "#   %s: %s\n", r.Job, r.Reason)
		}
	}
	if len(d.Skipped) > 0 {
		fmt.Fprintf(&b, "# skipped (%d queued jobs optsched does not start):\n", len(d.Skipped))
		for _, r := range d.Skipped {
			fmt.Fprintf(&b, "#   %s: %s\n", r.Job, r.Reason)
		}
	}
	fmt.Fprintln(&b, `exit "$rc"`)
	_, err := io.WriteString(out, b.String())
	return err
}

// plural writes "1 vnode", "2 vnodes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func solveFigures(s pbsSolveDoc) string {
	var parts []string
	if s.Objective != nil {
		parts = append(parts, fmt.Sprintf("CH cost %d", *s.Objective))
	}
	if s.Bound != nil {
		parts = append(parts, fmt.Sprintf("bound %.6g", *s.Bound))
	}
	if s.Gap != nil {
		parts = append(parts, fmt.Sprintf("gap %.3f%%", 100**s.Gap))
	}
	if s.Fallback != "" {
		parts = append(parts, "fallback: "+s.Fallback)
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ")
}

func sumValues(m map[string]int) int {
	t := 0
	for _, v := range m {
		t += v
	}
	return t
}

func stateList(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// shellQuote quotes s for a POSIX shell: unchanged when it has only safe
// characters, in double quotes when it has parentheses or '+' and nothing
// a double-quoted string expands, and in single quotes otherwise.
func shellQuote(s string) string {
	safe, dq := true, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("._-/@:=,", c) >= 0:
		case strings.IndexByte("()+[]", c) >= 0:
			safe = false
		default:
			safe, dq = false, false
		}
	}
	switch {
	case s == "":
		return "''"
	case safe:
		return s
	case dq:
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// summary is the one-line report of a cycle, for `optsched pbs run`.
func (p *pbsPlan) summary(applied bool) string {
	failed := 0
	for _, s := range p.Starts {
		if s.Applied && s.ExitCode != 0 {
			failed++
		}
	}
	verb := "would start"
	if applied {
		verb = "started"
	}
	ok := len(p.Starts) - failed
	line := fmt.Sprintf("%s: %s %d jobs", time.Unix(p.c.st.now, 0).UTC().Format(time.RFC3339), verb, ok)
	if failed > 0 {
		line += fmt.Sprintf(", qrun failed for %d", failed)
	}
	line += fmt.Sprintf(", %d deferred, %d skipped (input %.12s)", len(p.Deferred), len(p.c.skipped), p.Digest)
	return line
}
