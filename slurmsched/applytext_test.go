package slurmsched

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/optsched/optsched/sched/schedtest"
)

// releaseFails is a fakeRunner whose release fails.
type releaseFails struct{ *fakeRunner }

func (r releaseFails) Release(context.Context, []string) error {
	return errors.New("slurm_release_job error: Access/permission denied")
}

// endsAtShow ends the context when job 4 is read back.
type endsAtShow struct {
	*fakeRunner
	cancel func(error)
}

func (r endsAtShow) Show(ctx context.Context, job string) (map[string]string, error) {
	if job == "4" {
		r.cancel(errors.New("SIGINT"))
	}
	return r.fakeRunner.Show(ctx, job)
}

// TestApplyTexts holds the whole text of Apply's error and every start's
// Status, for placements that fail, read back wrong, a release that fails
// and a context ended before anything ran or before the release (the golden file was written by
// the Apply of before package sched).
func TestApplyTexts(t *testing.T) {
	fake := func() *fakeRunner {
		return &fakeRunner{placed: map[string]string{}, k: map[string]int{}, fail: map[string]bool{"2": true}, misread: map[string]bool{"3": true}}
	}
	ended, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("SIGTERM"))
	late, cancelLate := context.WithCancelCause(context.Background())
	defer cancelLate(nil)
	var b strings.Builder
	for _, c := range []struct {
		name string
		ctx  context.Context
		r    Runner
	}{
		{"failures", context.Background(), fake()},
		{"release fails", context.Background(), releaseFails{fake()}},
		{"context ended", ended, fake()},
		{"context ends before the release", late, endsAtShow{fake(), cancelLate}},
	} {
		p := fourStarts()
		o, err := Apply(c.ctx, p, c.r)
		fmt.Fprintf(&b, "== %s\nerror: %v\n", c.name, err)
		for _, s := range o.Starts {
			fmt.Fprintf(&b, "%s: %s\n", s.Job, s.Status)
		}
	}
	schedtest.Golden(t, filepath.Join("testdata", "apply-texts.golden"), b.String(), *updateCheckText)
}
