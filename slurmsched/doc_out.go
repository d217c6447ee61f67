package slurmsched

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteJSON writes the plan as one JSON document (one line when compact).
func (p *Plan) WriteJSON(w io.Writer, compact bool) error {
	var data []byte
	var err error
	if compact {
		data, err = json.Marshal(p)
	} else {
		data, err = json.MarshalIndent(p, "", "  ")
	}
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// WriteText writes the plan for people. Every line starts with '#' or
// names a decision, never a command: a dry run's plan is not a script to
// run (optsched slurm plan --apply acts, with its checks).
func (p *Plan) WriteText(w io.Writer, applied bool) error {
	var b strings.Builder
	if applied {
		b.WriteString("# optsched slurm plan: applied\n")
	} else {
		b.WriteString("# optsched slurm plan: DRY RUN, nothing was changed (--apply acts)\n")
	}
	for _, s := range p.Starts {
		fmt.Fprintf(&b, "start  job %s on %s  (%d node(s), %s, %d CPUs and %d MB a node)", s.Job, s.NodeList, len(s.Nodes), s.Path, s.CPUsPerNode, s.MemPerNode)
		if s.Status != "" {
			fmt.Fprintf(&b, "  [%s]", s.Status)
		}
		b.WriteByte('\n')
	}
	for _, d := range p.Dropped {
		fmt.Fprintf(&b, "drop   job %s: %s\n", d.Job, d.Reason)
	}
	for _, d := range p.Deferred {
		fmt.Fprintf(&b, "wait   job %s: %s\n", d.Job, d.Reason)
	}
	if p.Solver != "" && p.Objective != nil {
		fmt.Fprintf(&b, "# whole-node jobs placed by %s, CH cost %d\n", p.Solver, *p.Objective)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "# note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Summary is one line about the plan.
func (p *Plan) Summary() string {
	rel := 0
	for _, s := range p.Starts {
		if s.Status == "released" {
			rel++
		}
	}
	return fmt.Sprintf("%d start(s), %d released, %d dropped, %d waiting", len(p.Starts), rel, len(p.Dropped), len(p.Deferred))
}
