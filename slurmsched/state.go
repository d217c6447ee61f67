package slurmsched

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/optsched/optsched/model/hostlist"
)

// A State is the cluster as one cycle reads it.
type State struct {
	Nodes []Node
	Jobs  []Job
	// Topology is the text of a topology.conf (from scontrol show
	// topology, converted by TopologyConf, or the operator's file); ""
	// means no topology: one switch over every node.
	Topology string
	// Now is the time of the reading (Unix seconds).
	Now int64
	// Digest is the SHA-256 of the documents read (hex), for the audit
	// log.
	Digest string
}

// A Node is one record of sinfo --json (Slurm 22.05, openapi/v0.0.38).
type Node struct {
	Name string `json:"name"`
	// State is idle, mixed, allocated, down, …; Flags are its
	// state_flags (DRAIN, …).
	State string   `json:"state"`
	Flags []string `json:"state_flags"`
	// CPUs and AllocCPUs count CPUs; RealMemory and AllocMemory are in
	// MB.
	CPUs        int64    `json:"cpus"`
	AllocCPUs   int64    `json:"alloc_cpus"`
	RealMemory  int64    `json:"real_memory"`
	AllocMemory int64    `json:"alloc_memory"`
	Partitions  []string `json:"partitions"`
	Features    string   `json:"features"`
	Gres        string   `json:"gres"`
	Reason      string   `json:"reason"`
}

// A Job is one record of squeue --json (Slurm 22.05). The number fields
// that Slurm writes as null when unset are pointers.
type Job struct {
	ID int64 `json:"job_id"`
	// Name is the job name (sbatch -J).
	Name string `json:"name"`
	// ArrayJobID is the array's id for a task, ArrayTaskString the
	// pending tasks of an array's record ("2-4").
	ArrayJobID      int64  `json:"array_job_id"`
	ArrayTaskID     *int64 `json:"array_task_id"`
	ArrayTaskString string `json:"array_task_string"`
	State           string `json:"job_state"`
	Reason          string `json:"state_reason"`
	Priority        int64  `json:"priority"`
	Partition       string `json:"partition"`
	User            string `json:"user_name"`
	// NodeCount is the node count asked for (the minimum); CPUs the CPUs
	// of the whole job; MinCPUsPerNode the least a node gives it.
	NodeCount      int64 `json:"node_count"`
	CPUs           int64 `json:"cpus"`
	MinCPUsPerNode int64 `json:"minimum_cpus_per_node"`
	// MemPerNode and MemPerCPU are in MB; at most one is set.
	MemPerNode *int64 `json:"memory_per_node"`
	MemPerCPU  *int64 `json:"memory_per_cpu"`
	// Shared is "none" for --exclusive.
	Shared *string `json:"shared"`
	// TimeLimit is in minutes; nil is UNLIMITED.
	TimeLimit  *int64 `json:"time_limit"`
	SubmitTime int64  `json:"submit_time"`
	// StartTime is when the job started, or for a pending job the
	// expected start (0 when unknown); EndTime when it ended, or for a
	// running job the end its time limit allows. A job cancelled while
	// pending keeps start = end = the cancel time and no Nodes.
	StartTime int64 `json:"start_time"`
	EndTime   int64 `json:"end_time"`
	// RestartCount counts the job's requeues (restart_cnt).
	RestartCount int64 `json:"restart_cnt"`
	// Nodes are the nodes of a running job; RequiredNodes the
	// ReqNodeList, ExcludedNodes the ExcNodeList (hostlists).
	Nodes         string `json:"nodes"`
	RequiredNodes string `json:"required_nodes"`
	ExcludedNodes string `json:"excluded_nodes"`
	Dependency    string `json:"dependency"`
	// AdminComment is PlacedMark on a job optsched placed.
	AdminComment string `json:"admin_comment"`
	Features     string `json:"features"`
	TresPerNode  string `json:"tres_per_node"`
	TresPerJob   string `json:"tres_per_job"`
	// ExitCode is the raw wait status (exit 3 is 768).
	ExitCode int64 `json:"exit_code"`

	// isTask and task mark a copy Decide makes for one pending task of
	// an array's record, and its task id.
	isTask bool
	task   int64
}

// Exclusive reports whether the job asked for whole nodes (--exclusive).
func (j *Job) Exclusive() bool { return j.Shared != nil && *j.Shared == "none" }

// IDString is the job's id as scontrol takes it; for one pending task
// of an array's record (as Decide makes them), ARRAY_TASK.
func (j *Job) IDString() string {
	if j.isTask {
		return fmt.Sprintf("%d_%d", j.ID, j.task)
	}
	return fmt.Sprint(j.ID)
}

// MaxArrayTasks bounds the pending tasks of one array record a cycle
// considers; the others wait for a later cycle.
const MaxArrayTasks = 1000

