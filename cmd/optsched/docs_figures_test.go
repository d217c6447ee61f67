package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/optsched/optsched/bench/gaps"
	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/output"
)

// readDoc returns the text of a file of the repository.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// number parses a figure as the docs write it: "107,102", "24.36".
func number(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	if err != nil {
		t.Fatalf("figure %q: %v", s, err)
	}
	return v
}

// TestReadmeExampleFigures: the README's prose figures of the example
// window — the optimum and the paper's Seq placement — are what solve
// prints.
func TestReadmeExampleFigures(t *testing.T) {
	m := regexp.MustCompile(`cost is ([\d,]+), against ([\d,]+) for the paper's "Seq\."`).FindStringSubmatch(strings.Join(strings.Fields(readDoc(t, "README.md")), " "))
	if m == nil {
		t.Fatal(`README: no "cost is X, against Y for the paper's "Seq."`)
	}
	for i, args := range [][]string{{"solve", "-o", "json", example}, {"solve", "-o", "json", "--heuristic", "seq", example}} {
		code, out, errs := optsched(t, "", args...)
		var d output.ResultDoc
		if code != exitOK || json.Unmarshal([]byte(out), &d) != nil || d.Objective == nil {
			t.Fatalf("%v: exit %d %s", args, code, errs)
		}
		if want := number(t, m[i+1]); float64(*d.Objective) != want {
			t.Errorf("%v: objective %d, the README says %s", args, *d.Objective, m[i+1])
		}
	}
}

// TestCPDocFirstLine: the status line docs/cp.md shows for the Eurora-like
// example is what solve --encoding cp prints (the optimum, proven).
func TestCPDocFirstLine(t *testing.T) {
	want := docBlock(t, "../../docs/cp.md", "optsched bench cp --solvers sat,bnb,pbs-walltime hard/")
	// docBlock returns the sh block; the output block follows it.
	text := readDoc(t, "docs/cp.md")
	_, after, _ := strings.Cut(text, strings.Join(want, "\n"))
	_, after, _ = strings.Cut(after, "```\n\n```\n")
	first, _, _ := strings.Cut(after, "\n")
	code, out, errs := optsched(t, "", "solve", "--encoding", "cp", "-o", "table", "../../instances/eurora-example.json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got, _, _ := strings.Cut(out, "\n")
	if !strings.HasPrefix(first, "status ") || got != first {
		t.Errorf("first line %q, docs/cp.md shows %q", got, first)
	}
}

// TestSolversDocGaps: the paper-class gaps docs/solvers.md and the README
// state are what bench scas measures (the gaps are deterministic: csp and
// free prove every paper window, the heuristics are step-counted and
// seeded; latencies are not compared).
func TestSolversDocGaps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bench scas on 200 windows")
	}
	dir := t.TempDir()
	js := filepath.Join(dir, "scas.json")
	code, _, errs := optsched(t, "", "bench", "scas", "--classes", "paper", "--windows", "200", "--time-limit", "20s",
		"--solvers", "csp,free,seq,sa-500,sa-1000,nsa,slurm,mishra-greedy,mishra-balanced,mishra-adaptive", "--json", js)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep gaps.SCASReport
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	row := map[string]gaps.Row{}
	for _, r := range rep.Rows {
		row[r.Solver] = r
	}
	pct := func(x float64) string { return fmt.Sprintf("%.2f %%", 100*x) }
	// docs/solvers.md: | paper (200 windows) | Seq | median | p99 | mean gap | max gap |
	solvers := readDoc(t, "docs/solvers.md")
	names := map[string]string{"Seq": "seq", "SA-500": "sa-500", "SA-1000": "sa-1000", "slurm": "slurm",
		"mishra-greedy": "mishra-greedy", "mishra-balanced": "mishra-balanced", "mishra-adaptive": "mishra-adaptive"}
	line := regexp.MustCompile(`(?m)^\| (?:paper \(200 windows\))? ?\| ([\w-]+) \| [^|]+ \| [^|]+ \| ([\d.]+ %) \| ([\d.]+ %) \|$`)
	_, paper, _ := strings.Cut(solvers, "| paper (200 windows) |")
	paper, _, _ = strings.Cut("| paper (200 windows) |"+paper, "| large")
	seen := 0
	for _, m := range line.FindAllStringSubmatch(paper, -1) {
		r, ok := row[names[m[1]]]
		if !ok {
			continue
		}
		seen++
		if pct(r.MeanGap) != m[2] || pct(r.MaxGap) != m[3] {
			t.Errorf("docs/solvers.md %s: mean %s max %s, bench scas measures %s and %s", m[1], m[2], m[3], pct(r.MeanGap), pct(r.MaxGap))
		}
	}
	if seen != len(names) {
		t.Errorf("docs/solvers.md: %d of the %d paper rows compared", seen, len(names))
	}
	// README: | mean gap | Seq | SA | NSA | Slurm | Mishra greedy | balanced | adaptive | csp |
	m := regexp.MustCompile(`\| mean gap \|((?: [\d.]+ % \|){8})`).FindStringSubmatch(readDoc(t, "README.md"))
	if m == nil {
		t.Fatal("README: no allocator row")
	}
	figs := strings.Split(strings.Trim(m[1], " |"), " | ")
	for i, s := range []string{"seq", "sa-500", "nsa", "slurm", "mishra-greedy", "mishra-balanced", "mishra-adaptive", "csp"} {
		r := row[s]
		if r.FreeGaps != r.Windows {
			t.Fatalf("%s: free proved %d of %d windows", s, r.FreeGaps, r.Windows)
		}
		doc := number(t, strings.TrimSuffix(figs[i], " %"))
		// The README rounds to two or three significant digits.
		digits := len(strings.TrimLeft(strings.ReplaceAll(strings.TrimSuffix(figs[i], " %"), ".", ""), "0"))
		if got := 100 * r.MeanFreeGap; strconv.FormatFloat(got, 'g', digits, 64) != strconv.FormatFloat(doc, 'g', digits, 64) {
			t.Errorf("README %s: %s, bench scas measures %.4f %%", s, figs[i], got)
		}
	}
}

