package pbsched

import (
	"context"
	"testing"
	"time"

	"github.com/optsched/optsched/model/pbs"
)

// FuzzPBSCycle feeds arbitrary qstat and pbsnodes documents through the
// whole decision: parse, build the view, plan, check. Nothing may panic,
// and any plan that comes out must pass checkPlan.
func FuzzPBSCycle(f *testing.F) {
	// Small seeds: the fuzzer minimises every new input, which takes long
	// on documents of many kilobytes (the readers' own fuzz targets take
	// the full fixtures).
	f.Add([]byte(`{"timestamp":1700000000,"Jobs":{"1.s":{"job_state":"Q","queue":"workq","eligible_time":"0:10:00","Resource_List":{"select":"2:ncpus=4","place":"excl","walltime":"1:00:00"}},`+
		`"2.s":{"job_state":"Q","queue":"workq","Resource_List":{"select":"2:ncpus=2:mem=1gb","place":"scatter"}},`+
		`"3.s":{"job_state":"R","queue":"workq","exec_vnode":"(a2:ncpus=2)","Resource_List":{"select":"1:ncpus=2","walltime":"1:00"}}}}`),
		[]byte(`{"nodes":{"a0":{"state":"free","resources_available":{"ncpus":4,"mem":"8gb","tier0":"r0","tier1":"c0"}},`+
			`"a1":{"state":"free","sharing":"default_excl","resources_available":{"ncpus":4,"mem":"8192mb","tier0":"r0","tier1":"c0"}},`+
			`"a2":{"state":"free","jobs":["3.s/0"],"resources_available":{"ncpus":4,"mem":"8388608kb","tier0":"r0","tier1":"c1"},"resources_assigned":{"ncpus":2}},`+
			`"a3":{"state":"down,offline","resources_available":{"ncpus":4,"tier0":"r1","tier1":"c2"}}}}`))
	f.Add([]byte(`{"Jobs":{"1.s":{"job_state":"Q","queue":"batch","Resource_List":{"select":"1:ncpus=1:ngpus=1+2:ncpus=8","place":"pack"}}}}`),
		[]byte(`{"nodes":{"g":{"state":"free","queue":"batch","resources_available":{"ncpus":16,"ngpus":2}},"h":{"state":"job-busy","resources_available":{"ncpus":16}}}}`))
	queues, _ := pbs.ParseQueues([]byte(`{"Queue":{"workq":{"queue_type":"Execution","started":"True"},"batch":{"queue_type":"Execution","started":"True"}}}`))
	f.Fuzz(func(t *testing.T, qstat, pbsnodes []byte) {
		js, err := pbs.ParseJobs(qstat, time.UTC)
		if err != nil {
			return
		}
		ns, err := pbs.ParseNodes(pbsnodes)
		if err != nil {
			return
		}
		st := &State{Jobs: js, Nodes: ns, Queues: queues, Now: max(js.Timestamp, 1), Digest: "fuzz"}
		sc := &Scope{Levels: []string{"tier0", "tier1"}, Period: 60}
		for _, mode := range []string{PartialFirstFit, PartialCP} {
			c, err := buildCluster(st, sc) // plan marks candidates
			if err != nil {
				return
			}
			opt := testPlan()
			opt.TimeLimit = 20 * time.Millisecond
			opt.Partial = mode
			p, err := plan(context.Background(), c, opt)
			if err != nil {
				continue
			}
			if err := Check(st, sc, p); err != nil {
				t.Fatalf("--partial %s: plan refused by its own check: %v", mode, err)
			}
		}
	})
}
