package pbsched

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/optsched/optsched/output"
)

// PlanDoc is the JSON form of a cycle (`optsched pbs plan -o json`, and
// each line of the audit log). Field names are a contract.
type PlanDoc struct {
	Version     int                `json:"version"`
	Server      string             `json:"pbs_server"`
	PBSVersion  string             `json:"pbs_version"`
	Time        int64              `json:"time"`
	InputSHA256 string             `json:"input_sha256"`
	DryRun      bool               `json:"dry_run"`
	Topology    string             `json:"topology"`
	Nodes       NodesDoc           `json:"nodes"`
	WholeNode   SolveDoc[int64]    `json:"whole_node"`
	PartialNode *SolveDoc[float64] `json:"partial_node,omitempty"`
	// Selection is backfill or lan2023; Reservation the start held for
	// the first job that does not fit now (backfill).
	Selection   string       `json:"selection"`
	Reservation *Reservation `json:"reservation,omitempty"`
	// Order is fifo or sjf: the order the queued jobs were considered in.
	Order    string     `json:"order"`
	Starts   []StartDoc `json:"starts"`
	Deferred []Reason   `json:"deferred"`
	Skipped  []Reason   `json:"skipped"`
	Notes    []string   `json:"notes"`
	Failed   []Reason   `json:"failed,omitempty"`
}

// NodesDoc counts the vnodes of a cycle.
type NodesDoc struct {
	// Owned are the vnodes optsched schedules (in the topology); Idle
	// and PartlyUsed the free ones among them; NotFree counts the others
	// by state; Ignored are the vnodes outside --nodes or the topology.
	Owned      int            `json:"owned"`
	Idle       int            `json:"idle"`
	PartlyUsed int            `json:"partly_used"`
	NotFree    map[string]int `json:"not_free"`
	Ignored    int            `json:"ignored"`
}

