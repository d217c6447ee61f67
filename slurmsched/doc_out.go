package slurmsched

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// PlanDoc is the JSON form of a cycle's plan and of what Apply did with it
// (`optsched slurm plan -o json`, and the plan of each line of the audit
// log). Field names are a contract.
type PlanDoc struct {
	Starts   []StartDoc `json:"starts"`
	Deferred []Reason   `json:"deferred"`
	// Dropped are the starts Recheck removed.
	Dropped []Reason `json:"dropped,omitempty"`
	// Solver names the solver that placed the whole-node jobs, Objective
	// their total CH cost.
	Solver    string   `json:"solver,omitempty"`
	Objective *int64   `json:"objective,omitempty"`
	Notes     []string `json:"notes,omitempty"`
	Digest    string   `json:"input_sha256,omitempty"`
}

// StartDoc is one start of a PlanDoc: the Start and what Apply did.
type StartDoc struct {
	Start
	// Status is what Apply did: "released", or why not (empty in a dry
	// run).
	Status string `json:"status,omitempty"`
}

// Doc returns the JSON form of the plan and of what Apply did with it (o;
// nil when it was not applied).
func (p *Plan) Doc(o *Outcome) PlanDoc {
	d := PlanDoc{Deferred: p.Deferred, Dropped: p.Dropped, Solver: p.Solver, Objective: p.Objective, Notes: p.Notes, Digest: p.Digest}
	if p.Starts != nil {
		d.Starts = make([]StartDoc, len(p.Starts))
		for i, s := range p.Starts {
			d.Starts[i] = StartDoc{Start: *s, Status: o.status(i)}
		}
	}
	return d
}

// WriteJSON writes the plan and what Apply did with it (o; nil when it
// did not run) as one JSON document (one line when compact).
func (p *Plan) WriteJSON(w io.Writer, compact bool, o *Outcome) error {
	var data []byte
	var err error
	if compact {
		data, err = json.Marshal(p.Doc(o))
	} else {
		data, err = json.MarshalIndent(p.Doc(o), "", "  ")
	}
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// WriteText writes the plan and what Apply did with it (o; nil when it
// did not run) for people. Every line starts with '#' or names a
// decision, never a command: a dry run's plan is not a script to run
// (optsched slurm plan --apply acts, with its checks).
func (p *Plan) WriteText(w io.Writer, applied bool, o *Outcome) error {
	var b strings.Builder
	if applied {
		b.WriteString("# optsched slurm plan: applied\n")
	} else {
		b.WriteString("# optsched slurm plan: DRY RUN, nothing was changed (--apply acts)\n")
	}
	for i, s := range p.Starts {
		fmt.Fprintf(&b, "start  job %s on %s  (%d node(s), %s, %d CPUs and %d MB a node)", s.Job, s.NodeList, len(s.Nodes), s.Path, s.CPUsPerNode, s.MemPerNode)
		if st := o.status(i); st != "" {
			fmt.Fprintf(&b, "  [%s]", st)
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

// Summary is one line about the plan and what Apply did with it (o; nil
// when it did not run).
func (p *Plan) Summary(o *Outcome) string {
	return fmt.Sprintf("%d start(s), %d released, %d dropped, %d waiting", len(p.Starts), o.Released(), len(p.Dropped), len(p.Deferred))
}
