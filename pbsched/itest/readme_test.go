//go:build pbsitest

package itest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// readmeSetup is the operator set-up of docs/pbs.md's PBS section ("Server
// set-up"), as the README spells it.
type readmeSetup struct {
	// qmgr are the `qmgr -c "..."` commands of each sh block, in order.
	qmgr [][]string
	// hook is the periodic hook's Python text.
	hook string
}

// findRepo walks up from the working folder to the optsched module root.
func findRepo() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module github.com/optsched/optsched\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of github.com/optsched/optsched above the working folder")
		}
		dir = parent
	}
}

var (
	qmgrCmdRE = regexp.MustCompile(`qmgr -c "([^"]*)"`)
	fenceRE   = regexp.MustCompile("(?s)```(\\w*)\n(.*?)```")
)

// parseReadmeSetup finds docs/pbs.md's PBS section and its server set-up.
func parseReadmeSetup(t *testing.T) readmeSetup {
	t.Helper()
	root, err := findRepo()
	if err != nil {
		t.Fatalf("docs/pbs.md: %v (run the test binary from the repository, as make itest does)", err)
	}
	data, err := os.ReadFile(filepath.Join(root, "docs", "pbs.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	cut := func(s, start, next string) string {
		i := strings.Index(s, start)
		if i < 0 {
			t.Fatalf("docs/pbs.md: no %q", start)
		}
		s = s[i+len(start):]
		if j := strings.Index(s, next); j >= 0 {
			s = s[:j]
		}
		return s
	}
	setup := cut(text, "### Server set-up", "\n### ")
	var rs readmeSetup
	for _, m := range fenceRE.FindAllStringSubmatch(setup, -1) {
		switch m[1] {
		case "sh":
			var cmds []string
			for _, c := range qmgrCmdRE.FindAllStringSubmatch(m[2], -1) {
				cmds = append(cmds, c[1])
			}
			if len(cmds) > 0 {
				rs.qmgr = append(rs.qmgr, cmds)
			}
		case "python":
			rs.hook = m[2]
		}
	}
	if len(rs.qmgr) < 3 || rs.hook == "" {
		t.Fatalf("docs/pbs.md's server set-up: want 3 sh blocks of qmgr commands (whole server, partition, hook) and a python hook; found %d blocks, hook %v", len(rs.qmgr), rs.hook != "")
	}
	return rs
}

// TestHostsReadmeSetup: scenario 5. docs/pbs.md's server set-up runs on
// the server as written, with docs/pbs.md's example names replaced by
// this complex's: scheduling off; a partition "opt" with its queue, the
// vnodes cn00..cn03 and a scheduler that never runs; optsched on exactly
// that part (--exec-queues opt --nodes 'cn[00-03]'), once by hand and
// then from docs/pbs.md's periodic hook (its freq shortened to 5 s).
func TestHostsReadmeSetup(t *testing.T) {
	need(t, cfgHosts)
	checkHostsComplex(t)
	rs := parseReadmeSetup(t)
	reset(t)
	owned := []string{"cn00", "cn01", "cn02", "cn03"}
	const ownedList = "cn[00-03]"
	nodeRE := regexp.MustCompile(`^set node (\S+) (.*)$`)

	// The whole server: scheduling off; then the partition. A command
	// the server refuses is an error, and the set-up goes on.
	readmeQmgr := func(c string) {
		t.Helper()
		if r := runCmd(30*time.Second, "qmgr", "-c", c); r.code != 0 {
			t.Errorf("docs/pbs.md's qmgr -c %q fails on this server: %v %s", c, r, strings.TrimSpace(r.stdout))
		}
	}
	for _, block := range rs.qmgr[:2] {
		for _, c := range block {
			if m := nodeRE.FindStringSubmatch(c); m != nil {
				for _, v := range owned { // "for each vnode optsched owns"
					readmeQmgr("set node " + v + " " + m[2])
				}
				continue
			}
			readmeQmgr(c)
		}
	}
	t.Cleanup(func() {
		runCmd(30*time.Second, "qmgr", "-c", "delete hook optsched_cycle")
		reset(t)
		for _, v := range owned {
			runCmd(30*time.Second, "qmgr", "-c", "unset node "+v+" partition")
		}
	})
	checkQueue := func(attr, want string) {
		out := pbsRun(t, "qstat", "-Qf", "opt")
		if !strings.Contains(out, attr+" = "+want) {
			t.Errorf("queue opt after docs/pbs.md's commands: want %s = %s:\n%s", attr, want, out)
		}
	}
	checkQueue("partition", "opt")
	checkQueue("started", "True")
	for _, v := range owned {
		if out := pbsRun(t, "pbsnodes", "-v", v); !strings.Contains(out, "partition = opt") {
			t.Errorf("vnode %s is not in partition opt:\n%s", v, out)
		}
	}

	// optsched on exactly that part, by hand.
	opt := []string{sleepJobQ(t, "opt", "ro0", 3, "select=1:ncpus=1"), sleepJobQ(t, "opt", "ro1", 3, "select=1:ncpus=4")}
	other := sleepJob(t, "rw", 3, "select=1:ncpus=1")
	o := newOptsched(t)
	if r := o.run("pbs", "run", "--apply", "--once", "--exec-queues", "opt", "--nodes", ownedList); r.code != 0 {
		t.Errorf("run --apply --once on the partition: exit %d, want 0", r.code)
	}
	checkOpt := func(js map[string]job, ids []string) {
		t.Helper()
		for _, id := range ids {
			for v := range ranOn(js[id]) {
				if !strings.HasPrefix(v, "cn0") || v > "cn03" {
					t.Errorf("job %s of queue opt ran on %s, outside %s: %v", id, v, ownedList, js[id])
				}
			}
		}
	}
	js := started(t, opt...)
	checkOpt(js, opt)
	time.Sleep(time.Second)
	notStarted(t, jobs(t), other)
	checkNoOvercommit(t)

	// The periodic hook, from docs/pbs.md's Python with this run's paths.
	dir := t.TempDir()
	lock, log := filepath.Join(dir, "hook.lock"), filepath.Join(dir, "hook-audit.jsonl")
	hook := rs.hook
	for _, r := range []struct{ re, with string }{
		{`"[^"]*/optsched",`, fmt.Sprintf("%q,", optschedBin)},
		{`"--nodes", "[^"]*"`, fmt.Sprintf(`"--nodes", %q`, ownedList)},
		{`"--lock", "[^"]*"`, fmt.Sprintf(`"--lock", %q`, lock)},
		{`"--log", "[^"]*"`, fmt.Sprintf(`"--log", %q`, log)},
	} {
		re := regexp.MustCompile(r.re)
		if !re.MatchString(hook) {
			t.Fatalf("docs/pbs.md's hook has no %s to replace:\n%s", r.re, hook)
		}
		hook = re.ReplaceAllLiteralString(hook, r.with)
	}
	if err := os.WriteFile(filepath.Join(dir, "optsched_cycle.py"), []byte(hook), 0o644); err != nil {
		t.Fatal(err)
	}
	const freq = "5"
	for _, c := range rs.qmgr[2] {
		if strings.Contains(c, " freq = ") {
			c = regexp.MustCompile(`freq = \d+`).ReplaceAllString(c, "freq = "+freq)
		}
		r := runCmdIn(dir, 30*time.Second, "qmgr", "-c", c)
		if r.code != 0 {
			t.Fatalf("qmgr -c %q (docs/pbs.md's hook set-up): %v %s", c, r, r.stdout)
		}
	}
	more := []string{sleepJobQ(t, "opt", "rh0", 3, "select=1:ncpus=2"), sleepJobQ(t, "opt", "rh1", 3, "select=2:ncpus=1")}
	hookStarted := false
	t.Cleanup(func() {
		if !hookStarted {
			t.Logf("what the hook logged (server_logs, \"optsched\"):\n%s", indent(serverLog("optsched")))
		}
	})
	js = waitJobs(t, 30*time.Second, "docs/pbs.md's periodic hook should start the opt jobs", more, job.ran)
	hookStarted = true
	checkOpt(js, more)
	notStarted(t, js, other)
	// optsched appends the cycle's audit line after its last qrun, so the
	// jobs may show vnodes a moment before the line is there.
	waitUntil(t, 30*time.Second, "the hook's cycles should write their audit log", func() (bool, string) {
		fi, err := os.Stat(log)
		return err == nil && fi.Size() > 0, fmt.Sprint(err)
	})
	js = waitFinished(t, 60*time.Second, append(opt, more...)...)
	for _, id := range append(opt, more...) {
		if !js[id].finishedOK() {
			t.Errorf("%v: want Exit_status 0", js[id])
		}
	}
}

// serverLog returns the lines of today's pbs_server log that contain s.
func serverLog(s string) string {
	files, _ := filepath.Glob("/var/spool/pbs/server_logs/*")
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, s) {
				out = append(out, line)
			}
		}
	}
	if len(out) > 20 {
		out = out[len(out)-20:]
	}
	return strings.Join(out, "\n")
}