// StartDoc is one start of the plan.
type StartDoc struct {
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

// Doc returns the JSON form of the plan and of what Apply did with it
// (o; nil when it was not applied); qrun is the command written.
func (p *Plan) Doc(qrun string, dryRun bool, o *Outcome) PlanDoc {
	h := p.Header
	d := PlanDoc{Version: 1, Server: h.Server, PBSVersion: h.PBSVersion, Time: h.Time,
		InputSHA256: p.Digest, DryRun: dryRun, Topology: h.Topology, WholeNode: p.Solve, PartialNode: p.CP,
		Starts: []StartDoc{}, Deferred: nonNil(p.Deferred), Skipped: nonNil(h.Skipped), Notes: nonNil(p.Notes),
		Selection: p.Selection, Reservation: p.Reservation, Order: p.Order, Nodes: h.Nodes}
	for i, s := range p.Starts {
		ev := s.ExecVnode()
		sd := StartDoc{Job: s.Job, Queue: s.Queue, Path: s.Path, Placement: s.Placement, Why: s.Why,
			Nodes: s.Nodes(), ExecVnode: ev, Command: []string{qrun, "-H", ev, "--", s.Job}}
		if s.Cost >= 0 {
			c := s.Cost
			sd.Cost = &c
		}
		if so := o.start(i); so.Applied {
			if so.Args != nil {
				sd.Command = append([]string{qrun}, so.Args...)
			}
			code := so.ExitCode
			sd.ExitCode = &code
			sd.Error = so.Error
			if so.ExitCode != 0 {
				d.Failed = append(d.Failed, Reason{s.Job, so.Error})
			}
		}
		d.Starts = append(d.Starts, sd)
	}
	return d
}

// start is what came of start i (the zero StartOutcome when the plan
// was not applied: o is nil).
func (o *Outcome) start(i int) StartOutcome {
	if o == nil || i >= len(o.Starts) {
		return StartOutcome{}
	}
	return o.Starts[i]
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// nodeCounts counts the owned vnodes by what they can take.
func (c *cluster) nodeCounts() NodesDoc {
	d := NodesDoc{Owned: len(c.vnodes), NotFree: map[string]int{}, Ignored: c.ignored}
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

// WriteScript writes the plan as a POSIX shell script: one qrun -H line
// per start, each with a comment saying what it is, every deferred and
// skipped job with why it waits, and an exit status that is non-zero when
// any qrun failed (the script goes on after a failure).
//
// With applied (--apply: the qrun commands have run) it writes the same
// plan as a record instead, every line a comment, each start with the
// command that ran and its exit status (from o, what Apply did; nil when
// it did not run): run by sh, it does nothing, so that piping it to sh
// by habit cannot start the jobs twice.
func (p *Plan) WriteScript(out io.Writer, qrun string, applied bool, o *Outcome) error {
	d := p.Doc(qrun, !applied, o)
	var b strings.Builder
	if applied {
		fmt.Fprintln(&b, "# APPLIED: optsched already ran the qrun commands below; this is a record, not a script")
	} else {
		fmt.Fprintln(&b, "#!/bin/sh")
	}
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
	if r := d.Reservation; r != nil {
		at := "never (too few vnodes will ever be empty)"
		if r.Start != 0 {
			at = time.Unix(r.Start, 0).UTC().Format(time.RFC3339)
		}
		within := ""
		if r.Within != "" {
			within = fmt.Sprintf(" of switch %s (%s, waiting for one switch)", r.Switch, r.Within)
		}
		fmt.Fprintf(&b, "# backfill: job %s reserved at %s, %d vnodes%s, %d extra\n", r.Job, at, r.Vnodes, within, r.Extra)
	}
	for _, n := range d.Notes {
		fmt.Fprintf(&b, "# note: %s\n", n)
	}
	if !applied {
		fmt.Fprintln(&b, "rc=0")
	}
	if len(d.Starts) == 0 {
		fmt.Fprintln(&b, "# nothing starts this cycle")
	}
	for _, s := range d.Starts {
		cost := ""
		if s.Cost != nil {
			cost = fmt.Sprintf(", CH cost %d", *s.Cost)
		}
		fmt.Fprintf(&b, "# %s (queue %s): %s, placed by %s (%s), %s%s\n", s.Job, s.Queue, s.Path, s.Placement, s.Why, plural(len(s.Nodes), "vnode"), cost)
		cmd := fmt.Sprintf("%s -H %s -- %s", shellQuote(qrun), shellQuote(s.ExecVnode), shellQuote(s.Job))
		switch {
		case !applied:
			fmt.Fprintf(&b, "%s || rc=1\n", cmd)
		case s.ExitCode == nil:
			fmt.Fprintf(&b, "#   not run: %s\n", cmd)
		case *s.ExitCode == 0:
			fmt.Fprintf(&b, "#   ran: %s (exit 0)\n", cmd)
		default:
			fmt.Fprintf(&b, "#   FAILED: %s (exit %d: %s)\n", cmd, *s.ExitCode, s.Error)
		}
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
	if !applied {
		fmt.Fprintln(&b, `exit "$rc"`)
	}
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

func solveFigures(s SolveDoc[int64]) string {
	var parts []string
	if s.Objective != nil {
		parts = append(parts, fmt.Sprintf("CH cost %d", *s.Objective))
	}
	if s.Bound != nil {
		parts = append(parts, "bound "+output.Figure(*s.Bound))
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

// Summary is the one-line report of a cycle, for `optsched pbs run`: the
// plan and what Apply did with it (o; nil when it did not run).
func (p *Plan) Summary(applied bool, o *Outcome) string {
	ok, failed, notRun := 0, 0, 0
	for i := range p.Starts {
		switch so := o.start(i); {
		case applied && !so.Applied:
			notRun++
		case so.Applied && so.ExitCode != 0:
			failed++
		default:
			ok++
		}
	}
	verb := "would start"
	if applied {
		verb = "started"
	}
	line := fmt.Sprintf("%s: %s %d jobs", time.Unix(p.Header.Time, 0).UTC().Format(time.RFC3339), verb, ok)
	if failed > 0 {
		line += fmt.Sprintf(", qrun failed for %d", failed)
	}
	if notRun > 0 {
		line += fmt.Sprintf(", %d not run (cycle aborted)", notRun)
	}
	line += fmt.Sprintf(", %d deferred, %d skipped (input %.12s)", len(p.Deferred), len(p.Header.Skipped), p.Digest)
	return line
}
