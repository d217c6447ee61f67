//go:build pbsitest

package itest

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cfgSched is pbs-up.sh with PBSNS_VNODES=16 PBSNS_SCHED=1: vnodes
// pbshost[0]..pbshost[15] (ncpus=4, tier0 = t0_<i/2>, tier1 = t1_<i/4>)
// and pbs_sched scheduling (scheduling=true): the server as an operator
// runs it, which `optsched replay` measures.
const cfgSched = "sched"

const kthLog = "instances/traces/KTH-SP2-1996-2.1-cln.swf.gz"

// histJob is what the replay tests read of qstat -fx -F json, with their
// own code (not optsched's readers).
type histJob struct {
	Name     string         `json:"Job_Name"`
	State    string         `json:"job_state"`
	QTime    string         `json:"qtime"`
	STime    string         `json:"stime"`
	ObitTime string         `json:"obittime"`
	Exec     string         `json:"exec_vnode"`
	Exit     *int           `json:"Exit_status"`
	RunCount *int           `json:"run_count"`
	Used     map[string]any `json:"resources_used"`
	List     map[string]any `json:"Resource_List"`
}

func history(t *testing.T) map[string]histJob {
	t.Helper()
	var doc struct {
		Jobs map[string]histJob `json:"Jobs"`
	}
	if err := json.Unmarshal([]byte(pbsRun(t, "qstat", "-fx", "-F", "json")), &doc); err != nil {
		t.Fatalf("qstat -fx -F json: %v", err)
	}
	return doc.Jobs
}

func ctime(t *testing.T, s string) int64 {
	t.Helper()
	tm, err := time.ParseInLocation("Mon Jan _2 15:04:05 2006", s, time.Local)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return tm.Unix()
}

func hmsSeconds(t *testing.T, v any) int64 {
	t.Helper()
	s := fmt.Sprint(v)
	var total int64
	for _, p := range strings.Split(s, ":") {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			t.Fatalf("duration %q", s)
		}
		total = total*60 + n
	}
	return total
}

// replayReport is the part of `optsched replay -o json` the test reads.
type replayReport struct {
	RunID   string   `json:"run_id"`
	Deleted []string `json:"deleted"`
	Summary struct {
		Jobs, Ran, Failed, NotRun, Unfinished int
		RanTwice                              int     `json:"ran_more_than_once"`
		MeanWait                              float64 `json:"mean_wait_s"`
		MaxWait                               int64   `json:"max_wait_s"`
		Makespan                              int64   `json:"makespan_s"`
		NodeSeconds                           int64   `json:"node_seconds"`
		MultiNode                             int     `json:"multi_node_jobs"`
	} `json:"summary"`
	Jobs []struct {
		K      int      `json:"k"`
		Name   string   `json:"name"`
		ID     string   `json:"id"`
		Chunks int      `json:"chunks"`
		State  string   `json:"state"`
		Wait   int64    `json:"wait_s"`
		Run    int64    `json:"run_s"`
		Nodes  []string `json:"nodes"`
		CH     int64    `json:"ch_cost"`
	} `json:"jobs"`
}