// TestReadmeContractEncodings: the result contract in the README names
// every encoding a result can carry (issue 36: tree was missing).
func TestReadmeContractEncodings(t *testing.T) {
	readme := readDoc(t, "README.md")
	_, row, ok := strings.Cut(readme, "| `encoding`, `solver` |")
	if !ok {
		t.Fatal("README: no encoding row in the result contract")
	}
	row, _, _ = strings.Cut(row, "\n")
	for _, e := range []string{catalog.CSP, catalog.SCAS, catalog.Tree, catalog.DCAS, catalog.CP, "none"} {
		if !strings.Contains(row, "`"+e+"`") {
			t.Errorf("the contract's encoding row lacks %q: %s", e, row)
		}
	}
}

// TestKTHTimingStatedOnce: the README and docs/reproducing.md give the
// same time for KTH SP2 under the window policy (issue 36: 1.3 s in one
// paragraph, 1.7 s in another).
func TestKTHTimingStatedOnce(t *testing.T) {
	statements := []struct{ file, re string }{
		{"README.md", "KTH SP2 \\(27,992 jobs\\) replays in [\\d.]+ s \\(`easy`\\) to ([\\d.]+) s \\(`window`\\)"},
		{"docs/reproducing.md", "KTH SP2 log \\(100 nodes, 27,992 jobs\\) runs in ([\\d.]+) s under the window policy"},
		{"docs/reproducing.md", "replays KTH SP2 \\(27,992 jobs, 100 nodes\\) in [\\d.]+ s under `easy` and ([\\d.]+) s under `window`"},
	}
	var figs []string
	for _, st := range statements {
		m := regexp.MustCompile(st.re).FindStringSubmatch(strings.Join(strings.Fields(readDoc(t, st.file)), " "))
		if m == nil {
			t.Fatalf("%s: no statement %s", st.file, st.re)
		}
		figs = append(figs, m[1])
	}
	if figs[0] != figs[1] || figs[1] != figs[2] {
		t.Errorf("KTH SP2 under window: %v s in the three statements", figs)
	}
}
