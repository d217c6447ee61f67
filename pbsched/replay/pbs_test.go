package replay_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	breplay "github.com/optsched/optsched/model/replay"
	"github.com/optsched/optsched/pbsched/replay"
)

// fakeCmds answers PBS commands from fixtures and records every call.
type fakeCmds struct {
	calls  [][]string
	dirs   []string
	answer func(name string, args []string) (stdout, stderr string, err error)
}

func (f *fakeCmds) Run(_ context.Context, dir, name string, args ...string) ([]byte, []byte, error) {
	f.calls = append(f.calls, append([]string{name}, args...))
	f.dirs = append(f.dirs, dir)
	o, e, err := f.answer(name, args)
	return []byte(o), []byte(e), err
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// exitErr is an *exec.ExitError with status 35 (what qdel answers for a
// finished job).
func exitErr(t *testing.T) error {
	t.Helper()
	err := exec.Command("sh", "-c", "exit 35").Run()
	if err == nil {
		t.Fatal("sh exit 35 succeeded")
	}
	return err
}

// TestDeleteOnlyOwn: Delete refuses any id qsub did not return to this
// Server (running no qdel at all), deletes its own, and takes "Job has
// finished" as done.
func TestDeleteOnlyOwn(t *testing.T) {
	n := 0
	f := &fakeCmds{answer: func(name string, args []string) (string, string, error) {
		switch name {
		case "qsub":
			n++
			return fmt.Sprintf("%d.pbshost\n", n+40), "", nil
		case "qdel":
			return "", "qdel: Job has finished " + args[0] + "\n", exitErr(t)
		}
		return "", "", fmt.Errorf("unexpected %s", name)
	}}
	s := &replay.Server{Cmd: f}
	for k := range 2 {
		if _, err := s.Submit(context.Background(), breplay.Job{Name: fmt.Sprintf("ors-r-%d", k), Chunks: 1, NCPUs: 4, Sleep: 1, Walltime: 11}); err != nil {
			t.Fatal(err)
		}
	}
	calls := len(f.calls)
	err := s.Delete(context.Background(), []string{"41.pbshost", "7.pbshost"})
	if !errors.Is(err, replay.ErrNotOwn) || len(f.calls) != calls {
		t.Fatalf("Delete of a foreign id: err %v, %d commands run", err, len(f.calls)-calls)
	}
	if err := s.Delete(context.Background(), []string{"41.pbshost", "42.pbshost"}); err != nil {
		t.Fatal(err)
	}
	if got := f.calls[len(f.calls)-1]; !slices.Equal(got, []string{"qdel", "41.pbshost", "42.pbshost"}) {
		t.Errorf("qdel call %v", got)
	}
	// Any other qdel complaint, or none at all, is an error.
	f.answer = func(string, []string) (string, string, error) {
		return "", "qdel: Unauthorized Request 41.pbshost", exitErr(t)
	}
	if err := s.Delete(context.Background(), []string{"41.pbshost"}); err == nil {
		t.Error("qdel refused: no error")
	}
	f.answer = func(string, []string) (string, string, error) { return "", "", exitErr(t) }
	if err := s.Delete(context.Background(), []string{"41.pbshost"}); err == nil {
		t.Error("qdel failed silently: no error")
	}
}

// TestSubmitArgs pins the qsub command: name, select, excl, walltime,
// output discarded, sleep; as another user through runuser from their home.
func TestSubmitArgs(t *testing.T) {
	f := &fakeCmds{answer: func(string, []string) (string, string, error) { return "3.pbshost\n", "", nil }}
	s := &replay.Server{Cmd: f, Queue: "workq"}
	j := breplay.Job{Name: "ors-x-4507", Chunks: 3, NCPUs: 4, Sleep: 7, Walltime: 3671}
	id, err := s.Submit(context.Background(), j)
	if err != nil || id != "3.pbshost" {
		t.Fatalf("Submit = %q, %v", id, err)
	}
	want := []string{"qsub", "-N", "ors-x-4507", "-q", "workq", "-o", "/dev/null", "-e", "/dev/null",
		"-l", "select=3:ncpus=4", "-l", "place=excl", "-l", "walltime=01:01:11", "--", "/bin/sleep", "7"}
	if !slices.Equal(f.calls[0], want) {
		t.Errorf("qsub call\n got %v\nwant %v", f.calls[0], want)
	}
	s = &replay.Server{Cmd: f, User: "root"}
	if _, err := s.Submit(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if c := f.calls[1]; c[0] != "runuser" || !slices.Equal(c[1:4], []string{"-u", "root", "--"}) || !strings.HasSuffix(c[4], "qsub") || f.dirs[1] == "" {
		t.Errorf("as another user: %v in %q", c, f.dirs[1])
	}
	for _, bad := range []string{"", "a b\n", "1.x\n2.x\n"} {
		f.answer = func(string, []string) (string, string, error) { return bad, "", nil }
		if _, err := s.Submit(context.Background(), j); err == nil {
			t.Errorf("qsub answered %q: no error", bad)
		}
	}
}

// TestParseRecordsStates reads the openpbs fixture of model/pbs's kind:
// a deleted queued job is done without a start or vnodes.
func TestParseRecordsStates(t *testing.T) {
	doc := `{"pbs_server":"s","Jobs":{
"3.s":{"job_state":"F","queue":"workq","qtime":"Thu Nov 26 21:34:13 2026","mtime":"Thu Nov 26 21:34:13 2026","Job_Name":"ors-probe-3"},
"4.s":{"job_state":"R","queue":"workq","qtime":1795728000,"stime":1795728001,"exec_vnode":"(a:ncpus=4)+(b:ncpus=4)+(a:ncpus=1)","run_count":1},
"5.s":{"job_state":"F","queue":"workq","qtime":1795728000,"stime":1795728001,"mtime":1795728009,"exec_vnode":"(a:ncpus=4)","Exit_status":-29,"resources_used":{"walltime":"00:00:08"}}}}`
	recs, err := replay.ParseRecords([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	r3, r4, r5 := recs[0], recs[1], recs[2]
	if !r3.Done || r3.Start != 0 || r3.End != 0 || r3.Nodes != nil || r3.Name != "ors-probe-3" {
		t.Errorf("deleted queued job: %+v", r3)
	}
	if r4.Done || !slices.Equal(r4.Nodes, []string{"a", "b"}) || r4.Starts != 1 {
		t.Errorf("running job: %+v", r4)
	}
	if !r5.Done || r5.End != 1795728009 || !r5.HasExit || r5.Exit != -29 || r5.Used != 8 || !r5.HasUsed {
		t.Errorf("finished job without obittime: %+v", r5)
	}
	if _, err := replay.ParseRecords([]byte(`{"Jobs":{"1.s":{"job_state":"F","queue":"q","exec_vnode":"(a:ncpus=4"}}}`)); err == nil {
		t.Error("bad exec_vnode: no error")
	}
}
