//go:build pbsitest

package itest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The server configurations; make itest starts pbs-up.sh once for each
// and sets OPTSCHED_ITEST_CONFIG to its name.
const (
	// cfgDefault is pbs-up.sh's default complex: one multi-vnode mom
	// with child vnodes pbshost[0]..pbshost[7] (ncpus=4, mem=8gb, tier0 =
	// t0_<i/2>, tier1 = t1_<i/4>) and the natural vnode pbshost (ncpus=0,
	// no tier0/tier1).
	cfgDefault = "default"
	// cfgHosts is testdata/hosts.vnodedef (PBSNS_VNODEDEF): vnodes cn00..cn07
	// without brackets on two hosts (resources_available.host hosta,
	// hostb), plus testdata/hosts.qmgr (PBSNS_QMGR): a routing queue
	// routeq, a routing queue parkq that is not started, and a stopped
	// execution queue stopq.
	cfgHosts = "hosts"
)

// pollEvery is how often the waits ask the server.
const pollEvery = 250 * time.Millisecond

var (
	// skipReason, when set, is why every test skips (no server here).
	skipReason string
	// fatalReason, when set, is why every test fails (the suite was
	// started against a server but cannot run optsched).
	fatalReason string
	// config is OPTSCHED_ITEST_CONFIG.
	config string
	// optschedBin is OPTSCHED_BIN, the optsched binary under test.
	optschedBin string
	// pbsUser owns the jobs (pbs-up.sh's PBSNS_USER).
	pbsUser = "pbsuser"
)

func TestMain(m *testing.M) {
	skipReason, fatalReason = probe()
	os.Exit(m.Run())
}

// probe finds out whether a server is there to test against.
func probe() (skip, fatal string) {
	const how = "run make itest, or see docs/pbs-itest.md"
	if _, err := os.Stat("/opt/pbs/sbin/pbs_server.bin"); err != nil {
		return "needs OpenPBS installed in /opt/pbs (shared/pbs/build-openpbs.sh builds it; " + how + ")", ""
	}
	config = os.Getenv("OPTSCHED_ITEST_CONFIG")
	if config == "" {
		return "needs OPTSCHED_ITEST_CONFIG (" + cfgDefault + ", " + cfgHosts + " or " + cfgSched + ") and a server started by shared/pbs/pbs-up.sh (" + how + ")", ""
	}
	if _, err := exec.LookPath("qstat"); err != nil {
		return "needs qstat, pbsnodes and qrun on PATH and a server: run inside shared/pbs/pbs-up.sh (" + how + ")", ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "qstat", "-B").CombinedOutput(); err != nil {
		return fmt.Sprintf("no PBS server answers qstat -B (%v: %s): run inside shared/pbs/pbs-up.sh (%s)", err, strings.TrimSpace(string(out)), how), ""
	}
	if u := os.Getenv("PBSNS_USER"); u != "" {
		pbsUser = u
	}
	optschedBin = os.Getenv("OPTSCHED_BIN")
	if optschedBin == "" {
		return "", "needs OPTSCHED_BIN, the optsched binary to test (make itest builds bin/optsched)"
	}
	if fi, err := os.Stat(optschedBin); err != nil || fi.IsDir() {
		return "", fmt.Sprintf("OPTSCHED_BIN=%s is not a file", optschedBin)
	}
	return "", ""
}

// need skips the test unless the server of configuration cfg is here.
func need(t *testing.T, cfg string) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	if config != cfg {
		t.Skipf("runs in server configuration %q; this run is %q (OPTSCHED_ITEST_CONFIG)", cfg, config)
	}
	if fatalReason != "" {
		t.Fatal(fatalReason)
	}
}

// ---------------------------------------------------------------------------
// commands

// result is what a command did.
type result struct {
	code           int // exit code; -1 when it did not exit normally
	stdout, stderr string
	err            error // start failure or timeout
}

