package rlscheduler

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/optsched/optsched/bench/trace"
)

// A Job is one job of a workload as the protocol loads it.
type Job struct {
	// Number is the SWF job number (field 1); jobs are sorted by it.
	Number int64
	// Submit is the submit time (field 2), absolute, in seconds.
	Submit int64
	// Run is the real run time (field 4), ≥ 1: a negative run time is
	// read as 10, and jobs of run time 0 are dropped.
	Run int64
	// Request is the requested time (field 9), or the run time as read
	// where field 9 is exactly -1. It may be below Run (the job is not
	// killed) and, in logs without either, -1.
	Request int64
	// Procs is max(allocated processors, requested processors)
	// (fields 5 and 8).
	Procs int64
}

// A Workload is a loaded log: its jobs and the cluster it declares.
type Workload struct {
	Jobs []Job
	// MaxNodes and MaxProcs are the header's; MaxProcs = MaxNodes where
	// the header does not give it. Where the header gives neither,
	// both are the largest job's processors (NodesFrom says so).
	MaxNodes, MaxProcs int64
	// NodesFrom says where MaxNodes comes from: "MaxNodes", "MaxProcs"
	// or "largest job".
	NodesFrom string
	// Dropped counts the job records dropped for a run time of 0;
	// Skipped the records removed by LoadOptions.DropFirst.
	Dropped, Skipped int
	// Header holds the header's "; Key: value" fields (the last value of
	// a repeated key).
	Header map[string]string
}

// PerNode is the processors of a node, MaxProcs / MaxNodes (not rounded,
// as the published code divides).
func (w *Workload) PerNode() float64 { return float64(w.MaxProcs) / float64(w.MaxNodes) }

// NodesOf is the nodes a job takes, ⌈processors / PerNode⌉ (at least 1).
func (w *Workload) NodesOf(j Job) int {
	n := int(math.Ceil(float64(j.Procs) / w.PerNode()))
	return max(n, 1)
}

// LoadOptions tune Load.
type LoadOptions struct {
	// DropFirst drops the first job records of the file, in file order,
	// before anything else (HPC2N 2.1 has 5 records more at its start
	// than the 2.2 file the paper used).
	DropFirst int
	// MaxJobs bounds the job records read (0: DefaultMaxJobs).
	MaxJobs int
}

// DefaultMaxJobs bounds the job records Load reads: the largest archive
// logs have a few million.
const DefaultMaxJobs = 10_000_000

// maxTime bounds every number read (2^40 s is 35,000 years; processor
// counts beyond it are no machine's), so that no sum of times overflows.
const maxTime = 1 << 40

// maxLine bounds a line of the input, in bytes.
const maxLine = 1 << 20

// A LineError is an error about one line of the input.
type LineError struct {
	Line   int
	Reason string
}

func (e *LineError) Error() string { return fmt.Sprintf("swf line %d: %s", e.Line, e.Reason) }

// ErrNoJobs is returned for an input without a single job kept.
var ErrNoJobs = errors.New("rlscheduler: no jobs in the input")

