//go:build slurmitest

package itest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/optsched/optsched/model/hostlist"
)

var (
	skipReason  string
	optschedBin string
	// slurmUser owns the jobs (slurm-up.sh's SLURMNS_USER).
	slurmUser = "slurmuser"
	// allNodes are slurm-up.sh's default nodes.
	allNodes = "n[01-16]"
)

func TestMain(m *testing.M) {
	skipReason = probe()
	os.Exit(m.Run())
}

func probe() string {
	const how = "run make itest (slurmsched/itest/run.sh)"
	optschedBin = os.Getenv("OPTSCHED_BIN")
	if optschedBin == "" {
		return "needs OPTSCHED_BIN, the optsched binary under test (" + how + ")"
	}
	if _, err := exec.LookPath("scontrol"); err != nil {
		return "needs Slurm's commands on PATH and a cluster started by shared/slurm/slurm-up.sh (" + how + ")"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "scontrol", "ping").CombinedOutput(); err != nil || !strings.Contains(string(out), "UP") {
		return fmt.Sprintf("no slurmctld answers scontrol ping (%v: %s): run inside shared/slurm/slurm-up.sh (%s)", err, strings.TrimSpace(string(out)), how)
	}
	if u := os.Getenv("SLURMNS_USER"); u != "" {
		slurmUser = u
	}
	return ""
}

