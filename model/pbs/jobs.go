package pbs

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/internal/jsonkind"
)

// Jobs is the parsed output of `qstat -f -F json`.
type Jobs struct {
	// Timestamp is the server time of the query, seconds since 1970; 0
	// when the document has none.
	Timestamp int64
	// Version and Server are pbs_version and pbs_server.
	Version, Server string
	// Jobs lists the jobs in document order (the server's order).
	Jobs []Job
}

// A Job is one job of qstat -f. Times are seconds since 1970, 0 when
// absent; amounts are 0 when absent.
type Job struct {
	// ID is the job identifier, "123.pbs01".
	ID string
	// State is job_state: Q queued, R running, H held, W waiting, T
	// transit, E exiting, B begun (array), S suspended, F finished, ...
	State string
	// Queue is the queue the job sits in.
	Queue string
	// Name is Job_Name.
	Name string
	// Array reports a job array (array = True, or an id with "[]"); qrun
	// cannot start a job array as a whole.
	Array bool
	// CTime, QTime, ETime, STime: created, queued, eligible, started.
	CTime, QTime, ETime, STime int64
	// EligibleTime is eligible_time in seconds (time accrued while
	// eligible, kept when the server's eligible_time_enable is set);
	// HasEligibleTime says whether the attribute was present.
	EligibleTime    int64
	HasEligibleTime bool
	// Select is Resource_List.select parsed, nil when absent; SelectText
	// is the statement as written.
	Select     model.Select
	SelectText string
	// NodeCount is Resource_List.nodect; NCPUs is Resource_List.ncpus.
	NodeCount int
	NCPUs     int64
	// Walltime is Resource_List.walltime in seconds, 0 when absent.
	Walltime int64
	// Place is Resource_List.place.
	Place Place
	// ExecVnode is the parsed exec_vnode of a running job, nil otherwise.
	ExecVnode []VChunk

	// What the history (qstat -fx) tells of a job that ran; read by
	// `optsched replay`, not by the scheduler.

	// ExecVnodeText is exec_vnode as written, in any state: a finished job
	// keeps the vnodes it ran on (ParseExecVnode reads it).
	ExecVnodeText string
	// MTime is mtime (last modified); ObitTime is obittime, when the
	// server learnt that the job ended (0 for a job that never ran).
	MTime, ObitTime int64
	// UsedWalltime is resources_used.walltime in seconds; HasUsedWalltime
	// says whether it was present.
	UsedWalltime    int64
	HasUsedWalltime bool
	// ExitStatus is Exit_status (negative: PBS's own codes, such as -29
	// for a job over its walltime limit; above 256: killed by a signal);
	// HasExitStatus says whether it was present.
	ExitStatus    int
	HasExitStatus bool
	// RunCount is run_count, the times the job was started.
	RunCount int
}

// maxNodeCount bounds Resource_List.nodect.
const maxNodeCount = 1 << 20

// ParseJobs parses the output of `qstat -f -F json`. Times in ctime form
// are read in loc (nil: the local zone). Attributes optsched does not use
// are ignored; the ones it uses must be well formed, and every error is an
// *Error naming the job and the attribute.
func ParseJobs(data []byte, loc *time.Location) (*Jobs, error) {
	const src = "qstat"
	h, body, err := document(src, data, "Jobs")
	if err != nil {
		return nil, err
	}
	out := &Jobs{Timestamp: h.Timestamp, Version: h.Version, Server: h.Server}
	if body == nil {
		return out, nil
	}
	list, dup, err := members(body)
	if err != nil {
		if dup != "" {
			return nil, &Error{Source: src, Object: "job " + dup, Reason: "listed twice"}
		}
		return nil, &Error{Source: src, Field: "Jobs", Reason: fmt.Sprintf("must be an object of jobs, got %s", jsonkind.Of(body))}
	}
	out.Jobs = make([]Job, 0, len(list))
	for _, m := range list {
		j, err := parseJob(m.key, m.val, loc)
		if err != nil {
			return nil, err
		}
		out.Jobs = append(out.Jobs, j)
	}
	return out, nil
}