// Open loads the SWF log at path, gzip-compressed or not (told by its
// magic bytes, as bench/trace reads logs).
func Open(path string, opt LoadOptions) (*Workload, error) {
	r, err := trace.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	w, err := Load(r, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}

// swfField names the SWF fields by number, for errors.
var swfField = [...]string{1: "job number", 2: "submit time", 4: "run time", 5: "allocated processors", 8: "requested processors", 9: "requested time"}

// Load reads an SWF log by the protocol's rules (see the package doc).
// Header lines start with ';'; a job line has 18 whitespace-separated
// fields, of which fields 1, 2, 4, 5, 8 and 9 are read (integers; a
// decimal time is rounded to the nearest second). A malformed line, a
// line over 1 MiB, a header count that is not a positive integer and a
// log whose MaxProcs is below MaxNodes are errors naming the line.
func Load(r io.Reader, opt LoadOptions) (*Workload, error) {
	if opt.DropFirst < 0 {
		return nil, fmt.Errorf("rlscheduler: DropFirst %d is negative", opt.DropFirst)
	}
	if opt.MaxJobs < 0 {
		return nil, fmt.Errorf("rlscheduler: MaxJobs %d is negative", opt.MaxJobs)
	}
	limit := opt.MaxJobs
	if limit == 0 {
		limit = DefaultMaxJobs
	}
	w := &Workload{Header: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var (
		line, records int
		headerLine    = map[string]int{}
	)
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if text[0] == ';' {
			k, v, ok := strings.Cut(string(text[1:]), ":")
			if ok {
				k = strings.TrimSpace(k)
				w.Header[k] = strings.TrimSpace(v)
				headerLine[k] = line
			}
			continue
		}
		records++
		if records > limit {
			return nil, &LineError{line, fmt.Sprintf("more than %d job records", limit)}
		}
		f := bytes.Fields(text)
		if len(f) != 18 {
			return nil, &LineError{line, fmt.Sprintf("want 18 fields, got %d", len(f))}
		}
		if records <= opt.DropFirst {
			w.Skipped++
			continue
		}
		var v [10]int64
		for _, k := range [...]int{1, 2, 4, 5, 8, 9} {
			x, err := parseField(f[k-1])
			if err != nil {
				return nil, &LineError{line, fmt.Sprintf("field %d (%s): %v", k, swfField[k], err)}
			}
			if x < -maxTime || x > maxTime {
				return nil, &LineError{line, fmt.Sprintf("field %d (%s): %d is out of range (|x| ≤ 2^40)", k, swfField[k], x)}
			}
			v[k] = x
		}
		j := Job{Number: v[1], Submit: v[2], Run: v[4], Procs: max(v[5], v[8]), Request: v[9]}
		if j.Request == -1 {
			j.Request = j.Run // before the run time is mended, as the published code does
		}
		if j.Run < 0 {
			j.Run = 10
		}
		if j.Run == 0 {
			w.Dropped++
			continue
		}
		w.Jobs = append(w.Jobs, j)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &LineError{line + 1, "line longer than 1 MiB"}
		}
		return nil, err
	}
	if len(w.Jobs) == 0 {
		return nil, fmt.Errorf("%w (%d lines, %d job records, %d of run time 0, %d dropped first)", ErrNoJobs, line, records, w.Dropped, w.Skipped)
	}
	count := func(key string) (int64, bool, error) {
		s, ok := w.Header[key]
		if !ok {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 || n > 1<<30 {
			return 0, false, &LineError{headerLine[key], fmt.Sprintf("header %s: %q is not a count of 1 to 2^30", key, s)}
		}
		return n, true, nil
	}
	nodes, okN, err := count("MaxNodes")
	if err != nil {
		return nil, err
	}
	procs, okP, err := count("MaxProcs")
	if err != nil {
		return nil, err
	}
	switch {
	case okN && okP:
		if procs < nodes {
			return nil, &LineError{headerLine["MaxProcs"], fmt.Sprintf("header MaxProcs %d is below MaxNodes %d", procs, nodes)}
		}
		w.MaxNodes, w.MaxProcs, w.NodesFrom = nodes, procs, "MaxNodes"
	case okN:
		w.MaxNodes, w.MaxProcs, w.NodesFrom = nodes, nodes, "MaxNodes"
	case okP:
		w.MaxNodes, w.MaxProcs, w.NodesFrom = procs, procs, "MaxProcs"
	default:
		var most int64 = 1
		for _, j := range w.Jobs {
			most = max(most, j.Procs)
		}
		w.MaxNodes, w.MaxProcs, w.NodesFrom = most, most, "largest job"
	}
	slices.SortStableFunc(w.Jobs, func(a, b Job) int {
		switch {
		case a.Number < b.Number:
			return -1
		case a.Number > b.Number:
			return 1
		}
		return 0
	})
	return w, nil
}

// parseField reads an SWF number: an integer, or a decimal rounded to the
// nearest integer.
func parseField(b []byte) (int64, error) {
	if x, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		return x, nil
	}
	x, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(x) || math.Abs(x) > 1<<53 {
		return 0, fmt.Errorf("%q is not a number", b)
	}
	return int64(math.Round(x)), nil
}