// ArrayTasks expands an array_task_string ("2-4", "1,3,7-9", "1-9:2",
// "1-100%5") into task ids, at most limit of them; the throttle after
// '%' is dropped.
func ArrayTasks(s string, limit int) ([]int64, error) {
	s, _, _ = strings.Cut(s, "%")
	var out []int64
	for _, part := range strings.Split(s, ",") {
		rng, stepText, hasStep := strings.Cut(part, ":")
		loText, hiText, isRange := strings.Cut(rng, "-")
		lo, err := strconv.ParseInt(loText, 10, 64)
		if err != nil || lo < 0 {
			return nil, fmt.Errorf("array task string %q: bad task %q", s, loText)
		}
		hi, step := lo, int64(1)
		if isRange {
			if hi, err = strconv.ParseInt(hiText, 10, 64); err != nil || hi < lo {
				return nil, fmt.Errorf("array task string %q: bad range %q", s, rng)
			}
		}
		if hasStep {
			if step, err = strconv.ParseInt(stepText, 10, 64); err != nil || step < 1 {
				return nil, fmt.Errorf("array task string %q: bad step %q", s, stepText)
			}
		}
		for t := lo; t <= hi; t += step {
			if len(out) >= limit {
				return out, nil
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// maxDoc bounds a document ParseJobs or ParseNodes reads.
const maxDoc = 256 << 20

// ParseJobs reads the jobs of squeue --json.
func ParseJobs(data []byte) ([]Job, error) {
	var doc struct {
		Jobs   *[]Job          `json:"jobs"`
		Errors json.RawMessage `json:"errors"`
	}
	if err := decode(data, &doc); err != nil {
		return nil, fmt.Errorf("squeue --json: %w", err)
	}
	if doc.Jobs == nil {
		return nil, errors.New(`squeue --json: no "jobs" list`)
	}
	for i, j := range *doc.Jobs {
		if j.ID <= 0 {
			return nil, fmt.Errorf("squeue --json: jobs[%d]: job_id %d is not positive", i, j.ID)
		}
		if j.NodeCount < 0 || j.CPUs < 0 {
			return nil, fmt.Errorf("squeue --json: job %d: negative node_count or cpus", j.ID)
		}
	}
	return *doc.Jobs, nil
}

// ParseNodes reads the nodes of sinfo --json.
func ParseNodes(data []byte) ([]Node, error) {
	var doc struct {
		Nodes *[]Node `json:"nodes"`
	}
	if err := decode(data, &doc); err != nil {
		return nil, fmt.Errorf("sinfo --json: %w", err)
	}
	if doc.Nodes == nil {
		return nil, errors.New(`sinfo --json: no "nodes" list`)
	}
	seen := map[string]bool{}
	for i, n := range *doc.Nodes {
		switch {
		case n.Name == "":
			return nil, fmt.Errorf("sinfo --json: nodes[%d]: no name", i)
		case seen[n.Name]:
			return nil, fmt.Errorf("sinfo --json: node %s listed twice", n.Name)
		case n.CPUs < 0 || n.AllocCPUs < 0 || n.RealMemory < 0 || n.AllocMemory < 0:
			return nil, fmt.Errorf("sinfo --json: node %s: negative cpus or memory", n.Name)
		}
		seen[n.Name] = true
	}
	return *doc.Nodes, nil
}

func decode(data []byte, v any) error {
	if len(data) > maxDoc {
		return fmt.Errorf("larger than %d bytes", maxDoc)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	if err := d.Decode(v); err != nil {
		return err
	}
	return nil
}

// TopologyConf turns the output of scontrol show topology into the text
// of a topology.conf: it keeps SwitchName=, Nodes= of the leaf switches
// and Switches= of the upper ones (which scontrol also lists with all
// the nodes below them), and drops Level= and LinkSpeed=. A text with no
// switch ("Topology plugin ... not configured" and the like) gives "".
func TopologyConf(show string) (string, error) {
	var b strings.Builder
	for n, line := range strings.Split(show, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "SwitchName=") {
			continue
		}
		var name, nodes, switches string
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "SwitchName":
				name = v
			case "Nodes":
				nodes = v
			case "Switches":
				switches = v
			}
		}
		if name == "" {
			return "", fmt.Errorf("scontrol show topology line %d: no switch name", n+1)
		}
		switch {
		case switches != "":
			fmt.Fprintf(&b, "SwitchName=%s Switches=%s\n", name, switches)
		case nodes != "":
			fmt.Fprintf(&b, "SwitchName=%s Nodes=%s\n", name, nodes)
		default:
			return "", fmt.Errorf("scontrol show topology line %d: switch %s has neither Nodes= nor Switches=", n+1, name)
		}
	}
	return b.String(), nil
}

// expand expands a hostlist, "" and "(null)" to nothing.
func expand(list string) ([]string, error) {
	if list == "" || list == "(null)" {
		return nil, nil
	}
	return hostlist.Expand(list)
}
