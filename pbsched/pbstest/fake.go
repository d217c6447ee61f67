package pbstest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FakePBS puts fake qstat, pbsnodes and qrun on PATH for the rest of the
// test (t.Setenv). qstat prints qstatFile (with -Q: queuesFile) and
// pbsnodes prints nodesFile; every call is appended to the returned
// calls file (read it with Calls or QrunCalls). The environment steers
// them:
//
//   - QRUN_FAIL: qrun fails (exit 2, a PBS-like message) for these jobs;
//   - QRUN_WAIT: qrun waits until this file exists (or its folder is
//     gone), then logs "qrun-done JOB": a qrun in flight for as long as
//     the test wants;
//   - QRUN_SLEEP: qrun sleeps this long, then logs "qrun-done JOB";
//   - FAKE_NODES_LATER: pbsnodes prints this file from its second call
//     on (a vnode that changes between two reads of a cycle).
//
// They all start empty.
func FakePBS(t testing.TB, qstatFile, nodesFile, queuesFile string) (bin, calls string) {
	t.Helper()
	dir := t.TempDir()
	bin = filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	calls = filepath.Join(dir, "calls.log")
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	t.Setenv("FAKE_CALLS", calls)
	t.Setenv("FAKE_QSTAT", abs(qstatFile))
	t.Setenv("FAKE_NODES", abs(nodesFile))
	t.Setenv("FAKE_QUEUES", abs(queuesFile))
	scripts := map[string]string{
		"qstat": `#!/bin/sh
echo "qstat $*" >> "$FAKE_CALLS"
case "$*" in *-Q*) cat "$FAKE_QUEUES" ;; *) cat "$FAKE_QSTAT" ;; esac
`,
		"pbsnodes": `#!/bin/sh
echo "pbsnodes $*" >> "$FAKE_CALLS"
if [ -n "$FAKE_NODES_LATER" ] && grep -q '^pbsnodes' "$FAKE_CALLS" && [ "$(grep -c '^pbsnodes' "$FAKE_CALLS")" -gt 1 ]; then
  cat "$FAKE_NODES_LATER"; exit 0
fi
cat "$FAKE_NODES"
`,
		"qrun": `#!/bin/sh
echo "qrun $*" >> "$FAKE_CALLS"
[ "$1" = "-a" ] && shift
[ "$1" = "-H" ] && [ "$3" = "--" ] || { echo "qrun: the job id must follow --" >&2; exit 2; }
for j in $QRUN_FAIL; do
  if [ "$4" = "$j" ]; then echo "qrun: Request invalid for state of job $4" >&2; exit 2; fi
done
if [ -n "$QRUN_WAIT" ]; then
  while [ ! -e "$QRUN_WAIT" ] && [ -d "$(dirname "$QRUN_WAIT")" ]; do sleep 0.05; done
fi
if [ -n "$QRUN_SLEEP" ]; then sleep "$QRUN_SLEEP"; fi
if [ -n "$QRUN_WAIT$QRUN_SLEEP" ]; then echo "qrun-done $4" >> "$FAKE_CALLS"; fi
exit 0
`,
	}
	for name, text := range scripts {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, v := range []string{"QRUN_FAIL", "QRUN_WAIT", "QRUN_SLEEP", "FAKE_NODES_LATER"} {
		t.Setenv(v, "")
	}
	return bin, calls
}

// Calls returns the calls FakePBS's commands logged, in order ("qstat
// -f -t -F json", "qrun -H SPEC -- JOB", "qrun-done JOB", …); none when
// nothing was called.
func Calls(t testing.TB, calls string) []string {
	t.Helper()
	data, err := os.ReadFile(calls)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// QrunCalls returns the qrun calls of Calls.
func QrunCalls(t testing.TB, calls string) []string {
	t.Helper()
	var out []string
	for _, c := range Calls(t, calls) {
		if strings.HasPrefix(c, "qrun ") {
			out = append(out, c)
		}
	}
	return out
}
