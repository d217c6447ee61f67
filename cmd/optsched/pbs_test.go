package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/optsched/optsched/model/pbs"
	"github.com/optsched/optsched/pbsched"
	"github.com/optsched/optsched/pbsched/cycle"
	"github.com/optsched/optsched/pbsched/pbstest"
)

// pbsTestdata holds the PBS 2022-shaped fixtures: 16 vnodes in every
// state, jobs with select strings, walltimes, an execution, a routing and
// a stopped queue, running, held and array jobs.
const pbsTestdata = "../../model/pbs/testdata"

func fixture(name string) string { return filepath.Join(pbsTestdata, name) }

// fixtureArgs are the plan flags reading the fixtures.
func fixtureArgs(extra ...string) []string {
	return append([]string{"pbs", "plan", "--qstat", fixture("qstat.json"), "--pbsnodes", fixture("pbsnodes.json"),
		"--queues", fixture("queues.json"), "--timezone", "UTC"}, extra...)
}

// qrunLine matches one command of a plan script: the job id after "--",
// so that no id is read as an option of qrun.
var qrunLine = regexp.MustCompile(`^(\S+) -H "([^"]+)" -- (\S+) \|\| rc=1$`)

// scriptCommands returns job -> exec_vnode of a plan script's qrun lines.
func scriptCommands(t *testing.T, script string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(script, "\n") {
		if strings.HasPrefix(line, "#") || !strings.Contains(line, " -H ") {
			continue
		}
		m := qrunLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unexpected command line %q", line)
		}
		if _, dup := out[m[3]]; dup {
			t.Fatalf("job %s started twice", m[3])
		}
		out[m[3]] = m[2]
	}
	return out
}