func (r result) String() string {
	s := fmt.Sprintf("exit %d", r.code)
	if r.err != nil {
		s += fmt.Sprintf(" (%v)", r.err)
	}
	if e := strings.TrimSpace(r.stderr); e != "" {
		s += ": " + e
	}
	return s
}

// runCmd runs a command to its end (at most timeout).
func runCmd(timeout time.Duration, name string, args ...string) result {
	return runCmdEnv(timeout, nil, name, args...)
}

// runCmdEnv is runCmd with extra environment variables (NAME=value).
func runCmdEnv(timeout time.Duration, env []string, name string, args ...string) result {
	return runCmdFull("", timeout, env, name, args...)
}

// runCmdIn is runCmd in folder dir.
func runCmdIn(dir string, timeout time.Duration, name string, args ...string) result {
	return runCmdFull(dir, timeout, nil, name, args...)
}

func runCmdFull(dir string, timeout time.Duration, env []string, name string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	r := result{code: 0, stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
		if ctx.Err() != nil {
			r.err = fmt.Errorf("timed out after %v", timeout)
		}
	default:
		r.code, r.err = -1, err
	}
	return r
}

// pbsRun runs a PBS command and fails the test unless it exits 0.
func pbsRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	r := runCmd(60*time.Second, name, args...)
	if r.code != 0 || r.err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), r)
	}
	return r.stdout
}

// qmgr runs one qmgr command.
func qmgr(t *testing.T, command string) {
	t.Helper()
	pbsRun(t, "qmgr", "-c", command)
}

// shellQuote quotes words for sh.
func shellQuote(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=:./,+@") == "" {
			q[i] = w
		} else {
			q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// qsub submits a job as the job owner (su - PBSNS_USER -c 'qsub ...')
// and returns its id. args are qsub's arguments, e.g.
// "-l", "select=1:ncpus=1", "--", "/bin/sleep", "3". Output goes to
// /dev/null; a walltime of 5 minutes is added unless args give one.
func qsub(t *testing.T, args ...string) string {
	t.Helper()
	all := []string{"-j", "oe", "-o", "/dev/null"}
	if !slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "walltime=") }) {
		all = append(all, "-l", "walltime=00:05:00")
	}
	all = append(all, args...)
	r := runCmd(60*time.Second, "su", "-", pbsUser, "-c", "cd && /opt/pbs/bin/qsub "+shellQuote(all))
	if r.code != 0 || r.err != nil {
		t.Fatalf("qsub %s: %v", strings.Join(args, " "), r)
	}
	id := strings.TrimSpace(r.stdout)
	if id == "" {
		t.Fatalf("qsub %s printed no job id", strings.Join(args, " "))
	}
	return id
}

// sleepJob submits a job that sleeps secs seconds, with resources res
// (qsub -l arguments, e.g. "select=1:ncpus=1", "place=excl").
func sleepJob(t *testing.T, name string, secs int, res ...string) string {
	t.Helper()
	return sleepJobQ(t, "", name, secs, res...)
}

// sleepJobs submits n sleep jobs named PREFIX0 … with the same run time
// and resources, and returns their ids in order.
func sleepJobs(t *testing.T, prefix string, n, secs int, res ...string) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = sleepJob(t, fmt.Sprintf("%s%d", prefix, i), secs, res...)
	}
	return ids
}

// sleepJobQ is sleepJob into queue q ("" = the default queue).
func sleepJobQ(t *testing.T, q, name string, secs int, res ...string) string {
	t.Helper()
	args := []string{"-N", name}
	if q != "" {
		args = append(args, "-q", q)
	}
	for _, r := range res {
		args = append(args, "-l", r)
	}
	args = append(args, "--", "/bin/sleep", strconv.Itoa(secs))
	return qsub(t, args...)
}

// ---------------------------------------------------------------------------
// what the server reports, parsed here (independently of optsched's parsers)

// job is one job of qstat -fx -t -F json.
type job struct {
	ID         string
	Name       string `json:"Job_Name"`
	State      string `json:"job_state"`
	Queue      string `json:"queue"`
	ExecVnode  string `json:"exec_vnode"`
	ExitStatus *int   `json:"Exit_status"`
	Comment    string `json:"comment"`
}

