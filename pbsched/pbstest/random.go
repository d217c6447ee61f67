// Package pbstest generates random PBS states for the tests of pbsched
// and of optsched's pbs commands, checks plans against what the
// generator knows, independently of the code under test, and puts fake
// qstat, pbsnodes and qrun commands on PATH (FakePBS).
package pbstest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/model/pbs"
)

// A Start is one start of a plan as Verify reads it: the job, its qrun -H
// vnode specification and whether it took the whole-node path.
type Start struct {
	Job, ExecVnode string
	Whole          bool
}

// RandomCluster is a generated PBS state and what the test knows about it,
// independently of the code under test.
type RandomCluster struct {
	// Qstat, Nodes and Queues are the documents (qstat -f -F json,
	// pbsnodes -av -F json, qstat -Q -f -F json).
	Qstat, Nodes, Queues []byte
	state                map[string]string // vnode -> state
	cpus                 map[string]int64  // vnode -> ncpus available
	usedCPUs             map[string]int64  // vnode -> ncpus assigned
	busy                 map[string]bool   // vnode runs a job (pbsnodes jobs or some exec_vnode)
	nodeQueue            map[string]string
	runnable             map[string]bool // queued job ids in started execution queues
	jobQueue             map[string]string
}

var randomStates = []string{"free", "free", "free", "free", "free", "job-exclusive", "job-busy", "down", "offline",
	"resv-exclusive", "state-unknown", "down,offline", "offline,job-busy", "state-unknown,down", "provisioning", "stale"}

// NewRandomCluster generates a small cluster in every vnode state with
// running, queued, held and array jobs in execution, routing and stopped
// queues, in the JSON shapes of PBS 2022.
func NewRandomCluster(r *rand.Rand) *RandomCluster {
	rc := &RandomCluster{state: map[string]string{}, cpus: map[string]int64{}, usedCPUs: map[string]int64{},
		busy: map[string]bool{}, nodeQueue: map[string]string{}, runnable: map[string]bool{}, jobQueue: map[string]string{}}
	now := int64(1700000000)
	ctime := func(t int64) string { return time.Unix(t, 0).UTC().Format("Mon Jan _2 15:04:05 2006") }
	nodes := map[string]any{}
	jobs := map[string]any{}
	jobID := 1000
	nextID := func() string { jobID++; return fmt.Sprintf("%d.rnd", jobID) }
	n := 3 + r.IntN(18)
	// Half the clusters are homogeneous (one CPU count, GPUs everywhere or
	// nowhere), where whole-node jobs are common.
	homogeneous := r.IntN(2) == 0
	clusterCPUs, clusterGPUs := []int64{16, 64}[r.IntN(2)], r.IntN(2) == 0
	for i := range n {
		name := fmt.Sprintf("r%dc%dn%d", i/8, (i/4)%2, i%4)
		st := randomStates[r.IntN(len(randomStates))]
		cpus := []int64{16, 64}[r.IntN(2)]
		gpus := r.IntN(2) == 0
		if homogeneous {
			cpus, gpus = clusterCPUs, clusterGPUs
		}
		memGB := cpus * 4
		mem := []string{fmt.Sprintf("%dkb", memGB<<20), fmt.Sprintf("%dmb", memGB<<10), fmt.Sprintf("%dgb", memGB)}[r.IntN(3)]
		avail := map[string]any{"arch": "linux", "host": name, "vnode": name, "mem": mem, "ncpus": cpus,
			"tier0": fmt.Sprintf("r%d", i/8), "tier1": fmt.Sprintf("r%dc%d", i/8, (i/4)%2)}
		if gpus {
			avail["ngpus"] = 4
		}
		node := map[string]any{"Mom": name, "ntype": "PBS", "state": st, "pcpus": cpus, "resources_available": avail}
		if s := []string{"", "", "", "default_shared", "default_shared", "default_excl", "force_exclhost", "ignore_excl"}[r.IntN(8)]; s != "" {
			node["sharing"] = s
		}
		if r.IntN(40) == 0 {
			q := []string{"workq", "batch", "other"}[r.IntN(3)]
			node["queue"] = q
			rc.nodeQueue[name] = q
		}
		assigned := int64(0)
		var onNode []string
		switch {
		case strings.Contains(st, "job-"):
			assigned = cpus
		case st == "free" && r.IntN(3) == 0:
			assigned = cpus / 4
		}
		if assigned > 0 {
			id := nextID()
			onNode = append(onNode, id+"/0")
			jobs[id] = map[string]any{"job_state": "R", "queue": "workq", "exec_vnode": fmt.Sprintf("(%s:ncpus=%d)", name, assigned),
				"stime": ctime(now - 600), "qtime": ctime(now - 900),
				"Resource_List": map[string]any{"select": fmt.Sprintf("1:ncpus=%d", assigned), "walltime": "02:00:00", "place": "pack"}}
			rc.busy[name] = true
		}
		if st == "free" && assigned == 0 && r.IntN(20) == 0 {
			// pbsnodes has not caught up with a job that just started.
			id := nextID()
			jobs[id] = map[string]any{"job_state": "R", "queue": "workq", "exec_vnode": fmt.Sprintf("(%s:ncpus=1)", name),
				"Resource_List": map[string]any{"select": "1:ncpus=1", "walltime": "00:10:00"}}
			rc.busy[name] = true
		}
		if onNode != nil {
			node["jobs"] = onNode
		}
		node["resources_assigned"] = map[string]any{"ncpus": assigned, "mem": "0kb", "ngpus": 0}
		nodes[name] = node
		rc.state[name], rc.cpus[name], rc.usedCPUs[name] = st, cpus, assigned
	}
	queues := map[string]any{
		"workq": map[string]any{"queue_type": "Execution", "enabled": "True", "started": "True"},
		"batch": map[string]any{"queue_type": "Execution", "enabled": "True", "started": "True"},
		"prod":  map[string]any{"queue_type": "Route", "enabled": "True", "started": "True"},
		"debug": map[string]any{"queue_type": "Execution", "enabled": "True", "started": "False"},
	}
	for range r.IntN(13) {
		id := nextID()
		q := []string{"workq", "workq", "workq", "batch", "prod", "debug"}[r.IntN(6)]
		state := []string{"Q", "Q", "Q", "Q", "H", "W"}[r.IntN(6)]
		chunk := func() string {
			c := fmt.Sprintf("%d:ncpus=%d", 1+r.IntN(4), []int{1, 4, 8, 16, 64}[r.IntN(5)])
			if r.IntN(3) == 0 {
				c += fmt.Sprintf(":mem=%dgb", 1+r.IntN(64))
			}
			if r.IntN(4) == 0 {
				c += fmt.Sprintf(":ngpus=%d", 1+r.IntN(2))
			}
			return c
		}
		sel := chunk()
		if r.IntN(5) == 0 {
			sel += "+" + chunk()
		}
		rl := map[string]any{"select": sel, "place": []string{"", "free", "scatter", "pack", "excl", "scatter:excl", "pack:excl", "free:shared", "vscatter"}[r.IntN(9)]}
		if r.IntN(4) > 0 {
			rl["walltime"] = fmt.Sprintf("%02d:%02d:00", r.IntN(48), r.IntN(60))
		}
		job := map[string]any{"job_state": state, "queue": q, "qtime": ctime(now - int64(r.IntN(7200))), "Resource_List": rl}
		if r.IntN(2) == 0 {
			job["eligible_time"] = fmt.Sprintf("%d:%02d:%02d", r.IntN(30), r.IntN(60), r.IntN(60))
		}
		if r.IntN(15) == 0 {
			id = strings.Replace(id, ".", "[].", 1)
			job["array"] = "True"
		}
		jobs[id] = job
		rc.jobQueue[id] = q
		if state == "Q" && (q == "workq" || q == "batch") && !strings.Contains(id, "[]") {
			rc.runnable[id] = true
		}
	}
	head := map[string]any{"timestamp": now, "pbs_version": "2022.1.1.20220926110806", "pbs_server": "rnd"}
	doc := func(key string, body map[string]any) []byte {
		d := map[string]any{key: body}
		for k, v := range head {
			d[k] = v
		}
		data, _ := json.Marshal(d)
		return data
	}
	rc.Qstat, rc.Nodes, rc.Queues = doc("Jobs", jobs), doc("nodes", nodes), doc("Queue", queues)
	return rc
}

