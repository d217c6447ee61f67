package pbsched

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/optsched/optsched/sched/schedtest"
)

var updateApplyText = flag.Bool("update-apply-text", false, "rewrite testdata/apply-texts.golden")

// argsRunner fails some jobs, says its arguments as Qrun does, and ends
// the context after its second start.
type argsRunner struct {
	fakeRunner
	cancel func(error)
}

func (r *argsRunner) Run(ctx context.Context, execVnode, job string) (int, string) {
	code, msg := r.fakeRunner.Run(ctx, execVnode, job)
	if len(r.ran) == 2 {
		r.cancel(errors.New("SIGTERM"))
	}
	return code, msg
}

func (r *argsRunner) Args(execVnode, job string) []string {
	return []string{"-H", execVnode, "--", job}
}

// TestApplyTexts holds the whole text of Apply's error and of every
// start's outcome: failures, arguments, and a context that ends between
// two starts (the golden file was written by the Apply of before package
// sched).
func TestApplyTexts(t *testing.T) {
	mk := func() *Plan {
		return &Plan{Starts: []*Start{
			{Job: "1.s", Chunks: []VChunk{{Vnode: "a"}, {Vnode: "b"}}},
			{Job: "2.s", Chunks: []VChunk{{Vnode: "c"}}},
			{Job: "3.s", Chunks: []VChunk{{Vnode: "d"}}},
			{Job: "4.s", Chunks: []VChunk{{Vnode: "e"}}},
		}}
	}
	var b strings.Builder
	for _, name := range []string{"failures", "context ends"} {
		ctx, cancel := context.WithCancelCause(context.Background())
		var r Runner = &fakeRunner{fail: map[string]bool{"2.s": true, "4.s": true}}
		if name == "context ends" {
			r = &argsRunner{fakeRunner{fail: map[string]bool{"2.s": true}}, cancel}
		}
		p := mk()
		o, err := Apply(ctx, p, r)
		cancel(nil)
		fmt.Fprintf(&b, "== %s\nerror: %v\n", name, err)
		for _, s := range o.Starts {
			fmt.Fprintf(&b, "%s: applied %v exit %d error %q args %q\n", s.Job, s.Applied, s.ExitCode, s.Error, s.Args)
		}
	}
	schedtest.Golden(t, filepath.Join("testdata", "apply-texts.golden"), b.String(), *updateApplyText)
}