// vnodesOf lists the vnode of every chunk of an exec_vnode such as
// "(pbshost[0]:ncpus=2)+(pbshost[1]:ncpus=2)" (or "(a:ncpus=1+b:ncpus=1)").
func vnodesOf(execVnode string) []string {
	var out []string
	s := strings.NewReplacer("(", "", ")", "").Replace(execVnode)
	for _, part := range strings.Split(s, "+") {
		if name, _, _ := strings.Cut(strings.TrimSpace(part), ":"); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// ran reports whether the server gave the job vnodes (it runs or ran).
func (j job) ran() bool { return j.ExecVnode != "" }

// finishedOK reports whether the job ended with exit status 0.
func (j job) finishedOK() bool {
	return j.State == "F" && j.ExitStatus != nil && *j.ExitStatus == 0
}

func (j job) String() string {
	s := fmt.Sprintf("%s (%s) state %s queue %s", j.ID, j.Name, j.State, j.Queue)
	if j.ExecVnode != "" {
		s += " exec_vnode " + j.ExecVnode
	}
	if j.ExitStatus != nil {
		s += fmt.Sprintf(" Exit_status %d", *j.ExitStatus)
	}
	if j.Comment != "" {
		s += fmt.Sprintf(" comment %q", j.Comment)
	}
	return s
}

// jobs returns every job the server knows, finished ones and array
// subjobs included (qstat -fx -t -F json).
func jobs(t *testing.T) map[string]job {
	t.Helper()
	var doc struct {
		Jobs map[string]json.RawMessage `json:"Jobs"`
	}
	out := pbsRun(t, "qstat", "-fx", "-t", "-F", "json")
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("qstat -fx -t -F json: %v", err)
	}
	m := make(map[string]job, len(doc.Jobs))
	for id, raw := range doc.Jobs {
		var j job
		if err := json.Unmarshal(raw, &j); err != nil {
			t.Fatalf("qstat -fx -t -F json: job %s: %v", id, err)
		}
		j.ID = id
		m[id] = j
	}
	return m
}

// getJob returns one job (fails the test when the server does not know it).
func getJob(t *testing.T, id string) job {
	t.Helper()
	j, ok := jobs(t)[id]
	if !ok {
		t.Fatalf("qstat -fx does not list job %s", id)
	}
	return j
}

// vnode is one vnode of pbsnodes -av -F json.
type vnode struct {
	Name     string
	State    string         `json:"state"`
	Jobs     []string       `json:"jobs"`
	Sharing  string         `json:"sharing"`
	Avail    map[string]any `json:"resources_available"`
	Assigned map[string]any `json:"resources_assigned"`
}

// jobIDs lists the jobs on the vnode (pbsnodes may list "1.host/0").
func (v vnode) jobIDs() []string {
	seen := map[string]bool{}
	var out []string
	for _, j := range v.Jobs {
		j, _, _ = strings.Cut(j, "/")
		if j = strings.TrimSpace(j); j != "" && !seen[j] {
			seen[j] = true
			out = append(out, j)
		}
	}
	sort.Strings(out)
	return out
}

// text returns a string resource of resources_available.
func (v vnode) text(res string) string {
	if x, ok := v.Avail[res]; ok {
		return fmt.Sprint(x)
	}
	return ""
}

// vnodes returns pbsnodes -av -F json by vnode name.
func vnodes(t *testing.T) map[string]vnode {
	t.Helper()
	vs, err := readVnodes()
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// readVnodes is vnodes without a test (for the pollers).
func readVnodes() (map[string]vnode, error) {
	r := runCmd(60*time.Second, "pbsnodes", "-av", "-F", "json")
	if r.code != 0 || r.err != nil {
		return nil, fmt.Errorf("pbsnodes -av -F json: %v", r)
	}
	var doc struct {
		Nodes map[string]vnode `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		return nil, fmt.Errorf("pbsnodes -av -F json: %v", err)
	}
	for name, v := range doc.Nodes {
		v.Name = name
		doc.Nodes[name] = v
	}
	return doc.Nodes, nil
}

// number reads a numeric resource value (PBS prints ncpus as a number).
func number(x any) (float64, error) {
	switch v := x.(type) {
	case nil:
		return 0, nil
	case float64:
		return v, nil
	case string:
		return strconv.ParseFloat(strings.TrimSpace(v), 64)
	}
	return 0, fmt.Errorf("%v is not a number", x)
}

var sizeRE = regexp.MustCompile(`^(\d+)\s*([kmgtp]?)(b|w)?$`)

// size reads a PBS size such as "8gb", "0b", "8388608kb" or 1024 (bytes).
func size(x any) (int64, error) {
	switch v := x.(type) {
	case nil:
		return 0, nil
	case float64:
		return int64(v), nil
	case string:
		m := sizeRE.FindStringSubmatch(strings.ToLower(strings.TrimSpace(v)))
		if m == nil {
			return 0, fmt.Errorf("%q is not a size", v)
		}
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return 0, err
		}
		shift := map[string]uint{"": 0, "k": 10, "m": 20, "g": 30, "t": 40, "p": 50}[m[2]]
		n <<= shift
		if m[3] == "w" {
			n *= 8
		}
		return n, nil
	}
	return 0, fmt.Errorf("%v is not a size", x)
}

// overcommitted lists every vnode whose resources_assigned exceeds its
// resources_available for ncpus or mem.
func overcommitted(vs map[string]vnode) []string {
	var bad []string
	for _, name := range sortedKeys(vs) {
		v := vs[name]
		a, err1 := number(v.Avail["ncpus"])
		u, err2 := number(v.Assigned["ncpus"])
		switch {
		case err1 != nil || err2 != nil:
			bad = append(bad, fmt.Sprintf("%s: ncpus unreadable: %v %v", name, err1, err2))
		case u > a:
			bad = append(bad, fmt.Sprintf("%s: ncpus assigned %v > available %v (jobs %v)", name, u, a, v.jobIDs()))
		}
		am, err1 := size(v.Avail["mem"])
		um, err2 := size(v.Assigned["mem"])
		switch {
		case err1 != nil || err2 != nil:
			bad = append(bad, fmt.Sprintf("%s: mem unreadable: %v %v", name, err1, err2))
		case um > am:
			bad = append(bad, fmt.Sprintf("%s: mem assigned %v > available %v (jobs %v)", name, v.Assigned["mem"], v.Avail["mem"], v.jobIDs()))
		}
	}
	return bad
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ---------------------------------------------------------------------------
// waiting and cleaning up

// waitUntil polls cond until it holds, failing the test after timeout
// with what and cond's last explanation.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s: %s", timeout, what, why)
		}
		time.Sleep(pollEvery)
	}
}

// waitJobs waits until every job satisfies ok.
func waitJobs(t *testing.T, timeout time.Duration, what string, ids []string, ok func(job) bool) map[string]job {
	t.Helper()
	var js map[string]job
	waitUntil(t, timeout, what, func() (bool, string) {
		js = jobs(t)
		for _, id := range ids {
			j, found := js[id]
			if !found {
				return false, "qstat does not list " + id
			}
			if !ok(j) {
				return false, j.String()
			}
		}
		return true, ""
	})
	return js
}

// waitFinished waits until the jobs ended with Exit_status 0.
func waitFinished(t *testing.T, timeout time.Duration, ids ...string) map[string]job {
	t.Helper()
	return waitJobs(t, timeout, "jobs should finish with Exit_status 0", ids, func(j job) bool {
		return j.State == "F" && j.ExitStatus != nil
	})
}

// reset brings the server back to a blank state for the next test: every
// unfinished job deleted, every vnode online, free and without jobs.
func reset(t *testing.T) {
	t.Helper()
	var live []string
	for id, j := range jobs(t) {
		if strings.Contains(id, "[") && !strings.Contains(id, "[]") {
			continue // a subjob: deleting its array deletes it
		}
		if j.State != "F" && j.State != "X" {
			live = append(live, id)
		}
	}
	if len(live) > 0 {
		sort.Strings(live)
		runCmd(60*time.Second, "qdel", append([]string{"-W", "force"}, live...)...)
	}
	for name, v := range vnodes(t) {
		if strings.Contains(v.State, "offline") {
			setOnline(t, name)
		}
	}
	waitUntil(t, 60*time.Second, "reset: every job finished and every vnode free", func() (bool, string) {
		for id, j := range jobs(t) {
			if j.State != "F" && j.State != "X" {
				return false, "job " + id + " is " + j.State
			}
		}
		vs, err := readVnodes()
		if err != nil {
			return false, err.Error()
		}
		for name, v := range vs {
			n, _ := number(v.Assigned["ncpus"])
			if v.State != "free" || len(v.jobIDs()) > 0 || n != 0 {
				return false, fmt.Sprintf("vnode %s is %s with jobs %v, ncpus assigned %v", name, v.State, v.jobIDs(), n)
			}
		}
		return true, ""
	})
}

// ---------------------------------------------------------------------------
// optsched

// optsched runs the binary under test with a lock and an audit log of
// the test's own.
type optsched struct {
	t         *testing.T
	dir       string
	lock, log string
}

func newOptsched(t *testing.T) *optsched {
	dir := t.TempDir()
	return &optsched{t: t, dir: dir, lock: filepath.Join(dir, "pbs.lock"), log: filepath.Join(dir, "audit.jsonl")}
}

// args are optsched's arguments, with --lock and --log added.
func (o *optsched) args(args ...string) []string {
	return append(slices.Clone(args), "--lock", o.lock, "--log", o.log)
}

// run runs optsched to its end; its output goes to the test log only
// (the tests judge by what the server reports).
func (o *optsched) run(args ...string) result {
	o.t.Helper()
	a := o.args(args...)
	start := time.Now()
	r := runCmd(3*time.Minute, optschedBin, a...)
	o.t.Logf("$ optsched %s  -> exit %d in %v\n%s%s", shellQuote(a), r.code, time.Since(start).Round(time.Millisecond), indent(r.stdout), indent(r.stderr))
	if r.err != nil {
		o.t.Fatalf("optsched %s: %v", shellQuote(a), r.err)
	}
	return r
}

// start starts optsched in the background (for run loops); wait ends it.
func (o *optsched) start(args ...string) *background {
	o.t.Helper()
	a := o.args(args...)
	cmd := exec.Command(optschedBin, a...)
	b := &background{t: o.t, cmd: cmd, args: a, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &b.stdout, &b.stderr
	if err := cmd.Start(); err != nil {
		o.t.Fatalf("optsched %s: %v", shellQuote(a), err)
	}
	go func() { b.err = cmd.Wait(); close(b.done) }()
	o.t.Cleanup(func() {
		select {
		case <-b.done:
		default:
			_ = cmd.Process.Kill()
			<-b.done
		}
	})
	return b
}

// background is an optsched process started by start.
type background struct {
	t              *testing.T
	cmd            *exec.Cmd
	args           []string
	stdout, stderr bytes.Buffer // read only after done
	err            error
	done           chan struct{}
}

// wait waits (at most timeout) for the process to end and returns its
// exit code (-1 on a signal).
func (b *background) wait(timeout time.Duration) int {
	b.t.Helper()
	select {
	case <-b.done:
	case <-time.After(timeout):
		_ = b.cmd.Process.Kill()
		<-b.done
		b.t.Fatalf("optsched %s did not end within %v", shellQuote(b.args), timeout)
	}
	code := b.cmd.ProcessState.ExitCode()
	b.t.Logf("$ optsched %s  -> exit %d\n%s%s", shellQuote(b.args), code, indent(b.stdout.String()), indent(b.stderr.String()))
	return code
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ") + "\n"
}

// auditEntry is the part of an audit-log line the tests check (the log
// is optsched's documented record of what it did).
type auditEntry struct {
	Command string `json:"command"`
	Apply   bool   `json:"apply"`
	Error   string `json:"error"`
	Plan    *struct {
		Nodes struct {
			Owned   int `json:"owned"`
			Ignored int `json:"ignored"`
		} `json:"nodes"`
		Starts []struct {
			Job       string `json:"job"`
			Path      string `json:"path"` // whole-node or partial-node
			ExecVnode string `json:"exec_vnode"`
			ExitCode  *int   `json:"exit_code"`
		} `json:"starts"`
		Deferred    []auditReason `json:"deferred"`
		Skipped     []auditReason `json:"skipped"`
		Selection   string        `json:"selection"`
		Reservation *struct {
			Job    string `json:"job"`
			Start  int64  `json:"start"`
			Vnodes int    `json:"vnodes"`
			Extra  int    `json:"extra"`
		} `json:"reservation"`
	} `json:"plan"`
}

// auditReason is a deferred or skipped job of a logged plan.
type auditReason struct {
	Job    string `json:"job"`
	Reason string `json:"reason"`
}

// listed reports whether job is in the reasons.
func listed(rs []auditReason, job string) bool {
	return slices.ContainsFunc(rs, func(r auditReason) bool { return r.Job == job })
}

// onePlan returns the audit log's one cycle, and fails the test unless
// there is exactly one and it has a plan.
func (o *optsched) onePlan() auditEntry {
	o.t.Helper()
	entries := o.audit()
	if len(entries) != 1 || entries[0].Plan == nil {
		o.t.Fatalf("audit log: %d lines, want 1 with a plan", len(entries))
	}
	return entries[0]
}

// audit reads the audit log (every line must be one JSON object).
func (o *optsched) audit() []auditEntry {
	o.t.Helper()
	f, err := os.Open(o.log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		o.t.Fatal(err)
	}
	defer f.Close()
	var out []auditEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		var e auditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			o.t.Fatalf("audit log %s line %d is not a JSON object: %v", o.log, n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		o.t.Fatal(err)
	}
	return out
}

// ---------------------------------------------------------------------------
// assertions shared by the tests

// checkNoOvercommit fails the test when a vnode is overcommitted now.
func checkNoOvercommit(t *testing.T) {
	t.Helper()
	if bad := overcommitted(vnodes(t)); len(bad) > 0 {
		t.Errorf("vnodes overcommitted: %s", strings.Join(bad, "; "))
	}
}

// ranOn returns the set of vnodes the job was given.
func ranOn(j job) map[string]bool {
	m := map[string]bool{}
	for _, v := range vnodesOf(j.ExecVnode) {
		m[v] = true
	}
	return m
}

// capture writes what qstat -f -t -F json and pbsnodes -av -F json print
// now into files of dir (for --qstat FILE --pbsnodes FILE), as optsched
// reads them from the server.
func capture(t *testing.T, dir string) (qstatFile, nodesFile string) {
	t.Helper()
	qstatFile, nodesFile = filepath.Join(dir, "qstat.json"), filepath.Join(dir, "pbsnodes.json")
	if err := os.WriteFile(qstatFile, []byte(pbsRun(t, "qstat", "-f", "-t", "-F", "json")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(nodesFile, []byte(pbsRun(t, "pbsnodes", "-av", "-F", "json")), 0o644); err != nil {
		t.Fatal(err)
	}
	return qstatFile, nodesFile
}

// setOffline marks a vnode offline. pbsnodes -o answers "Unknown node"
// for a vnode name with brackets (pbshost[3]) on OpenPBS 23.06, and
// pbsnodes -o pbshost offlines every vnode of the mom; qmgr takes any
// vnode name.
func setOffline(t *testing.T, v string) {
	t.Helper()
	qmgr(t, "set node "+v+" state = offline")
}

// setOnline clears a vnode's offline state (pbsnodes -r has the same
// trouble with brackets as -o).
func setOnline(t *testing.T, v string) {
	t.Helper()
	qmgr(t, "set node "+v+" state -= offline")
}