// Write writes the documents to files in a new temporary folder.
func (rc *RandomCluster) Write(t testing.TB) (qstat, nodes, queues string) {
	dir := t.TempDir()
	qstat, nodes, queues = filepath.Join(dir, "qstat.json"), filepath.Join(dir, "pbsnodes.json"), filepath.Join(dir, "queues.json")
	for p, d := range map[string][]byte{qstat: rc.Qstat, nodes: rc.Nodes, queues: rc.Queues} {
		if err := os.WriteFile(p, d, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return qstat, nodes, queues
}

// Verify checks a plan's starts against what the generator knows: only
// runnable jobs, once each; only vnodes in state free, of the job's queue;
// whole-node starts on vnodes running nothing and shared with no other
// start; CPUs within capacity. It returns the numbers of whole- and
// partial-node starts.
func (rc *RandomCluster) Verify(t testing.TB, seed uint64, starts []Start) (whole, partial int) {
	t.Helper()
	seen := map[string]bool{}
	cpus := map[string]int64{}
	holders := map[string][]string{}
	wholeOn := map[string]bool{}
	for _, s := range starts {
		if !rc.runnable[s.Job] || seen[s.Job] {
			t.Errorf("seed %d: job %s started (runnable %v, twice %v)", seed, s.Job, rc.runnable[s.Job], seen[s.Job])
		}
		seen[s.Job] = true
		chunks, err := pbs.ParseExecVnode(s.ExecVnode)
		if err != nil {
			t.Fatalf("seed %d: job %s: %v", seed, s.Job, err)
		}
		for _, c := range chunks {
			v := c[0].Vnode
			if rc.state[v] != "free" {
				t.Errorf("seed %d: job %s named vnode %s in state %q", seed, s.Job, v, rc.state[v])
			}
			if q := rc.nodeQueue[v]; q != "" && q != rc.jobQueue[s.Job] {
				t.Errorf("seed %d: job %s (queue %s) on vnode %s of queue %s", seed, s.Job, rc.jobQueue[s.Job], v, q)
			}
			n, ok := c[0].Amounts["ncpus"]
			if !ok {
				n = 1
			}
			cpus[v] += n
			if len(holders[v]) == 0 || holders[v][len(holders[v])-1] != s.Job {
				holders[v] = append(holders[v], s.Job)
			}
			if s.Whole {
				wholeOn[v] = true
				if rc.busy[v] || rc.usedCPUs[v] > 0 {
					t.Errorf("seed %d: whole-node job %s on busy vnode %s", seed, s.Job, v)
				}
			}
		}
		if s.Whole {
			whole++
		} else {
			partial++
		}
	}
	for v, n := range cpus {
		if rc.usedCPUs[v]+n > rc.cpus[v] {
			t.Errorf("seed %d: vnode %s: %d + %d CPUs of %d", seed, v, rc.usedCPUs[v], n, rc.cpus[v])
		}
		if wholeOn[v] && len(holders[v]) > 1 {
			t.Errorf("seed %d: vnode %s held whole but given to %v", seed, v, holders[v])
		}
	}
	return whole, partial
}
