package pbsched

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/optsched/optsched/sched"
)

// Recheck checks the plan's starts against a state read again just
// before qrun (a vnode may have gone offline, a job been deleted or
// started by someone else since the plan was made) — the plan applier's
// check. The rules every server shares are sched.Recheck's: it keeps, in
// order, each start that the fresh state allows together with the starts
// kept before it. The rules of PBS's documents (chunks, properties,
// hosts) are then applied to the kept starts; when they reject them, the
// starts are taken one by one in order and each is kept only when the
// kept ones with it still pass (up to maxRecheckOneByOne starts; beyond,
// none is kept and the next cycle plans again). Every dropped start is
// deferred with the reason.
func Recheck(fresh *State, sc *Scope, p *Plan) {
	total := len(p.Starts)
	in := newCheckInput(fresh, sc, &Plan{Starts: p.Starts})
	_, dropped := sched.Recheck(in.view(), in.corePlan())
	drop := func(s *Start, why string) {
		p.Deferred = append(p.Deferred, Reason{s.Job, "not started: the state read again just before qrun no longer allows it: " + why})
	}
	gone := make(map[int]bool, len(dropped))
	for _, d := range dropped {
		gone[d.Index] = true
		var why []string
		for _, x := range d.Violations {
			why = append(why, in.recheckWords(x))
		}
		drop(p.Starts[d.Index], strings.Join(why, "; "))
	}
	var kept []*Start
	for i, s := range p.Starts {
		if !gone[i] {
			kept = append(kept, s)
		}
	}
	if err := documentRules(fresh, sc, kept); err != nil {
		if len(kept) > maxRecheckOneByOne {
			for _, s := range kept {
				drop(s, err.Error())
			}
			kept = nil
		} else {
			all := kept
			kept = nil
			for _, s := range all {
				if err := documentRules(fresh, sc, append(slices.Clip(kept), s)); err != nil {
					drop(s, err.Error())
					continue
				}
				kept = append(kept, s)
			}
		}
	}
	if len(kept) < total {
		p.Notes = append(p.Notes, fmt.Sprintf("the state read again before qrun changed: %d of %d starts dropped", total-len(kept), total))
	}
	p.Starts = kept
}

// maxRecheckOneByOne bounds the starts Recheck tries one by one against
// the rules of PBS's documents (each try applies them to the kept starts).
const maxRecheckOneByOne = 200

// documentRules applies Check's rules of PBS's own documents that hold
// for any set of starts (chunks, properties, hosts) to starts.
func documentRules(st *State, sc *Scope, starts []*Start) error {
	in := newCheckInput(st, sc, &Plan{Starts: starts})
	var problems []error
	add := func(rule string) func(format string, args ...any) {
		return func(format string, args ...any) {
			problems = append(problems, fmt.Errorf(rule+": "+format, args...))
		}
	}
	ruleChunks(in, add("chunks"))
	ruleProperties(in, add("properties"))
	ruleHosts(in, add("hosts"))
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrUnsafePlan, errors.Join(problems...))
}

// recheckWords words a violation of the fresh state: a job that is gone
// or no longer queued, a vnode that is gone or no longer free, or Check's
// words.
func (in *checkInput) recheckWords(x sched.Violation) string {
	switch x.Kind {
	case sched.NoJob:
		return "job " + x.Job + " is no longer queued"
	case sched.Blocked:
		if j := in.jobs[x.Job]; j != nil && j.State != "Q" {
			return "job " + x.Job + " is no longer queued"
		}
	case sched.NoNode, sched.Down:
		return "vnode " + x.Node + " is no longer free"
	}
	return in.words(x).Error()
}