func need(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

// sh runs a command as root and returns its combined output and error.
func sh(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	return string(out), err
}

// must runs a command as root and fails the test when it fails.
func must(t *testing.T, args ...string) string {
	t.Helper()
	out, err := sh(args...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// asUser runs a shell command line as the job owner in /tmp.
func asUser(line string) (string, error) {
	return sh("su", "-s", "/bin/sh", slurmUser, "-c", "cd /tmp && "+line)
}

// submit submits a batch job as the owner and returns its id.
func submit(t *testing.T, args string) string {
	t.Helper()
	out, err := asUser("sbatch --parsable -o /dev/null " + args)
	if err != nil {
		t.Fatalf("sbatch %s: %v\n%s", args, err, out)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	return id
}

// A sjob is what the tests read of squeue --json, with their own
// decoding (not optsched's).
type sjob struct {
	ID         int64   `json:"job_id"`
	Name       string  `json:"name"`
	User       string  `json:"user_name"`
	Submit     int64   `json:"submit_time"`
	ExitCode   int64   `json:"exit_code"`
	NodeCount  int64   `json:"node_count"`
	TimeLimit  *int64  `json:"time_limit"`
	ArrayJobID int64   `json:"array_job_id"`
	State      string  `json:"job_state"`
	Reason     string  `json:"state_reason"`
	Priority   int64   `json:"priority"`
	Nodes      string  `json:"nodes"`
	Required   string  `json:"required_nodes"`
	Shared     *string `json:"shared"`
	Start      int64   `json:"start_time"`
	End        int64   `json:"end_time"`
	Resources  struct {
		Nodes []struct {
			Name    string                     `json:"nodename"`
			Mem     int64                      `json:"memory_allocated"`
			Sockets map[string]json.RawMessage `json:"sockets"`
		} `json:"allocated_nodes"`
	} `json:"job_resources"`
}

func (j sjob) id() string { return fmt.Sprint(j.ID) }

// cores counts the allocated cores of one allocated_nodes entry.
func cores(sockets map[string]json.RawMessage) int64 {
	var n int64
	for _, raw := range sockets {
		var s struct {
			Cores map[string]string `json:"cores"`
		}
		if json.Unmarshal(raw, &s) == nil {
			n += int64(len(s.Cores))
		}
	}
	return n
}

func jobs(t *testing.T) map[string]sjob {
	t.Helper()
	var doc struct {
		Jobs []sjob `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(must(t, "squeue", "--json")), &doc); err != nil {
		t.Fatalf("squeue --json: %v", err)
	}
	out := map[string]sjob{}
	for _, j := range doc.Jobs {
		out[j.id()] = j
	}
	return out
}

type snode struct {
	Name     string   `json:"name"`
	State    string   `json:"state"`
	Flags    []string `json:"state_flags"`
	CPUs     int64    `json:"cpus"`
	Alloc    int64    `json:"alloc_cpus"`
	Mem      int64    `json:"real_memory"`
	AllocMem int64    `json:"alloc_memory"`
}

func nodes(t *testing.T) []snode {
	t.Helper()
	var doc struct {
		Nodes []snode `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(must(t, "sinfo", "--json")), &doc); err != nil {
		t.Fatalf("sinfo --json: %v", err)
	}
	return doc.Nodes
}

func terminal(state string) bool {
	switch state {
	case "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "PREEMPTED":
		return true
	}
	return false
}

// reset cancels every job, waits until none is active, and resumes every
// node.
func reset(t *testing.T) {
	t.Helper()
	sh("scancel", "--user", slurmUser)
	deadline := time.Now().Add(60 * time.Second)
	for {
		active := 0
		for _, j := range jobs(t) {
			if !terminal(j.State) {
				active++
			}
		}
		if active == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reset: %d jobs still active after a minute", active)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, n := range nodes(t) {
		if len(n.Flags) > 0 || n.State == "down" {
			sh("scontrol", "update", "NodeName="+n.Name, "State=RESUME")
		}
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		ok := true
		for _, n := range nodes(t) {
			if n.State != "idle" || len(n.Flags) > 0 {
				ok = false
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("reset: nodes not all idle after 30 s: %+v", nodes(t))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// optsched runs the binary under test and returns its stdout, stderr and
// exit code.
func optsched(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, optschedBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	rc := 0
	if ee, ok := err.(*exec.ExitError); ok {
		rc = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("optsched %v: %v", args, err)
	}
	return out.String(), errb.String(), rc
}

// stateFiles gives a test its own lock and audit log.
func stateFiles(t *testing.T) (lock, log string) {
	dir := t.TempDir()
	return filepath.Join(dir, "slurm.lock"), filepath.Join(dir, "audit.jsonl")
}

// cycleUntil runs optsched slurm plan --apply every second until ids
// (given Slurm's records after the cycle) lists only jobs that have
// ended, and at least want of them; it returns those ids and the records.
func cycleUntil(t *testing.T, what string, want int, ids func(map[string]sjob) []string, timeout time.Duration, extra ...string) ([]string, map[string]sjob) {
	t.Helper()
	lock, log := stateFiles(t)
	deadline := time.Now().Add(timeout)
	for {
		args := append([]string{"slurm", "plan", "--apply", "--lock", lock, "--log", log}, extra...)
		if out, errs, rc := optsched(t, args...); rc != 0 {
			t.Fatalf("optsched slurm plan --apply: exit %d\n%s%s", rc, out, errs)
		}
		js := jobs(t)
		got := ids(js)
		done := len(got) >= want
		for _, id := range got {
			done = done && terminal(js[id].State)
		}
		if done {
			return got, js
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not done after %v: %+v", what, timeout, pick(js, got))
		}
		time.Sleep(time.Second)
	}
}

// cycleUntilDone runs the cycles until every job of ids has ended, and
// returns Slurm's records of them.
func cycleUntilDone(t *testing.T, ids []string, timeout time.Duration, extra ...string) map[string]sjob {
	t.Helper()
	_, js := cycleUntil(t, "jobs", len(ids), func(map[string]sjob) []string { return ids }, timeout, extra...)
	return js
}

// cycleUntilArrayDone runs the cycles until the n tasks of job array arr
// have all ended, and returns their ids and Slurm's records.
func cycleUntilArrayDone(t *testing.T, arr string, n int, timeout time.Duration, extra ...string) ([]string, map[string]sjob) {
	t.Helper()
	return cycleUntil(t, "array "+arr, n, func(js map[string]sjob) []string {
		var tasks []string
		for id, j := range js {
			if fmt.Sprint(j.ArrayJobID) == arr {
				tasks = append(tasks, id)
			}
		}
		return tasks
	}, timeout, extra...)
}

func pick(js map[string]sjob, ids []string) []sjob {
	var out []sjob
	for _, id := range ids {
		out = append(out, js[id])
	}
	return out
}

// checkRecords checks Slurm's records of the jobs: each COMPLETED, none
// on a node of avoid, no node over its CPUs (4) or memory (8000 MB) at
// any job's start, and no job beside an exclusive one.
func checkRecords(t *testing.T, js map[string]sjob, ids []string, avoid []string) {
	t.Helper()
	type span struct {
		id         string
		start, end int64
		cpus, mem  int64
		excl       bool
	}
	on := map[string][]span{}
	for _, id := range ids {
		j := js[id]
		if j.State != "COMPLETED" {
			t.Errorf("job %s ended %s (%s), want COMPLETED", id, j.State, j.Reason)
			continue
		}
		names, err := hostlist.Expand(j.Nodes)
		if err != nil || len(names) == 0 {
			t.Errorf("job %s: nodes %q: %v", id, j.Nodes, err)
			continue
		}
		for _, n := range names {
			if slices.Contains(avoid, n) {
				t.Errorf("job %s ran on %s, which was drained or down", id, n)
			}
		}
		if len(j.Resources.Nodes) != len(names) {
			t.Errorf("job %s: Slurm records allocations on %d nodes, ran on %d", id, len(j.Resources.Nodes), len(names))
		}
		for _, a := range j.Resources.Nodes {
			if cores(a.Sockets) == 0 || a.Mem == 0 {
				t.Errorf("job %s on %s: no cores or memory in Slurm's record (%d, %d MB)", id, a.Name, cores(a.Sockets), a.Mem)
			}
			on[a.Name] = append(on[a.Name], span{id, j.Start, j.End, cores(a.Sockets), a.Mem, j.Shared != nil && *j.Shared == "none"})
		}
	}
	for node, spans := range on {
		for _, s := range spans {
			var cpus, mem int64
			for _, o := range spans {
				if o.start <= s.start && s.start < o.end {
					cpus += o.cpus
					mem += o.mem
					if o.id != s.id && (o.excl || s.excl) {
						t.Errorf("node %s: job %s and exclusive job %s ran at once", node, o.id, s.id)
					}
				}
			}
			if cpus > 4 || mem > 8000 {
				t.Errorf("node %s at job %s's start: %d CPUs, %d MB allocated (of 4, 8000)", node, s.id, cpus, mem)
			}
		}
	}
}

// leaf is the leaf switch of a node of slurm-up.sh's topology (4 nodes
// a leaf).
func leaf(name string) int {
	var i int
	fmt.Sscanf(name, "n%d", &i)
	return (i - 1) / 4
}

// audit reads the audit log's lines.
func audit(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit log line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// released lists, per job, how many audit entries say it was released,
// and the jobs the entries dropped.
func released(entries []map[string]any) (map[string]int, map[string]bool) {
	rel, dropped := map[string]int{}, map[string]bool{}
	for _, e := range entries {
		p, _ := e["plan"].(map[string]any)
		starts, _ := p["starts"].([]any)
		for _, s := range starts {
			m, _ := s.(map[string]any)
			if m["status"] == "released" {
				rel[fmt.Sprint(m["job"])]++
			}
		}
		drops, _ := p["dropped"].([]any)
		for _, d := range drops {
			m, _ := d.(map[string]any)
			dropped[fmt.Sprint(m["job"])] = true
		}
	}
	return rel, dropped
}

func signal(t *testing.T, cmd *exec.Cmd, s syscall.Signal) {
	t.Helper()
	if err := cmd.Process.Signal(s); err != nil {
		t.Fatal(err)
	}
}