// fixtureNodeStates maps vnode -> state text, from the fixture itself.
func fixtureNodeStates(t *testing.T) map[string]string {
	data, err := os.ReadFile(fixture("pbsnodes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Nodes map[string]struct {
			State string   `json:"state"`
			Jobs  []string `json:"jobs"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for n, v := range doc.Nodes {
		out[n] = v.State
		if len(v.Jobs) > 0 {
			out[n] += "+jobs"
		}
	}
	return out
}

func TestPBSPlanFixtureScript(t *testing.T) {
	code, out, errs := optsched(t, "", fixtureArgs("--partial", "first-fit")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	cmds := scriptCommands(t, out)
	// The four jobs that fit: two whole-node (window solve), two partial.
	if got := slices.Sorted(mapKeysOf(cmds)); !slices.Equal(got, []string{"101.pbs01", "102.pbs01", "103.pbs01", "106.pbs01"}) {
		t.Fatalf("jobs started %v\n%s", got, out)
	}
	states := fixtureNodeStates(t)
	for job, spec := range cmds {
		chunks, err := pbs.ParseExecVnode(spec)
		if err != nil {
			t.Fatalf("job %s: %q: %v", job, spec, err)
		}
		for _, v := range pbs.Vnodes(chunks) {
			if s := states[v]; s != "free" && s != "free+jobs" {
				t.Errorf("job %s named vnode %s, which is %s", job, v, s)
			}
		}
	}
	// 103 and 106 share vnodes; 106 needs GPUs, which only n009-n012 have
	// (n009 and n010 free); 103 goes to the partly used n005 first.
	if cmds["103.pbs01"] != "(n005:mem=16gb:ncpus=8)" {
		t.Errorf("103 placed %s", cmds["103.pbs01"])
	}
	if c := cmds["106.pbs01"]; c != "(n009:mem=64gb:ncpus=16:ngpus=2)+(n009:mem=64gb:ncpus=16:ngpus=2)" {
		t.Errorf("106 placed %s", c)
	}
	// Whole-node jobs get whole idle vnodes (no jobs on them).
	for _, job := range []string{"101.pbs01", "102.pbs01"} {
		chunks, _ := pbs.ParseExecVnode(cmds[job])
		for _, v := range pbs.Vnodes(chunks) {
			if states[v] != "free" || v == "n009" {
				t.Errorf("whole-node job %s on %s (%s)", job, v, states[v])
			}
		}
	}
	for _, want := range []string{
		"#   107.pbs01: needs 12 whole vnodes, 1 idle vnode left after higher-priority jobs",
		"#   111.pbs01: can never run on optsched's vnodes: chunk 1 (ncpus=8:ngpus=8) fits no vnode even when it is empty",
		"#   104.pbs01: queue prod is a routing queue, not an execution queue",
		"#   108[].pbs01: job array",
		"#   112.pbs01: queue debug is not started",
		"# 101.pbs01 (queue workq): whole-node, placed by csp (place=excl), 2 vnodes, CH cost 500",
		"# 103.pbs01 (queue workq): partial-node, placed by first-fit",
		"whole-node window: 2 jobs, optimal by csp",
		`exit "$rc"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("script lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "105.pbs01") {
		t.Error("the held job 105 is mentioned as if it were a candidate")
	}
}

func mapKeysOf[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func readAudit(t *testing.T, path string) []cycle.AuditEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []cycle.AuditEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e cycle.AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// TestPBSQrunAsync: --qrun-async runs qrun -a, and the plan records that
// command.
func TestPBSQrunAsync(t *testing.T) {
	_, calls := pbstest.FakePBS(t, fixture("qstat.json"), fixture("pbsnodes.json"), fixture("queues.json"))
	dir := t.TempDir()
	code, out, errs := optsched(t, "", "pbs", "plan", "--apply", "--qrun-async", "--timezone", "UTC",
		"--lock", filepath.Join(dir, "pbs.lock"), "--log", filepath.Join(dir, "a.jsonl"), "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc pbsched.PlanDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	runs := pbstest.QrunCalls(t, calls)
	if len(runs) != len(doc.Starts) || len(runs) == 0 {
		t.Fatalf("%d qrun calls for %d starts", len(runs), len(doc.Starts))
	}
	for i, s := range doc.Starts {
		if want := "qrun -a -H " + s.ExecVnode + " -- " + s.Job; runs[i] != want {
			t.Errorf("call %d: %q, want %q", i, runs[i], want)
		}
		if want := []string{"qrun", "-a", "-H", s.ExecVnode, "--", s.Job}; !slices.Equal(s.Command, want) {
			t.Errorf("start %s: command %q, want %q", s.Job, s.Command, want)
		}
	}
}

// TestPBSApplyFromPATH: without files, the state comes from qstat and
// pbsnodes on PATH; --apply runs qrun from PATH once per start with the
// planned vnode specification, and the cycle goes to the audit log.
func TestPBSApplyFromPATH(t *testing.T) {
	_, calls := pbstest.FakePBS(t, fixture("qstat.json"), fixture("pbsnodes.json"), fixture("queues.json"))
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.jsonl")
	code, out, errs := optsched(t, "", "pbs", "plan", "--apply", "--timezone", "UTC",
		"--lock", filepath.Join(dir, "pbs.lock"), "--log", log, "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got := pbstest.Calls(t, calls)
	// The three documents are read at once, in any order.
	if len(got) < 3 || !slices.Equal(slices.Sorted(slices.Values(got[:3])), []string{"pbsnodes -av -F json", "qstat -Q -f -F json", "qstat -f -t -F json"}) {
		t.Fatalf("calls %q", got)
	}
	var doc pbsched.PlanDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	runs := pbstest.QrunCalls(t, calls)
	if len(runs) != len(doc.Starts) || len(runs) != 4 {
		t.Fatalf("%d qrun calls for %d starts: %q", len(runs), len(doc.Starts), runs)
	}
	for i, s := range doc.Starts {
		if want := "qrun -H " + s.ExecVnode + " -- " + s.Job; runs[i] != want {
			t.Errorf("call %d: %q, want %q", i, runs[i], want)
		}
		if s.ExitCode == nil || *s.ExitCode != 0 {
			t.Errorf("start %s: exit code %v", s.Job, s.ExitCode)
		}
	}
	if doc.DryRun {
		t.Error("an applied plan says dry_run")
	}
	entries := readAudit(t, log)
	if len(entries) != 1 || !entries[0].Apply || entries[0].Error != "" || entries[0].Plan == nil ||
		entries[0].InputSHA256 != doc.InputSHA256 || len(entries[0].InputSHA256) != 64 || len(entries[0].Plan.Starts) != 4 {
		t.Errorf("audit %+v", entries)
	}
}

// TestPBSQrunFailureOthersStillRun: qrun fails for one job; the others of
// the cycle are still attempted, the failure is reported (exit 1, stderr,
// the audit log) and the script output shows the exit codes.
func TestPBSQrunFailureOthersStillRun(t *testing.T) {
	_, calls := pbstest.FakePBS(t, fixture("qstat.json"), fixture("pbsnodes.json"), fixture("queues.json"))
	t.Setenv("QRUN_FAIL", "102.pbs01")
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.jsonl")
	code, out, errs := optsched(t, "", "pbs", "plan", "--apply", "--timezone", "UTC", "--lock", filepath.Join(dir, "l"), "--log", log, "-o", "json")
	if code != exitError {
		t.Fatalf("exit %d, want %d: %s", code, exitError, errs)
	}
	if !strings.Contains(errs, "qrun failed for 1 of 4 jobs: 102.pbs01 (exit 2: qrun: Request invalid for state of job 102.pbs01)") {
		t.Errorf("stderr %q", errs)
	}
	runs := pbstest.QrunCalls(t, calls)
	if len(runs) != 4 {
		t.Fatalf("qrun calls %q: every start must be attempted", runs)
	}
	var doc pbsched.PlanDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, s := range doc.Starts {
		want := 0
		if s.Job == "102.pbs01" {
			want = 2
		}
		if s.ExitCode == nil || *s.ExitCode != want {
			t.Errorf("%s: exit code %v, want %d", s.Job, s.ExitCode, want)
		}
	}
	if len(doc.Failed) != 1 || doc.Failed[0].Job != "102.pbs01" {
		t.Errorf("failed %+v", doc.Failed)
	}
	e := readAudit(t, log)
	if len(e) != 1 || !strings.Contains(e[0].Error, "102.pbs01") || e[0].Plan == nil || len(e[0].Plan.Failed) != 1 {
		t.Errorf("audit %+v", e)
	}
}

// TestPBSLockKeepsCyclesApart: while one cycle holds the lock, another
// refuses to start (no qrun, non-zero exit, the refusal logged).
func TestPBSLockKeepsCyclesApart(t *testing.T) {
	_, calls := pbstest.FakePBS(t, fixture("qstat.json"), fixture("pbsnodes.json"), fixture("queues.json"))
	dir := t.TempDir()
	lockPath, log := filepath.Join(dir, "pbs.lock"), filepath.Join(dir, "audit.jsonl")
	held, err := cycle.TakeLock(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"pbs", "plan", "--apply"},
		{"pbs", "run", "--apply", "--once"},
	} {
		code, _, errs := optsched(t, "", append(args, "--timezone", "UTC", "--lock", lockPath, "--log", log)...)
		if code != exitError || !strings.Contains(errs, "another optsched pbs cycle is running") {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
	if c := pbstest.Calls(t, calls); len(c) != 0 {
		t.Errorf("a locked-out cycle called %q", c)
	}
	if e := readAudit(t, log); len(e) != 2 || !strings.Contains(e[0].Error, "another optsched pbs cycle") {
		t.Errorf("audit %+v", e)
	}
	if err := held.Unlock(); err != nil {
		t.Fatal(err)
	}
	code, _, errs := optsched(t, "", "pbs", "plan", "--apply", "--timezone", "UTC", "--lock", lockPath, "--log", log)
	if code != exitOK || len(pbstest.QrunCalls(t, calls)) != 4 {
		t.Errorf("after unlock: exit %d, %s, calls %q", code, errs, pbstest.Calls(t, calls))
	}
}

// TestPBSBadInputNoAction: unparseable input is an error naming the job or
// vnode and the attribute, exit 1, and no qrun.
func TestPBSBadInputNoAction(t *testing.T) {
	jobs, _ := os.ReadFile(fixture("qstat.json"))
	nodes, _ := os.ReadFile(fixture("pbsnodes.json"))
	queues, _ := os.ReadFile(fixture("queues.json"))
	cases := []struct {
		name               string
		file               string // "jobs", "nodes" or "queues"
		old, new           string
		want               []string
		jobsB, nodesB, qsB []byte
		wantExit           int
	}{
		{name: "walltime", file: "jobs", old: `"walltime":"04:00:00"`, new: `"walltime":"4 hours"`,
			want: []string{"job 102.pbs01", "Resource_List.walltime", `"4 hours" is not a duration`}},
		{name: "select", file: "jobs", old: `"select":"1:ncpus=8:mem=16gb"`, new: `"select":"1:ncpus=eight"`,
			want: []string{"job 103.pbs01", "Resource_List.select", "ncpus=eight"}},
		{name: "mem", file: "nodes", old: `"mem":"251gb"`, new: `"mem":"251 GB"`,
			want: []string{"node n003", "resources_available.mem", "unknown unit"}},
		{name: "state", file: "nodes", old: `"state":"offline"`, new: `"state":""`,
			want: []string{"node n007", "state", "empty state word"}},
		{name: "tier", file: "nodes", old: `"tier1":"x1000c1",
                "vnode":"n006"`, new: `"tier1":"x1001c1",
                "vnode":"n006"`,
			want: []string{"node n006", "resources_available.tier0", "do not nest"}},
		{name: "queue type", file: "queues", old: `"queue_type":"Route"`, new: `"queue_type":"Router"`,
			want: []string{"queue prod", "queue_type"}},
		{name: "not json", file: "nodes", old: `"nodes":{`, new: `"nodes":{{`,
			want: []string{"pbsnodes", "not valid JSON at line 5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j, n, q := string(jobs), string(nodes), string(queues)
			target := map[string]*string{"jobs": &j, "nodes": &n, "queues": &q}[c.file]
			if !strings.Contains(*target, c.old) {
				t.Fatalf("fixture lacks %q", c.old)
			}
			*target = strings.Replace(*target, c.old, c.new, 1)
			dir := t.TempDir()
			files := map[string]string{}
			for name, text := range map[string]string{"qstat.json": j, "pbsnodes.json": n, "queues.json": q} {
				p := filepath.Join(dir, name)
				os.WriteFile(p, []byte(text), 0o644)
				files[name] = p
			}
			_, calls := pbstest.FakePBS(t, files["qstat.json"], files["pbsnodes.json"], files["queues.json"])
			log := filepath.Join(dir, "audit.jsonl")
			code, out, errs := optsched(t, "", "pbs", "plan", "--apply", "--timezone", "UTC",
				"--lock", filepath.Join(dir, "l"), "--log", log)
			if code != exitError {
				t.Errorf("exit %d, want %d; stdout %q", code, exitError, out)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
			if r := pbstest.QrunCalls(t, calls); len(r) != 0 {
				t.Errorf("qrun called on bad input: %q", r)
			}
			if e := readAudit(t, log); len(e) != 1 || e[0].Error == "" || e[0].Plan != nil || len(e[0].InputSHA256) != 64 {
				t.Errorf("audit %+v", e)
			}
		})
	}
}

// TestPBSSnapshotFolder reads pbs_snapshot's files (the queue list in its
// plain-text form) and plans what the JSON files plan.
func TestPBSSnapshotFolder(t *testing.T) {
	dir := t.TempDir()
	for src, dst := range map[string]string{"qstat.json": "job/qstat_f_F_json.out", "pbsnodes.json": "node/pbsnodes_avFjson.out", "qstat_Qf.txt": "server/qstat_Qf.out"} {
		data, err := os.ReadFile(fixture(src))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dir, dst)), 0o755)
		os.WriteFile(filepath.Join(dir, dst), data, 0o644)
	}
	code, out, errs := optsched(t, "", "pbs", "plan", "--snapshot", dir, "--timezone", "UTC")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, want, _ := optsched(t, "", fixtureArgs()...)
	if got, w := scriptCommands(t, out), scriptCommands(t, want); !equalMaps(got, w) {
		t.Errorf("snapshot plan %v, file plan %v", got, w)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestPBSScopeFlags: --nodes keeps optsched off other vnodes, and
// --exec-queues replaces the queue list.
func TestPBSScopeFlags(t *testing.T) {
	code, out, errs := optsched(t, "", "pbs", "plan", "--qstat", fixture("qstat.json"), "--pbsnodes", fixture("pbsnodes.json"),
		"--exec-queues", "workq", "--nodes", "n[001-008]", "--timezone", "UTC")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for job, spec := range scriptCommands(t, out) {
		chunks, _ := pbs.ParseExecVnode(spec)
		for _, v := range pbs.Vnodes(chunks) {
			if v > "n008" {
				t.Errorf("job %s on %s, outside --nodes", job, v)
			}
		}
	}
	for _, want := range []string{"8 owned", "8 ignored", "104.pbs01: queue prod is not one optsched schedules (--exec-queues)", "112.pbs01: queue debug is not one"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	// Files without a queue list are a usage error.
	code, _, errs = optsched(t, "", "pbs", "plan", "--qstat", fixture("qstat.json"), "--pbsnodes", fixture("pbsnodes.json"))
	if code != exitUsage || !strings.Contains(errs, "--queues FILE") {
		t.Errorf("no queue list: exit %d, %q", code, errs)
	}
	// A bad --fallback is a usage error before anything is read (no
	// qstat on PATH here).
	t.Setenv("PATH", t.TempDir())
	code, _, errs = optsched(t, "", "pbs", "plan", "--fallback", "bogus")
	if code != exitUsage || !strings.Contains(errs, "--fallback must be one of sa, nsa, none") {
		t.Errorf("bad --fallback: exit %d, %q", code, errs)
	}
}

// TestPBSTopologyConf takes the switches from a Slurm-style topology.conf
// instead of vnode resources.
func TestPBSTopologyConf(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "topology.conf")
	os.WriteFile(conf, []byte("SwitchName=s0 Nodes=n[001-004]\nSwitchName=s1 Nodes=n[005-008]\nSwitchName=s2 Nodes=n[009-016]\nSwitchName=top Switches=s[0-2]\n"), 0o644)
	code, out, errs := optsched(t, "", fixtureArgs("--topology-conf", conf, "-o", "json")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc pbsched.PlanDoc
	json.Unmarshal([]byte(out), &doc)
	if !strings.HasPrefix(doc.Topology, "topology.conf: 4 switches, 2 levels") || len(doc.Starts) != 4 {
		t.Errorf("topology %q, %d starts", doc.Topology, len(doc.Starts))
	}
}

// TestPBSRunDaemon runs two cycles a second apart and logs both; --once
// returns the cycle's failure.
func TestPBSRunDaemon(t *testing.T) {
	_, calls := pbstest.FakePBS(t, fixture("qstat.json"), fixture("pbsnodes.json"), fixture("queues.json"))
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.jsonl")
	code, out, errs := optsched(t, "", "pbs", "run", "--interval", "1s", "--cycles", "2", "--timezone", "UTC",
		"--lock", filepath.Join(dir, "l"), "--log", log)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "would start 4 jobs, 2 deferred, 3 skipped") {
		t.Errorf("summaries %q", lines)
	}
	if e := readAudit(t, log); len(e) != 2 || e[0].Apply || e[1].Plan == nil {
		t.Errorf("audit %+v", e)
	}
	if r := pbstest.QrunCalls(t, calls); len(r) != 0 {
		t.Errorf("a dry run called qrun: %q", r)
	}
	t.Setenv("QRUN_FAIL", "101.pbs01 103.pbs01")
	code, out, errs = optsched(t, "", "pbs", "run", "--once", "--apply", "--timezone", "UTC", "--lock", filepath.Join(dir, "l"), "--log", log)
	if code != exitError || !strings.Contains(errs, "qrun failed for 2 of 4 jobs") || !strings.Contains(out, "started 2 jobs, qrun failed for 2") {
		t.Errorf("--once with failures: exit %d, %q, %q", code, out, errs)
	}
	if r := pbstest.QrunCalls(t, calls); len(r) != 4 {
		t.Errorf("qrun calls %q", r)
	}
}

// TestPBSStdin reads the jobs document from stdin.
func TestPBSStdin(t *testing.T) {
	data, _ := os.ReadFile(fixture("qstat.json"))
	code, out, errs := optsched(t, string(data), "pbs", "plan", "--qstat", "-", "--pbsnodes", fixture("pbsnodes.json"),
		"--queues", fixture("queues.json"), "--timezone", "UTC")
	if code != exitOK || len(scriptCommands(t, out)) != 4 {
		t.Errorf("exit %d, %s\n%s", code, errs, out)
	}
}

// TestPBSRecheckBeforeQrun: the state is read again just before qrun; a
// start whose vnode went offline meanwhile is dropped with the reason,
// the others run.
func TestPBSRecheckBeforeQrun(t *testing.T) {
	_, calls := pbstest.FakePBS(t, fixture("qstat.json"), fixture("pbsnodes.json"), fixture("queues.json"))
	data, err := os.ReadFile(fixture("pbsnodes.json"))
	if err != nil {
		t.Fatal(err)
	}
	// n013 goes offline between the two reads.
	i := strings.Index(string(data), `"n013":{`)
	j := i + strings.Index(string(data)[i:], `"state":"free"`)
	later := string(data)[:j] + `"state":"offline"` + string(data)[j+len(`"state":"free"`):]
	if later == string(data) {
		t.Fatal("fixture n013 not found")
	}
	laterPath := filepath.Join(t.TempDir(), "later.json")
	if err := os.WriteFile(laterPath, []byte(later), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_NODES_LATER", laterPath)
	dir := t.TempDir()
	code, out, errs := optsched(t, "", "pbs", "plan", "--apply", "--recheck-after", "0", "--timezone", "UTC", "--lock", filepath.Join(dir, "l"), "--log", filepath.Join(dir, "a"), "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	runs := pbstest.QrunCalls(t, calls)
	for _, r := range runs {
		if strings.Contains(r, "n013") {
			t.Errorf("qrun on the vnode that went offline: %s", r)
		}
	}
	var doc pbsched.PlanDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	dropped := false
	for _, d := range doc.Deferred {
		dropped = dropped || strings.Contains(d.Reason, "read again just before qrun") && strings.Contains(d.Reason, "n013")
	}
	if len(runs) != 3 || len(doc.Starts) != 3 || !dropped {
		t.Errorf("%d qruns, %d starts, deferred %+v", len(runs), len(doc.Starts), doc.Deferred)
	}
}

// TestPBSRecheckAfter: a cycle that decided within --recheck-after of
// reading the server acts on the state it read (three reads, then qrun;
// 1h here, so that no load makes the decision late); with 1ns, deciding
// always takes longer and the jobs and vnodes are read again; a negative
// value is a usage error.
func TestPBSRecheckAfter(t *testing.T) {
	for _, c := range []struct {
		flag  []string
		reads int
	}{{[]string{"--recheck-after", "1h"}, 3}, {[]string{"--recheck-after", "1ns"}, 5}} {
		_, calls := pbstest.FakePBS(t, fixture("qstat.json"), fixture("pbsnodes.json"), fixture("queues.json"))
		dir := t.TempDir()
		args := append([]string{"pbs", "plan", "--apply", "--timezone", "UTC", "--lock", filepath.Join(dir, "l"), "--log", filepath.Join(dir, "a")}, c.flag...)
		if code, _, errs := optsched(t, "", args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", c.flag, code, errs)
		}
		got := pbstest.Calls(t, calls)
		reads := 0
		for _, g := range got {
			if !strings.HasPrefix(g, "qrun") {
				reads++
			}
		}
		if reads != c.reads {
			t.Errorf("%v: %d reads (%q), want %d", c.flag, reads, got, c.reads)
		}
		if len(pbstest.QrunCalls(t, calls)) != 4 {
			t.Errorf("%v: calls %q, want 4 qruns", c.flag, got)
		}
	}
	if code, _, errs := optsched(t, "", "pbs", "plan", "--recheck-after", "-1s"); code != exitUsage || !strings.Contains(errs, "--recheck-after must not be negative") {
		t.Errorf("negative: exit %d, %q", code, errs)
	}
}

// TestPBSOrderFlag: --order takes fifo or sjf, checked before anything
// is read (no qstat is on PATH here), and the plan names its order.
func TestPBSOrderFlag(t *testing.T) {
	if code, _, errs := optsched(t, "", "pbs", "plan", "--order", "lifo"); code != exitUsage || !strings.Contains(errs, `--order must be fifo or sjf, got "lifo"`) {
		t.Errorf("--order lifo: exit %d, %q", code, errs)
	}
	for _, order := range []string{"fifo", "sjf"} {
		code, out, errs := optsched(t, "", "pbs", "plan", "--order", order, "--qstat", fixture("qstat.json"), "--pbsnodes", fixture("pbsnodes.json"),
			"--queues", fixture("queues.json"), "--timezone", "UTC", "-o", "json")
		if code != exitOK {
			t.Fatalf("--order %s: exit %d: %s", order, code, errs)
		}
		var doc pbsched.PlanDoc
		if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Order != order {
			t.Errorf("--order %s: plan order %q (%v)", order, doc.Order, err)
		}
	}
}

// TestSlurmFallbackFlag: slurm's --fallback takes the same list as pbs's
// and solve's, checked before anything is read.
func TestSlurmFallbackFlag(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	code, _, errs := optsched(t, "", "slurm", "plan", "--fallback", "bogus")
	if code != exitUsage || !strings.Contains(errs, "--fallback must be one of sa, nsa, none") {
		t.Errorf("bad --fallback: exit %d, %q", code, errs)
	}
}
