// Package slurmtest makes large Slurm clusters for optsched's tests and
// benchmarks: squeue --json and sinfo --json documents of any size, built
// on the records of real Slurm 22.05 output.
package slurmtest

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// ScaleDocs makes the squeue --json and sinfo --json documents and the
// topology.conf of a cluster of n nodes (4 CPUs, 8000 MB; leaves of 16
// under pods of 16 leaves), a third of them partly used, with n/2 held
// jobs: mix whole-node (--exclusive, 1–8 nodes) and the rest shared (1–4
// CPUs on 1–2 nodes, memory per CPU), mix of them whole-node. Every record carries all the
// other fields of a real Slurm 22.05 record (squeue.json and sinfo.json
// of the fixtures folder), so that the
// documents have a real one's size (about 3 kB a job, 1 kB a node).
func ScaleDocs(fixtures string, n int, mix float64, seed uint64) (squeue, sinfo []byte, topo string) {
	jobTmpl, nodeTmpl := templates(fixtures)
	r := rand.New(rand.NewPCG(seed, 37))
	type node struct {
		Name        string   `json:"name"`
		State       string   `json:"state"`
		Flags       []string `json:"state_flags"`
		CPUs        int64    `json:"cpus"`
		AllocCPUs   int64    `json:"alloc_cpus"`
		RealMemory  int64    `json:"real_memory"`
		AllocMemory int64    `json:"alloc_memory"`
		Partitions  []string `json:"partitions"`
	}
	var nodes []node
	var b strings.Builder
	leaves := (n + 15) / 16
	for i := range n {
		nd := node{Name: fmt.Sprintf("c%05d", i), State: "idle", Flags: []string{}, CPUs: 4, RealMemory: 8000, Partitions: []string{"batch"}}
		switch r.IntN(6) {
		case 0, 1:
			nd.State, nd.AllocCPUs, nd.AllocMemory = "mixed", 1+r.Int64N(3), 1000*(1+r.Int64N(4))
		case 2:
			nd.State, nd.AllocCPUs, nd.AllocMemory = "allocated", 4, 8000
		}
		if r.IntN(50) == 0 {
			nd.Flags = []string{"DRAIN"}
		}
		nodes = append(nodes, nd)
	}
	for l := range leaves {
		fmt.Fprintf(&b, "SwitchName=l%d Nodes=c[%05d-%05d]\n", l, 16*l, min(16*l+15, n-1))
	}
	for p := 0; p*16 < leaves; p++ {
		fmt.Fprintf(&b, "SwitchName=p%d Switches=l[%d-%d]\n", p, 16*p, min(16*p+15, leaves-1))
	}
	if leaves > 16 {
		fmt.Fprintf(&b, "SwitchName=root Switches=p[0-%d]\n", (leaves-1)/16)
	}
	type job struct {
		ID         int64   `json:"job_id"`
		State      string  `json:"job_state"`
		Reason     string  `json:"state_reason"`
		Priority   int64   `json:"priority"`
		Partition  string  `json:"partition"`
		NodeCount  int64   `json:"node_count"`
		CPUs       int64   `json:"cpus"`
		MinCPUs    int64   `json:"minimum_cpus_per_node"`
		MemPerCPU  *int64  `json:"memory_per_cpu"`
		Shared     *string `json:"shared"`
		TimeLimit  int64   `json:"time_limit"`
		SubmitTime int64   `json:"submit_time"`
		Features   string  `json:"features"`
		Required   string  `json:"required_nodes"`
		Excluded   string  `json:"excluded_nodes"`
		Dependency string  `json:"dependency"`
		Nodes      string  `json:"nodes"`
	}
	var jobs []job
	none := "none"
	for k := range n / 2 {
		j := job{ID: int64(k + 1), State: "PENDING", Reason: "JobHeldUser", Partition: "batch", MinCPUs: 1,
			TimeLimit: int64(10 + r.IntN(600)), SubmitTime: int64(1000 + k)}
		mem := int64(500 * (1 + r.IntN(4)))
		j.MemPerCPU = &mem
		if r.Float64() < mix {
			j.Shared, j.NodeCount = &none, int64(1+r.IntN(8))
			j.CPUs = j.NodeCount
		} else {
			j.NodeCount = int64(1 + r.IntN(2))
			j.CPUs = j.NodeCount * int64(1+r.IntN(4))
		}
		jobs = append(jobs, j)
	}
	sq, _ := json.Marshal(map[string]any{"jobs": merge(jobTmpl, jobs)})
	si, _ := json.Marshal(map[string]any{"nodes": merge(nodeTmpl, nodes)})
	return sq, si, b.String()
}

// templates returns a held job's and a node's record of the fixtures.
func templates(dir string) (job, node map[string]any) {
	var sq struct{ Jobs []map[string]any }
	var si struct{ Nodes []map[string]any }
	for _, f := range []struct {
		path string
		v    any
	}{{filepath.Join(dir, "squeue.json"), &sq}, {filepath.Join(dir, "sinfo.json"), &si}} {
		data, err := os.ReadFile(f.path)
		if err != nil {
			panic(err)
		}
		if err := json.Unmarshal(data, f.v); err != nil {
			panic(err)
		}
	}
	for _, j := range sq.Jobs {
		if j["state_reason"] == "JobHeldUser" && j["array_task_string"] == "" {
			job = j
		}
	}
	return job, si.Nodes[0]
}

// merge returns each record of recs over a copy of tmpl.
func merge[T any](tmpl map[string]any, recs []T) []map[string]any {
	out := make([]map[string]any, len(recs))
	for i, r := range recs {
		m := maps.Clone(tmpl)
		data, _ := json.Marshal(r)
		var fields map[string]any
		json.Unmarshal(data, &fields)
		maps.Copy(m, fields)
		out[i] = m
	}
	return out
}
