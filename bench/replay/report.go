package replay

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Report is the document of `optsched replay -o json`; its field names
// are a contract.
type Report struct {
	// Backend is "pbs" or "slurm"; Server the server's name.
	Backend string `json:"backend"`
	Server  string `json:"server"`
	RunID   string `json:"run_id"`
	// Trace is the log's path; From and N the jobs replayed (0-based,
	// in submit order); Speedup and WalltimePad how.
	Trace       string  `json:"trace"`
	From        int     `json:"from"`
	N           int     `json:"n"`
	Speedup     float64 `json:"speedup"`
	WalltimePad int64   `json:"walltime_pad_s"`
	// Mapping of processors to chunks.
	Mapping MappingDoc `json:"mapping"`
	// Topology says where the CH costs' switch tree was read from; Cost
	// names the cost model.
	Topology string `json:"topology"`
	Cost     string `json:"cost"`
	// Elapsed is the run's wall time, s; Error why it stopped early ("" when
	// every job finished); Deleted the ids it deleted then.
	Elapsed float64     `json:"elapsed_s"`
	Error   string      `json:"error,omitempty"`
	Deleted []string    `json:"deleted"`
	Summary Summary     `json:"summary"`
	Jobs    []JobResult `json:"jobs"`
}

// MappingDoc is a Mapping in a Report.
type MappingDoc struct {
	Nodes         int    `json:"nodes"`
	MaxProcs      int    `json:"max_procs"`
	NCPUsPerChunk int    `json:"ncpus_per_chunk"`
	Rule          string `json:"rule"`
}

// Doc returns m as a report field.
func (m Mapping) Doc() MappingDoc {
	return MappingDoc{Nodes: m.Nodes, MaxProcs: m.MaxProcs, NCPUsPerChunk: m.NCPUs, Rule: m.String()}
}

// WriteSummary writes the summary for people.
func (r *Report) WriteSummary(w io.Writer) error {
	s := r.Summary
	var b strings.Builder
	fmt.Fprintf(&b, "replay %s: jobs %d..%d of %s at speedup %g on %s (%s), run %s\n", r.Backend, r.From, r.From+r.N-1, r.Trace, r.Speedup, r.Server, plural(s.Nodes, "node"), r.RunID)
	fmt.Fprintf(&b, "mapping: %s; walltime = request/%g + %d s\n", r.Mapping.Rule, r.Speedup, r.WalltimePad)
	fmt.Fprintf(&b, "topology: %s; cost %s\n", r.Topology, r.Cost)
	fmt.Fprintf(&b, "jobs %d: ran %d (failed %d, started more than once %d), not run %d, unfinished %d\n", s.Jobs, s.Ran, s.Failed, s.RanTwice, s.NotRun, s.Unfinished)
	fmt.Fprintf(&b, "wait mean %.1f s, max %d s; bounded slowdown mean %.2f, max %.2f\n", s.MeanWait, s.MaxWait, s.MeanBSLD, s.MaxBSLD)
	fmt.Fprintf(&b, "makespan %d s, utilisation %.1f%% (%d node-s)\n", s.Makespan, 100*s.Utilisation, s.NodeSeconds)
	fmt.Fprintf(&b, "CH cost: mean %.0f over %d multi-node jobs (%.0f over every job that ran)\n", s.MeanCH, s.MultiNode, s.MeanCHAll)
	if r.Error != "" {
		fmt.Fprintf(&b, "stopped early: %s; deleted %d of this run's jobs\n", r.Error, len(r.Deleted))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteTable writes the summary and a line per job for people.
func (r *Report) WriteTable(w io.Writer) error {
	if err := r.WriteSummary(w); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nK\tID\tPROCS\tCHUNKS\tAT\tSLEEP\tWALL\tSTATE\tEXIT\tWAIT\tRUN\tBSLD\tCH\tNODES")
	for _, j := range r.Jobs {
		exit := "-"
		if j.Exit != nil {
			exit = fmt.Sprint(*j.Exit)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%.1f\t%d\t%d\t%s\t%s\t%d\t%d\t%.2f\t%d\t%s\n", j.K, j.ID, j.Procs, j.Chunks, j.SubmitAt, j.Sleep, j.Walltime,
			j.State, exit, j.Wait, j.Run, j.BSLD, j.CH, abbreviate(j.Nodes, 4))
	}
	return tw.Flush()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func abbreviate(names []string, n int) string {
	if len(names) == 0 {
		return "-"
	}
	if len(names) <= n {
		return strings.Join(names, ",")
	}
	return strings.Join(names[:n], ",") + fmt.Sprintf(",… (%d)", len(names))
}
