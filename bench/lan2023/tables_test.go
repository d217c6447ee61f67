package lan2023

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
)

// tblTracePath is the paper's trace, shipped in instances/traces.
const tblTracePath = "../../instances/traces/lan2023_trace_1800_40.txt.gz"

// tblSynthetic returns a seeded trace in the shape of the paper's: arrival
// gaps uniform in [5,30] s, runtimes in [10,1800] s, 1–40 nodes.
func tblSynthetic(seed uint64, n int) *trace.Trace {
	rng := rand.New(rand.NewPCG(seed, 7))
	tr := &trace.Trace{}
	t := int64(0)
	for i := range n {
		t += 5 + rng.Int64N(26)
		rt := 10 + rng.Int64N(1791)
		tr.Jobs = append(tr.Jobs, trace.Job{ID: strconv.Itoa(i + 1), Submit: t, Runtime: rt, Walltime: rt, Nodes: 1 + rng.IntN(40)})
	}
	return tr
}

// tblSmall is the tests' protocol: 2 epochs × 5 periods, on a trace long
// enough for several distinct starts.
func tblSmall() TableConfig {
	cfg := DefaultTableConfig()
	cfg.Epochs, cfg.Periods = 2, 5
	return cfg
}

func TestRunTablesSynthetic(t *testing.T) {
	tr := tblSynthetic(3, 400)
	cfg := tblSmall()
	cfg.FreeLimit = 10 * time.Second
	r, err := RunTables(context.Background(), tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"Seq", "SA-500", "SA-1000", "NSA-500", "SA-eq", "exact", "exact-30 s", "free"}
	if len(r.Methods) != len(names) || len(r.Summary) != len(names) || len(r.Epochs) != 2 {
		t.Fatalf("%d methods, %d summary rows, %d epochs; want %d, %d, 2", len(r.Methods), len(r.Summary), len(r.Epochs), len(names), len(names))
	}
	for m, want := range names {
		if r.Methods[m].Name != want {
			t.Errorf("method %d is %q, want %q", m, r.Methods[m].Name, want)
		}
	}
	const seq, sa500, sa1000, nsa, saeq, exact, limited, free = 0, 1, 2, 3, 4, 5, 6, 7
	windows := 0
	for _, ep := range r.Epochs {
		rows := ep.Rows
		if ep.Windows == 0 || ep.Arrived == 0 {
			t.Fatalf("epoch %d: %d windows, %d arrivals; the idle cluster must start jobs", ep.Index, ep.Windows, ep.Arrived)
		}
		windows += ep.Windows
		// The exact SCAS optimum is a lower bound on Seq, a SCAS solution;
		// SA starts from Seq and never returns worse than its start.
		if rows[exact].Cost > rows[seq].Cost {
			t.Errorf("epoch %d: exact %.1f above Seq %.1f", ep.Index, rows[exact].Cost, rows[seq].Cost)
		}
		for _, m := range []int{sa500, sa1000, nsa, saeq} {
			if rows[m].Cost > rows[seq].Cost {
				t.Errorf("epoch %d: %s %.1f above Seq %.1f", ep.Index, rows[m].Method, rows[m].Cost, rows[seq].Cost)
			}
			// SA searches DCAS and may beat the SCAS optimum, but not by
			// much on these windows.
			if rows[m].Cost < 0.8*rows[exact].Cost {
				t.Errorf("epoch %d: %s %.1f implausibly below exact %.1f", ep.Index, rows[m].Method, rows[m].Cost, rows[exact].Cost)
			}
		}
		// The free optimum (any node sets) is never above the SCAS one, and
		// never below what SA finds on DCAS where it is proven.
		if rows[free].Cost > rows[exact].Cost || rows[free].Windows != ep.Windows || len(ep.FreeOptimal) != ep.Windows {
			t.Errorf("epoch %d: free %+v, exact %.1f", ep.Index, rows[free], rows[exact].Cost)
		}
		if rows[free].Optimal == ep.Windows {
			for _, m := range []int{sa500, sa1000, nsa, saeq} {
				if rows[m].Cost < rows[free].Cost {
					t.Errorf("epoch %d: %s %.1f below the proven free optimum %.1f", ep.Index, rows[m].Method, rows[m].Cost, rows[free].Cost)
				}
			}
		}
		if rows[exact].Optimal != ep.Windows || rows[exact].Windows != ep.Windows {
			t.Errorf("epoch %d: exact proved %d of %d windows (solved %d)", ep.Index, rows[exact].Optimal, ep.Windows, rows[exact].Windows)
		}
		// Nothing comes near 30 s: the limited run equals the unlimited.
		if rows[limited].Cancelled != 0 || rows[limited].Cost != rows[exact].Cost {
			t.Errorf("epoch %d: limited exact %+v differs from exact %+v", ep.Index, rows[limited], rows[exact])
		}
		if !rows[nsa].Built || rows[nsa].Windows != ep.Windows || rows[nsa].Cost <= 0 {
			t.Errorf("epoch %d: NSA-500 row %+v; want every window solved", ep.Index, rows[nsa])
		}
		if rows[saeq].MeanSteps < 1 || len(ep.WindowCosts) != ep.Windows {
			t.Errorf("epoch %d: SA-eq ran %.1f moves per window; %d window cost rows for %d windows",
				ep.Index, rows[saeq].MeanSteps, len(ep.WindowCosts), ep.Windows)
		}
		if rows[seq].Cost <= 0 || rows[seq].MeanTimeMS <= 0 || rows[seq].Jobs < ep.Windows {
			t.Errorf("epoch %d: Seq row %+v", ep.Index, rows[seq])
		}
		if ep.Started == 0 || ep.Started+ep.Waiting != ep.Arrived {
			t.Errorf("epoch %d: %d started + %d waiting ≠ %d arrived", ep.Index, ep.Started, ep.Waiting, ep.Arrived)
		}
	}
	if r.Windows != windows || r.Summary[exact].Windows != windows {
		t.Errorf("result counts %d windows, summary %d; epochs %d", r.Windows, r.Summary[exact].Windows, windows)
	}
	mean := (r.Epochs[0].Rows[seq].Cost + r.Epochs[1].Rows[seq].Cost) / 2
	if d := r.Summary[seq].Cost - mean; d > 1e-9 || d < -1e-9 {
		t.Errorf("summary Seq cost %.3f, mean of epochs %.3f", r.Summary[seq].Cost, mean)
	}

	var b bytes.Buffer
	PrintTables(&b, r)
	out := b.String()
	for _, want := range []string{"## Table III", "## Table IV", "NSA-500 against the other methods", "89588.7", "exact (paper: SCIP)",
		"105023.5", "91813.2", "18.96 s", "| exact-30 s (paper: SCIP-30 s) |", "2 %", "Where and why we differ", "not SCIP"} {
		if !strings.Contains(out, want) {
			t.Errorf("printed tables lack %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := WriteTablesCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + 3*len(names); len(recs) != want || recs[len(recs)-1][0] != "mean" {
		t.Errorf("CSV has %d records, want %d ending with the summary", len(recs), want)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("result does not marshal: %v", err)
	}
}

func TestRunTablesDeterministic(t *testing.T) {
	tr := tblSynthetic(5, 400)
	costs := func(seed uint64) []float64 {
		cfg := tblSmall()
		cfg.Seed = seed
		r, err := RunTables(context.Background(), tr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var out []float64
		for _, ep := range r.Epochs {
			out = append(out, float64(ep.StartJob))
			for m, row := range ep.Rows {
				if r.Methods[m].Name == "SA-eq" {
					// Its move count follows NSA's wall time: not reproducible.
					continue
				}
				out = append(out, row.Cost, float64(row.Windows), float64(row.Jobs))
			}
		}
		return out
	}
	a, b := costs(1), costs(1)
	if len(a) == 0 || !slicesEqual(a, b) {
		t.Errorf("seed 1 twice: %v vs %v", a, b)
	}
	if c := costs(2); slicesEqual(a, c) {
		t.Errorf("seeds 1 and 2 gave the same epochs: %v", a)
	}
}

func slicesEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRunTablesErrors(t *testing.T) {
	tr := tblSynthetic(1, 400)
	bad := func(edit func(*TableConfig)) TableConfig {
		cfg := tblSmall()
		edit(&cfg)
		return cfg
	}
	cases := []struct {
		name string
		tr   *trace.Trace
		cfg  TableConfig
		want string
	}{
		{"nil trace", nil, tblSmall(), "no trace"},
		{"empty trace", &trace.Trace{}, tblSmall(), "no jobs"},
		{"negative epochs", tr, bad(func(c *TableConfig) { c.Epochs = -1 }), "must be positive"},
		{"negative periods", tr, bad(func(c *TableConfig) { c.Periods = -3 }), "must be positive"},
		{"negative tau", tr, bad(func(c *TableConfig) { c.Tau = -60 }), "τ must be positive"},
		{"negative max jobs", tr, bad(func(c *TableConfig) { c.MaxJobs = -5 }), "max jobs"},
		{"negative limit", tr, bad(func(c *TableConfig) { c.ExactLimit = -time.Second }), "limit must be positive"},
		{"zero SA steps", tr, bad(func(c *TableConfig) { c.SASteps = []int{0} }), "SA step count 0"},
		{"repeated SA steps", tr, bad(func(c *TableConfig) { c.SASteps = []int{500, 500} }), "given twice"},
		{"trace shorter than an epoch", tr, bad(func(c *TableConfig) { c.Periods = 10_000 }), "less than an epoch"},
	}
	for _, c := range cases {
		_, err := RunTables(context.Background(), c.tr, c.cfg)
		if err == nil || !errors.Is(err, ErrTableConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want ErrTableConfig with %q", c.name, err, c.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunTables(ctx, tr, tblSmall()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	// A job larger than the cluster is dropped, not an error.
	big := tblSynthetic(2, 400)
	for i := range big.Jobs {
		if i%7 == 0 {
			big.Jobs[i].Nodes = 5000
		}
	}
	r, err := RunTables(context.Background(), big, tblSmall())
	if err != nil {
		t.Fatal(err)
	}
	if r.Epochs[0].Dropped == 0 {
		t.Errorf("no job dropped: %+v", r.Epochs[0])
	}
	if err := WriteTablesCSV(&bytes.Buffer{}, nil); err == nil {
		t.Error("WriteTablesCSV(nil): no error")
	}
	var b bytes.Buffer
	PrintTables(&b, nil) // must not panic
}

// TestRunTablesSmallCluster checks the protocol on a 2-pod cluster, where
// the queue backs up and jobs wait over periods (NWP rises).
func TestRunTablesSmallCluster(t *testing.T) {
	topo, err := model.NewLayout(2, 4, 10)
	if err != nil {
		t.Fatal(err)
	}
	cfg := tblSmall()
	cfg.Topology = topo
	cfg.Periods = 20
	r, err := RunTables(context.Background(), tblSynthetic(4, 600), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Nodes != 80 {
		t.Errorf("%d nodes, want 80", r.Nodes)
	}
	for _, ep := range r.Epochs {
		if ep.Waiting == 0 {
			t.Errorf("epoch %d: nothing waits on 80 nodes after 20 periods: %+v", ep.Index, ep)
		}
		if ep.Rows[5].Cost > ep.Rows[0].Cost {
			t.Errorf("epoch %d: exact %.1f above Seq %.1f", ep.Index, ep.Rows[5].Cost, ep.Rows[0].Cost)
		}
	}
}

// TestRunTablesRealTrace runs 1 epoch × 20 periods on the paper's trace.
// With LAN2023_TABLES_FULL=1 it runs the full protocol and prints it.
func TestRunTablesRealTrace(t *testing.T) {
	if _, err := os.Stat(tblTracePath); err != nil {
		t.Fatalf("the trace the repository ships (instances/traces) cannot be read: %v", err)
	}
	tr, err := trace.Open(tblTracePath, "lan", trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultTableConfig()
	cfg.Epochs, cfg.Periods = 1, 20
	full := os.Getenv("LAN2023_TABLES_FULL") == "1"
	if full {
		cfg = DefaultTableConfig()
		cfg.Progress = os.Stderr
	}
	r, err := RunTables(context.Background(), tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ep := r.Epochs[0]
	if ep.Windows < cfg.Periods/2 || ep.Rows[5].Cost <= 0 || ep.Rows[5].Cost > ep.Rows[0].Cost {
		t.Errorf("epoch 0: %d windows, exact %.1f, Seq %.1f", ep.Windows, ep.Rows[5].Cost, ep.Rows[0].Cost)
	}
	if r.Summary[6].CancelPct != 0 {
		t.Errorf("the 30 s limited exact run cancelled %.1f %% of the jobs", r.Summary[6].CancelPct)
	}
	if full {
		var b bytes.Buffer
		PrintTables(&b, r)
		t.Log("\n" + b.String())
	}
}

// TestRunTablesCancel gives the limited exact run a limit no solve meets:
// its windows are cancelled (their jobs counted, their cost not), while
// the trajectory, which follows the unlimited run, is unchanged.
func TestRunTablesCancel(t *testing.T) {
	tr := tblSynthetic(3, 400)
	base, err := RunTables(context.Background(), tr, tblSmall())
	if err != nil {
		t.Fatal(err)
	}
	cfg := tblSmall()
	cfg.ExactLimit = time.Nanosecond
	r, err := RunTables(context.Background(), tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	lim := r.Summary[6]
	if r.Methods[6].Name != "exact-1ns" || lim.Cancelled == 0 || lim.Cancelled > lim.Jobs || lim.CancelPct <= 0 {
		t.Fatalf("%s: %+v; want cancelled jobs", r.Methods[6].Name, lim)
	}
	if lim.Cancelled != lim.Jobs || lim.Cost != 0 {
		t.Errorf("a 1 ns limit must cancel every window: %+v", lim)
	}
	if r.Summary[5].Cost != base.Summary[5].Cost || r.Summary[0].Cost != base.Summary[0].Cost {
		t.Errorf("the limit changed the trajectory: exact %.1f vs %.1f, Seq %.1f vs %.1f",
			r.Summary[5].Cost, base.Summary[5].Cost, r.Summary[0].Cost, base.Summary[0].Cost)
	}
}

// TestRunTablesWorkers: one worker and several give the same tables —
// every figure but the times and SA-eq (whose move count follows NSA's
// wall time) — with the epochs in order, and the progress lines in epoch
// order too.
func TestRunTablesWorkers(t *testing.T) {
	tr := tblSynthetic(5, 600)
	run := func(workers int) (*TableResult, string) {
		cfg := tblSmall()
		cfg.Epochs, cfg.Periods, cfg.Workers = 5, 4, workers
		var progress bytes.Buffer
		cfg.Progress = &progress
		r, err := RunTables(context.Background(), tr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return r, progress.String()
	}
	strip := func(r *TableResult) []TableEpoch {
		var out []TableEpoch
		for _, ep := range r.Epochs {
			ep.Rows = append([]TableRow(nil), ep.Rows...)
			ep.WindowCosts = append([][]int64(nil), ep.WindowCosts...)
			for m := range ep.Rows {
				row := &ep.Rows[m]
				row.MeanTimeMS, row.MaxTimeMS, row.timeSum = 0, 0, 0
				if r.Methods[m].kind == tblKindSAEq {
					*row = TableRow{}
				}
			}
			for w, c := range ep.WindowCosts {
				c = append([]int64(nil), c...)
				for m := range c {
					if r.Methods[m].kind == tblKindSAEq {
						c[m] = 0
					}
				}
				ep.WindowCosts[w] = c
			}
			out = append(out, ep)
		}
		return out
	}
	one, p1 := run(1)
	for _, w := range []int{2, 3} {
		many, pn := run(w)
		if !reflect.DeepEqual(strip(one), strip(many)) {
			t.Fatalf("1 and %d workers give other tables", w)
		}
		for i, ep := range many.Epochs {
			if ep.Index != i {
				t.Fatalf("%d workers: epoch %d reported at %d", w, ep.Index, i)
			}
		}
		order := func(p string) []string {
			var idx []string
			for _, l := range strings.Split(strings.TrimSpace(p), "\n") {
				idx = append(idx, strings.SplitN(l, ":", 2)[0])
			}
			return idx
		}
		if got, want := order(pn), order(p1); !reflect.DeepEqual(got, want) || len(got) != 5 {
			t.Fatalf("%d workers: progress lines %v, want %v", w, got, want)
		}
	}
	windows := 0
	for _, ep := range one.Epochs {
		windows += ep.Windows
	}
	if windows == 0 {
		t.Fatal("no window solved: the comparison is empty")
	}
}

// TestRunTablesWorkersError: with several workers, a failing run reports
// the context's error and no result; a negative worker count is refused.
func TestRunTablesWorkersError(t *testing.T) {
	cfg := tblSmall()
	cfg.Workers = 2
	cfg.Epochs = 4
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunTables(ctx, tblSynthetic(3, 400), cfg); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v, want context.Canceled", err)
	}
	cfg.Workers = -1
	if _, err := RunTables(context.Background(), tblSynthetic(3, 400), cfg); !errors.Is(err, ErrTableConfig) {
		t.Fatalf("workers −1: %v, want ErrTableConfig", err)
	}
}