func parseJob(id string, raw json.RawMessage, loc *time.Location) (Job, error) {
	const src = "qstat"
	obj := "job " + id
	bad := func(field, format string, args ...any) error {
		return &Error{Source: src, Object: obj, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	j := Job{ID: id}
	if strings.TrimSpace(id) == "" {
		return j, &Error{Source: src, Object: "job \"\"", Reason: "empty job id"}
	}
	if !ValidName(id) {
		return j, &Error{Source: src, Object: obj, Reason: "job id contains white space, separators or shell metacharacters"}
	}
	attrs, dup, err := members(raw)
	if err != nil {
		if dup != "" {
			return j, bad(dup, "given twice")
		}
		return j, &Error{Source: src, Object: obj, Reason: fmt.Sprintf("must be an object of attributes, got %s", jsonkind.Of(raw))}
	}
	str := func(field string, v json.RawMessage) (string, error) {
		s, ok := scalar(v)
		if !ok {
			return "", bad(field, "must be a string, got %s", jsonkind.Of(v))
		}
		return s, nil
	}
	tm := func(field string, v json.RawMessage) (int64, error) {
		s, err := str(field, v)
		if err != nil {
			return 0, err
		}
		t, err := ParseTime(s, loc)
		if err != nil {
			return 0, bad(field, "%v", err)
		}
		return t, nil
	}
	var haveState, haveQueue bool
	var execText string
	for _, a := range attrs {
		if isNull(a.val) {
			continue
		}
		switch a.key {
		case "job_state":
			if j.State, err = str(a.key, a.val); err != nil {
				return j, err
			}
			if len(j.State) != 1 || j.State[0] < 'A' || j.State[0] > 'Z' {
				return j, bad(a.key, "%q is not a job state (one capital letter such as Q or R)", j.State)
			}
			haveState = true
		case "queue":
			if j.Queue, err = str(a.key, a.val); err != nil {
				return j, err
			}
			if strings.TrimSpace(j.Queue) == "" {
				return j, bad(a.key, "empty")
			}
			haveQueue = true
		case "Job_Name":
			j.Name, _ = scalar(a.val)
		case "array":
			s, _ := scalar(a.val)
			j.Array = strings.EqualFold(s, "true")
		case "ctime":
			if j.CTime, err = tm(a.key, a.val); err != nil {
				return j, err
			}
		case "qtime":
			if j.QTime, err = tm(a.key, a.val); err != nil {
				return j, err
			}
		case "etime":
			if j.ETime, err = tm(a.key, a.val); err != nil {
				return j, err
			}
		case "stime":
			if j.STime, err = tm(a.key, a.val); err != nil {
				return j, err
			}
		case "eligible_time":
			s, err := str(a.key, a.val)
			if err != nil {
				return j, err
			}
			if j.EligibleTime, err = ParseDuration(s); err != nil {
				return j, bad(a.key, "%v", err)
			}
			j.HasEligibleTime = true
		case "exec_vnode":
			if execText, err = str(a.key, a.val); err != nil {
				return j, err
			}
			j.ExecVnodeText = execText
		case "mtime":
			if j.MTime, err = tm(a.key, a.val); err != nil {
				return j, err
			}
		case "obittime":
			if j.ObitTime, err = tm(a.key, a.val); err != nil {
				return j, err
			}
		case "Exit_status", "run_count":
			s, err := str(a.key, a.val)
			if err != nil {
				return j, err
			}
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < -maxNodeCount || n > maxNodeCount {
				return j, bad(a.key, "%q is not an integer", cut(s))
			}
			if a.key == "run_count" {
				if n < 0 {
					return j, bad(a.key, "%d is negative", n)
				}
				j.RunCount = n
			} else {
				j.ExitStatus, j.HasExitStatus = n, true
			}
		case "resources_used":
			if err := parseResourcesUsed(&j, a.val, bad); err != nil {
				return j, err
			}
		case "Resource_List":
			if err := parseResourceList(&j, a.val, bad); err != nil {
				return j, err
			}
		}
	}
	if !haveState {
		return j, bad("job_state", "missing")
	}
	if !haveQueue {
		return j, bad("queue", "missing")
	}
	if strings.Contains(id, "[]") {
		j.Array = true
	}
	if j.Place.Arrangement == "" {
		j.Place.Arrangement = "free"
	}
	if execText != "" && (j.State == "R" || j.State == "E" || j.State == "S" || j.State == "U") {
		if j.ExecVnode, err = ParseExecVnode(execText); err != nil {
			return j, bad("exec_vnode", "%v", err)
		}
	}
	return j, nil
}

// parseResourcesUsed reads resources_used.walltime.
func parseResourcesUsed(j *Job, raw json.RawMessage, bad func(field, format string, args ...any) error) error {
	res, dup, err := members(raw)
	if err != nil {
		if dup != "" {
			return bad("resources_used."+dup, "given twice")
		}
		return bad("resources_used", "must be an object, got %s", jsonkind.Of(raw))
	}
	for _, r := range res {
		if r.key != "walltime" || isNull(r.val) {
			continue
		}
		s, ok := scalar(r.val)
		if !ok {
			return bad("resources_used.walltime", "must be a string or number, got %s", jsonkind.Of(r.val))
		}
		w, err := ParseDuration(s)
		if err != nil {
			return bad("resources_used.walltime", "%v", err)
		}
		j.UsedWalltime, j.HasUsedWalltime = w, true
	}
	return nil
}

func parseResourceList(j *Job, raw json.RawMessage, bad func(field, format string, args ...any) error) error {
	res, dup, err := members(raw)
	if err != nil {
		if dup != "" {
			return bad("Resource_List."+dup, "given twice")
		}
		return bad("Resource_List", "must be an object, got %s", jsonkind.Of(raw))
	}
	for _, r := range res {
		field := "Resource_List." + r.key
		if isNull(r.val) {
			continue
		}
		s, ok := scalar(r.val)
		switch r.key {
		case "select", "nodect", "ncpus", "walltime", "place":
			if !ok {
				return bad(field, "must be a string or number, got %s", jsonkind.Of(r.val))
			}
		default:
			continue
		}
		switch r.key {
		case "select":
			sel, err := model.ParseSelect(s)
			if err != nil {
				return bad(field, "%q: %v", cut(s), err)
			}
			j.Select, j.SelectText = sel, s
		case "nodect":
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 1 || n > maxNodeCount {
				return bad(field, "%q must be an integer from 1 to %d", cut(s), maxNodeCount)
			}
			j.NodeCount = n
		case "ncpus":
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil || n < 0 || n > maxTime {
				return bad(field, "%q must be a non-negative integer", cut(s))
			}
			j.NCPUs = n
		case "walltime":
			w, err := ParseDuration(s)
			if err != nil {
				return bad(field, "%v", err)
			}
			j.Walltime = w
		case "place":
			p, err := ParsePlace(s)
			if err != nil {
				return bad(field, "%v", err)
			}
			j.Place = p
		}
	}
	return nil
}