// TestSchedReplay replays 10 jobs of the KTH SP2 log at speedup 2000
// under pbs_sched, with a job of someone else's running beside them, and
// checks against qstat -fx: every replay job ran once and ended with 0,
// named ors-<run>-<k>, with the chunks asked; no other job was touched;
// and the report's waits, runs, vnodes, makespan and node-seconds are
// the server's.
func TestSchedReplay(t *testing.T) {
	need(t, cfgSched)
	reset(t)
	other := sleepJob(t, "other", 40, "select=1:ncpus=1")
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	args := []string{"replay", "--server", "pbs", "--test-server", "--user", pbsUser, "--trace", kthLog,
		"--from", "4500", "--jobs", "10", "--speedup", "2000", "--run-id", "it1", "--poll", "500ms", "-o", "json", "--json", out}
	r := runCmd(5*time.Minute, optschedBin, args...)
	t.Logf("$ optsched %s -> exit %d\n%s", shellQuote(args), r.code, indent(r.stderr))
	if r.code != 0 || r.err != nil {
		t.Fatalf("replay: %v", r)
	}
	var rep replayReport
	b, err := os.ReadFile(out)
	if err != nil || json.Unmarshal(b, &rep) != nil || r.stdout != string(b) {
		t.Fatalf("report: %v (stdout and --json differ: %v)", err, r.stdout != string(b))
	}
	hist := history(t)
	if j := hist[other]; j.State != "R" && !(j.State == "F" && j.Exit != nil && *j.Exit == 0) {
		t.Errorf("the other job %s: %+v (touched by the replay?)", other, j)
	}
	named := 0
	for _, j := range hist {
		if strings.HasPrefix(j.Name, "ors-it1-") {
			named++
		}
	}
	if named != 10 || len(rep.Jobs) != 10 || len(rep.Deleted) != 0 {
		t.Fatalf("%d jobs named ors-it1-* on the server, %d in the report, %d deleted", named, len(rep.Jobs), len(rep.Deleted))
	}
	var first, last, nodeSec int64
	var sumWait float64
	for _, rj := range rep.Jobs {
		h, ok := hist[rj.ID]
		if !ok {
			t.Fatalf("report job %s is not on the server", rj.ID)
		}
		if h.Name != fmt.Sprintf("ors-it1-%d", rj.K) || h.State != "F" || h.Exit == nil || *h.Exit != 0 || h.RunCount == nil || *h.RunCount != 1 {
			t.Errorf("job %s: %+v", rj.ID, h)
			continue
		}
		if sel := fmt.Sprint(h.List["select"]); sel != fmt.Sprintf("%d:ncpus=4", rj.Chunks) || fmt.Sprint(h.List["place"]) != "excl" {
			t.Errorf("job %s: select %s place %v, want %d chunks, excl", rj.ID, sel, h.List["place"], rj.Chunks)
		}
		q, s, e := ctime(t, h.QTime), ctime(t, h.STime), ctime(t, h.ObitTime)
		run := max(hmsSeconds(t, h.Used["walltime"]), 1)
		vn := vnodesOf(h.Exec)
		slices.Sort(vn)
		vn = slices.Compact(vn)
		got := slices.Clone(rj.Nodes)
		slices.Sort(got)
		if rj.State != "ran" || rj.Wait != s-q || rj.Run != run || !slices.Equal(got, vn) || len(vn) != rj.Chunks {
			t.Errorf("job %s: report wait %d run %d nodes %v; server wait %d run %d vnodes %v", rj.ID, rj.Wait, rj.Run, rj.Nodes, s-q, run, vn)
		}
		if (len(vn) == 1) != (rj.CH == 1) || rj.CH < 1 {
			t.Errorf("job %s: CH %d on %d vnodes", rj.ID, rj.CH, len(vn))
		}
		if first == 0 || q < first {
			first = q
		}
		last = max(last, e)
		sumWait += float64(s - q)
		nodeSec += int64(len(vn)) * run
	}
	s := rep.Summary
	if s.Jobs != 10 || s.Ran != 10 || s.Failed != 0 || s.NotRun != 0 || s.Unfinished != 0 || s.RanTwice != 0 ||
		s.Makespan != last-first || s.NodeSeconds != nodeSec || math.Abs(s.MeanWait-sumWait/10) > 1e-9 {
		t.Errorf("summary %+v; from the server: makespan %d, node-seconds %d, mean wait %.2f", s, last-first, nodeSec, sumWait/10)
	}
}

// TestSchedReplaySigterm: a SIGTERM while jobs are submitted and running
// stops the replay, which deletes its own unfinished jobs (and only
// those) and exits 1.
func TestSchedReplaySigterm(t *testing.T) {
	need(t, cfgSched)
	reset(t)
	other := sleepJob(t, "other", 40, "select=1:ncpus=1")
	args := []string{"replay", "--server", "pbs", "--test-server", "--user", pbsUser, "--trace", kthLog,
		"--from", "4500", "--jobs", "10", "--speedup", "100", "--run-id", "it2", "-o", "json"}
	cmd := exec.Command(optschedBin, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	mine := regexp.MustCompile(`^ors-it2-\d+$`)
	waitUntil(t, 60*time.Second, "3 replay jobs submitted", func() (bool, string) {
		n := 0
		for _, j := range history(t) {
			if mine.MatchString(j.Name) {
				n++
			}
		}
		return n >= 3, fmt.Sprintf("%d submitted", n)
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 {
			t.Errorf("replay after SIGTERM: %v, want exit 1\n%s", err, stderr.String())
		}
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("replay still running 90 s after SIGTERM\n%s", stderr.String())
	}
	t.Logf("stderr:\n%s", indent(stderr.String()))
	var rep replayReport
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	hist := history(t)
	n := 0
	for id, j := range hist {
		if !mine.MatchString(j.Name) {
			continue
		}
		n++
		if j.State != "F" {
			t.Errorf("replay job %s is %s after the replay ended", id, j.State)
		}
	}
	if n < 3 || n >= 10 || len(rep.Jobs) != n || len(rep.Deleted) == 0 {
		t.Errorf("%d replay jobs on the server, %d in the report, %d deleted", n, len(rep.Jobs), len(rep.Deleted))
	}
	for _, id := range rep.Deleted {
		if !mine.MatchString(hist[id].Name) {
			t.Errorf("deleted %s (%s), not a job of the replay", id, hist[id].Name)
		}
	}
	if j := hist[other]; j.State != "R" && !(j.State == "F" && j.Exit != nil && *j.Exit == 0) {
		t.Errorf("the other job %s: %+v (touched by the replay?)", other, j)
	}
}
