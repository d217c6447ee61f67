package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// MaxLine is the longest line, without its terminator, that the readers
// accept, in bytes. A longer line is an error even with Options.SkipBad.
const MaxLine = 1 << 20

// maxHeader bounds the bytes kept in Trace.Header.
const maxHeader = 1 << 20

// Job is one job of a trace.
type Job struct {
	ID       string
	Submit   int64  // s since trace start (≥ 0)
	Runtime  int64  // actual run time, s (≥ 0: an SWF run time of 0 means under 0.5 s; the job starts and ends at once)
	Walltime int64  // requested time, s (≥ 1); SWF does not guarantee ≥ Runtime, kept as read
	Nodes    int    // whole nodes requested (≥ 1)
	Queue    string // SWF queue number as a string, "" when unknown
	User     string // SWF user id as a string, "" when unknown
	// SWF holds the record's fields as the log gave them, for readers
	// that need more than a replay does (bench/predict); nil unless
	// Options.KeepSWF, and always for Lan traces.
	SWF *SWFRecord
}

// SWFRecord is what an SWF job line says beyond a Job, as read: -1 where
// the log does not say.
type SWFRecord struct {
	// Wait is field 3, the seconds from submit to start (≥ 0), -1 unknown.
	Wait int64
	// Run is field 4, the run time (≥ 0), -1 unknown (Job.Runtime then
	// holds the requested time).
	Run int64
	// Request is field 9, the requested time (≥ 1), -1 unknown
	// (Job.Walltime then holds the run time).
	Request int64
	// Status is field 11: 1 completed, 0 failed, 5 cancelled, -1 unknown.
	Status int64
}

// Trace is a workload read by ReadLan, ReadSWF or Open.
type Trace struct {
	Jobs []Job // sorted by Submit, stable (file order among equal submits)
	// Nodes is the cluster size in nodes: for SWF the header's MaxNodes,
	// else ⌈MaxProcs / procs-per-node⌉, else the largest job's nodes
	// (NodesFrom says which); 0 for Lan traces, whose format does not say.
	Nodes int
	// NodesFrom says where Nodes comes from: "MaxNodes", "MaxProcs",
	// "largest job" or "" (Lan).
	NodesFrom string
	// Records counts what the SWF reader did with the log's job lines.
	Records Records
	// Header holds the SWF header fields ("; Key: value" lines), e.g.
	// "MaxNodes", "MaxProcs", "Computer", "Installation", "Acknowledge".
	// A repeated key and the indented lines continuing a field are joined
	// to its value with "\n". Nil for Lan traces.
	Header map[string]string
	// Skipped counts the malformed job lines skipped under Options.SkipBad.
	Skipped int
}

// Records counts an SWF log's job lines by what the reader did with them,
// following the SWF definition [PWA14]. Jobs, the records replayed, plus
// every skipped kind plus Malformed is the number of job lines read.
type Records struct {
	// Jobs are the records kept as jobs (len(Trace.Jobs)).
	Jobs int `json:"jobs"`
	// ZeroRuntime of them ran for under half a second (run time 0): they
	// start and end at once.
	ZeroRuntime int `json:"zero_runtime"`
	// RuntimeFromRequest of them had no run time (-1); their requested
	// time (field 9) stands in for it.
	RuntimeFromRequest int `json:"runtime_from_request"`
	// Cancelled of them were cancelled (status 5) after they started and
	// are replayed for the time they ran.
	Cancelled int `json:"cancelled_after_start"`
	// Failed of them failed (status 0); they are replayed as they ran.
	Failed int `json:"failed"`
	// RuntimeUnknown were skipped: neither the run time nor the requested
	// time is known.
	RuntimeUnknown int `json:"skipped_runtime_unknown"`
	// CancelledBeforeStart were skipped: cancelled (status 5) without a
	// run (run time -1, or 0 with no processors allocated).
	CancelledBeforeStart int `json:"skipped_cancelled_before_start"`
	// Partial were skipped: the records of the parts of a checkpointed or
	// swapped job (status 2, 3, 4), which the job's own summary line
	// (status 0, 1 or 5) carries whole.
	Partial int `json:"skipped_partial_execution"`
	// ProcsUnknown were skipped: neither the requested (field 8) nor the
	// allocated (field 5) processor count is known.
	ProcsUnknown int `json:"skipped_processors_unknown"`
	// SubmitUnknown were skipped: no submit time (-1).
	SubmitUnknown int `json:"skipped_submit_unknown"`
	// Malformed lines break the format (skipped under Options.SkipBad;
	// Trace.Skipped too).
	Malformed int `json:"malformed"`
}

// MaxClusterNodes bounds the cluster size a trace may declare or imply:
// the largest cluster optsched simulates.
const MaxClusterNodes = 1 << 20

// Options tune the readers. The zero value reads everything and fails on
// the first malformed line.
type Options struct {
	// ProcsPerNode converts SWF processor counts to nodes,
	// Nodes = ⌈procs / ProcsPerNode⌉. 0 takes ⌈MaxProcs / MaxNodes⌉ from the
	// header when both are given, else 1. Ignored by ReadLan.
	ProcsPerNode int
	// SkipBad skips malformed job lines (counted in Trace.Skipped) instead
	// of failing. Over-long lines and read errors still fail.
	SkipBad bool
	// MaxJobs stops reading after this many jobs, in file order (0: all).
	MaxJobs int
	// Strict reads SWF as before the SWF rules were applied: every job
	// line must be a complete job that ran (run time ≥ 1, a processor
	// count, status 0, 1 or -1); any other record is malformed.
	Strict bool
	// AllowEmpty accepts an input without a single job; otherwise Open
	// and the readers return an error saying what was read.
	AllowEmpty bool
	// KeepSWF fills Job.SWF with the record's wait, run, request and
	// status fields as read (its field 3, the wait, is then parsed too, and
	// a malformed one is an error). Ignored by ReadLan.
	KeepSWF bool
}

func (o Options) check() error {
	if o.ProcsPerNode < 0 {
		return fmt.Errorf("trace: Options.ProcsPerNode %d is negative", o.ProcsPerNode)
	}
	if o.MaxJobs < 0 {
		return fmt.Errorf("trace: Options.MaxJobs %d is negative", o.MaxJobs)
	}
	return nil
}

// LineError is a reader's error about one line of its input. Its message is
// "<format> line <n>: <reason>", e.g.
//
//	swf line 12: field 5 (allocated processors): "x" is not an integer
//	lan line 3: want 4 fields (id arrival runtime nodes), got 2
type LineError struct {
	Format string // "lan" or "swf"
	Line   int    // 1-based
	Reason string
	Err    error // the underlying read error, if any
}

func (e *LineError) Error() string {
	return e.Format + " line " + strconv.Itoa(e.Line) + ": " + e.Reason
}

func (e *LineError) Unwrap() error { return e.Err }

// lineReader yields the lines of r, bounded by MaxLine, counting them.
type lineReader struct {
	sc     *bufio.Scanner
	format string
	n      int // lines read
	err    error
}

func newLineReader(r io.Reader, format string) *lineReader {
	sc := bufio.NewScanner(r)
	// Room for MaxLine bytes plus "\r\n"; longer lines stop the scanner
	// with bufio.ErrTooLong, and next checks the length of shorter ones.
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine+2)
	return &lineReader{sc: sc, format: format}
}

// next returns the next line, without "\n" or "\r\n", and false at the end
// of the input or on an error (then in lr.err).
func (lr *lineReader) next() ([]byte, bool) {
	if lr.err != nil {
		return nil, false
	}
	if !lr.sc.Scan() {
		switch err := lr.sc.Err(); {
		case errors.Is(err, bufio.ErrTooLong):
			lr.err = lr.errorf("line longer than 1 MiB")
		case err != nil:
			lr.err = &LineError{Format: lr.format, Line: lr.n + 1, Reason: "read: " + err.Error(), Err: err}
		}
		return nil, false
	}
	if err := lr.sc.Err(); err != nil {
		// The input broke off inside this line (a truncated gzip stream,
		// a read error): the line is a fragment, and the error is what
		// is wrong.
		lr.err = &LineError{Format: lr.format, Line: lr.n + 1, Reason: "read: " + err.Error(), Err: err}
		return nil, false
	}
	lr.n++
	line := lr.sc.Bytes()
	if len(line) > MaxLine {
		lr.err = &LineError{Format: lr.format, Line: lr.n, Reason: "line longer than 1 MiB"}
		return nil, false
	}
	return line, true
}

func (lr *lineReader) errorf(format string, args ...any) *LineError {
	return &LineError{Format: lr.format, Line: lr.n + 1, Reason: fmt.Sprintf(format, args...)}
}

// isSpace reports whether c separates fields.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// splitFields stores the first len(dst) whitespace-separated fields of line
// in dst and returns the number of fields in line.
func splitFields(line []byte, dst [][]byte) int {
	n := 0
	for i := 0; i < len(line); {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			break
		}
		j := i
		for j < len(line) && !isSpace(line[j]) {
			j++
		}
		if n < len(dst) {
			dst[n] = line[i:j]
		}
		n++
		i = j
	}
	return n
}

// parseInt parses a decimal integer with an optional sign. On failure it
// returns a reason for the error message.
func parseInt(b []byte) (int64, string) {
	s := b
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 {
		return 0, quote(b) + " is not an integer"
	}
	var u uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, quote(b) + " is not an integer"
		}
		if u > (math.MaxUint64-9)/10 {
			u = math.MaxUint64 // saturate; rejected below
			continue
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case !neg && u <= math.MaxInt64:
		return int64(u), ""
	case neg && u <= -math.MinInt64:
		return -int64(u), "" // u = 2^63 wraps to MinInt64, as wanted
	}
	return 0, quote(b) + " is out of range"
}

// quote quotes a field for an error message, shortened to keep messages
// small whatever the input.
func quote(b []byte) string {
	const max = 40
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "…"
	}
	return strconv.Quote(string(b))
}

// ceilDiv returns ⌈a / b⌉ for a ≥ 0, b ≥ 1 without overflow.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

// finish sorts the jobs by submit time and, when some submit time is
// negative, makes all relative to the earliest.
func finish(t *Trace, format string) error {
	bySubmit := func(a, b Job) int {
		switch {
		case a.Submit < b.Submit:
			return -1
		case a.Submit > b.Submit:
			return 1
		}
		return 0
	}
	if !slices.IsSortedFunc(t.Jobs, bySubmit) { // traces usually are
		slices.SortStableFunc(t.Jobs, bySubmit)
	}
	if len(t.Jobs) == 0 || t.Jobs[0].Submit >= 0 {
		return nil
	}
	first, last := t.Jobs[0].Submit, t.Jobs[len(t.Jobs)-1].Submit
	if last > math.MaxInt64+first {
		return fmt.Errorf("%s: submit times span %d to %d, more than an int64 holds", format, first, last)
	}
	for i := range t.Jobs {
		t.Jobs[i].Submit -= first
	}
	return nil
}

// appendJob appends j to jobs, doubling the capacity when full: append's
// growth of large slices (×1.25) copies a long trace several times over.
func appendJob(jobs []Job, j Job) []Job {
	if len(jobs) == cap(jobs) {
		jobs = append(make([]Job, 0, max(2*cap(jobs), 256)), jobs...)
	}
	return append(jobs, j)
}

// lanFields names the fields of a Lan job line.
var lanFields = [4]string{"id", "arrival", "runtime", "nodes"}

// ReadLan reads a trace in the format of [Lan23]: one job per line,
// "id arrival runtime nodes", whitespace-separated integers (the id is kept
// as text), with arrival and runtime in seconds. Blank lines and '#'
// comments, whole-line or trailing, are allowed. A job's Walltime is its
// Runtime, as the paper's simulator uses the actual run time. Runtime and
// nodes must be ≥ 1. Jobs are sorted by arrival; if an arrival is negative
// all are shifted to start at 0. Trace.Nodes is 0: the format does not say.
func ReadLan(r io.Reader, opt Options) (*Trace, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	t := &Trace{}
	lr := newLineReader(r, "lan")
	var f [4][]byte
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		n := splitFields(line, f[:])
		if n == 0 {
			continue
		}
		job, reason := parseLanJob(n, &f)
		if reason != "" {
			if opt.SkipBad {
				t.Skipped++
				continue
			}
			return nil, &LineError{Format: "lan", Line: lr.n, Reason: reason}
		}
		t.Jobs = appendJob(t.Jobs, job)
		if opt.MaxJobs > 0 && len(t.Jobs) >= opt.MaxJobs {
			break
		}
	}
	if lr.err != nil {
		return nil, lr.err
	}
	if len(t.Jobs) == 0 && !opt.AllowEmpty {
		return nil, fmt.Errorf("lan: no jobs in the input (%d lines read, %d malformed)", lr.n, t.Skipped)
	}
	if err := finish(t, "lan"); err != nil {
		return nil, err
	}
	return t, nil
}

func parseLanJob(n int, f *[4][]byte) (Job, string) {
	if n != 4 {
		return Job{}, fmt.Sprintf("want 4 fields (id arrival runtime nodes), got %d", n)
	}
	var v [4]int64
	for i := 1; i < 4; i++ {
		x, reason := parseInt(f[i])
		if reason != "" {
			return Job{}, fmt.Sprintf("field %d (%s): %s", i+1, lanFields[i], reason)
		}
		v[i] = x
	}
	if v[2] < 1 {
		return Job{}, fmt.Sprintf("field 3 (runtime): %d is not positive", v[2])
	}
	if v[3] < 1 {
		return Job{}, fmt.Sprintf("field 4 (nodes): %d is not positive", v[3])
	}
	if v[3] > math.MaxInt {
		return Job{}, fmt.Sprintf("field 4 (nodes): %d is out of range", v[3])
	}
	return Job{ID: string(f[0]), Submit: v[1], Runtime: v[2], Walltime: v[2], Nodes: int(v[3])}, ""
}

// swfFields names the 18 fields of an SWF job line, field k at k-1.
var swfFields = [18]string{
	"job number", "submit time", "wait time", "run time",
	"allocated processors", "average CPU time", "used memory",
	"requested processors", "requested time", "requested memory",
	"status", "user id", "group id", "executable", "queue number",
	"partition", "preceding job", "think time",
}

// ReadSWF reads a trace in the Standard Workload Format [PWA14].
//
// Lines starting with ';' are the header: "; Key: value" lines go to
// Trace.Header, indented lines continue the previous field. Every other
// non-blank line is a job record of 18 whitespace-separated fields, -1
// meaning unknown:
//
//	1 job number            7 used memory            13 group id
//	2 submit time           8 requested processors   14 executable
//	3 wait time             9 requested time         15 queue number
//	4 run time              10 requested memory      16 partition
//	5 allocated processors  11 status                17 preceding job
//	6 average CPU time      12 user id               18 think time
//
// A Job takes its ID from field 1 as written, Submit from 2, Runtime from
// 4, processors from 8 or, when unknown (≤ 0), from 5, Walltime from 9 or,
// when unknown, the run time (at least 1), User from 12 and Queue from 15
// ("" when negative). Nodes = ⌈procs / ProcsPerNode⌉. Time fields (2, 4,
// 9) may carry fractions, as the definition permits, and are rounded to
// the second; fields 1, 3, 6, 7, 10, 13, 14, 16–18 are not read.
//
// The records are read as the definition says (Trace.Records counts them):
//
//   - run time 0 is legal ("the job ran for less than 0.5 seconds"): the
//     job is kept and starts and ends at once;
//   - run time -1 (unknown): the requested time stands in for it, and
//     without one the record is skipped;
//   - status 1 (completed), 0 (failed) and -1 (unknown, as in models) are
//     jobs as they ran; status 5 (cancelled) is a job for the time it ran,
//     and skipped when it never started (run time -1, or 0 with no
//     processors allocated);
//   - status 2, 3 and 4 mark the parts of a checkpointed or swapped job,
//     which its summary line (status 0, 1 or 5, the same job number)
//     carries whole: the parts are skipped;
//   - a record with neither a requested nor an allocated processor count,
//     or without a submit time (-1), is skipped.
//
// A line is malformed — an error naming it, or skipped and counted under
// Options.SkipBad — only when it breaks the format: not 18 fields, a field
// read that is not a number, a status outside -1…5. Options.Strict instead
// requires every record to be a job that ran (run time ≥ 1, a processor
// count), as this reader did before it followed the definition.
//
// The header's MaxNodes, else MaxProcs (by ProcsPerNode), gives the
// cluster size; a value that is not a positive count, or a cluster of
// more than MaxClusterNodes nodes, is an error naming its line. Without
// either, the largest job's node count stands in (Trace.NodesFrom).
//
// Jobs are sorted by submit time. SWF submit times are already relative to
// the log's start and are kept; if one is negative all are shifted to make
// the earliest 0. An input without a single job is an error unless
// Options.AllowEmpty.
func ReadSWF(r io.Reader, opt Options) (*Trace, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	t := &Trace{Header: map[string]string{}}
	lr := newLineReader(r, "swf")
	var (
		f      [18][]byte
		procs  []int64 // per job, in file order
		hdr    = header{lines: map[string]int{}}
		intern = map[int64]string{} // user and queue numbers as text
		rec    = &t.Records
	)
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		text := bytes.TrimLeft(line, " \t\r\v\f")
		if len(text) > 0 && text[0] == ';' {
			if !hdr.add(t.Header, text[1:], lr.n) {
				return nil, &LineError{Format: "swf", Line: lr.n, Reason: "header longer than 1 MiB"}
			}
			continue
		}
		hdr.last = "" // a job line ends a header field
		n := splitFields(line, f[:])
		if n == 0 {
			continue
		}
		job, p, kind, reason := parseSWFJob(n, &f, intern, opt.Strict)
		if reason == "" && opt.KeepSWF && kind < swfRuntimeUnknown {
			reason = keepSWF(&job, &f)
		}
		if reason != "" {
			if opt.SkipBad {
				t.Skipped++
				rec.Malformed++
				continue
			}
			return nil, &LineError{Format: "swf", Line: lr.n, Reason: reason}
		}
		switch kind {
		case swfPartial:
			rec.Partial++
			continue
		case swfCancelledBeforeStart:
			rec.CancelledBeforeStart++
			continue
		case swfRuntimeUnknown:
			rec.RuntimeUnknown++
			continue
		case swfProcsUnknown:
			rec.ProcsUnknown++
			continue
		case swfSubmitUnknown:
			rec.SubmitUnknown++
			continue
		case swfZero:
			rec.ZeroRuntime++
		case swfFromRequest:
			rec.RuntimeFromRequest++
		}
		switch job.status {
		case 5:
			rec.Cancelled++
		case 0:
			rec.Failed++
		}
		rec.Jobs++
		t.Jobs = appendJob(t.Jobs, job.Job)
		procs = append(procs, p)
		if opt.MaxJobs > 0 && len(t.Jobs) >= opt.MaxJobs {
			break
		}
	}
	if lr.err != nil {
		return nil, lr.err
	}

	// Header lines may follow job lines, so nodes are counted at the end.
	maxNodes, okNodes, err := hdr.count(t.Header, "MaxNodes", MaxClusterNodes)
	if err != nil {
		return nil, err
	}
	maxProcs, okProcs, err := hdr.count(t.Header, "MaxProcs", math.MaxInt)
	if err != nil {
		return nil, err
	}
	ppn := int64(opt.ProcsPerNode)
	if ppn == 0 {
		ppn = 1
		if okNodes && okProcs {
			ppn = ceilDiv(maxProcs, maxNodes)
		}
	}
	switch {
	case okNodes:
		t.Nodes, t.NodesFrom = int(maxNodes), "MaxNodes"
	case okProcs:
		n := ceilDiv(maxProcs, ppn)
		if n > MaxClusterNodes {
			return nil, &LineError{Format: "swf", Line: hdr.lines["MaxProcs"], Reason: fmt.Sprintf(
				"header MaxProcs: %d processors at %d a node are %d nodes, more than the %d optsched simulates", maxProcs, ppn, n, MaxClusterNodes)}
		}
		t.Nodes, t.NodesFrom = int(n), "MaxProcs"
	}
	largest := 0
	for i := range t.Jobs {
		t.Jobs[i].Nodes = int(ceilDiv(procs[i], ppn)) // ≤ procs ≤ MaxInt
		largest = max(largest, t.Jobs[i].Nodes)
	}
	if t.NodesFrom == "" && largest > 0 {
		t.Nodes, t.NodesFrom = min(largest, MaxClusterNodes), "largest job"
	}
	if len(t.Jobs) == 0 && !opt.AllowEmpty {
		return nil, fmt.Errorf("swf: no jobs in the input (%s)", rec.describe(lr.n))
	}
	if err := finish(t, "swf"); err != nil {
		return nil, err
	}
	return t, nil
}

// Summary lists the counts in words, the kinds that occurred only, e.g.
// "27992 replayed (12 ran under 0.5 s), 40 cancelled before they started
// (skipped), 0 malformed". Malformed is always listed.
func (r Records) Summary() string {
	var parts []string
	add := func(n int, text string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, text))
		}
	}
	var kept []string
	for _, k := range []struct {
		n    int
		text string
	}{
		{r.ZeroRuntime, "ran under 0.5 s"},
		{r.RuntimeFromRequest, "run time unknown, requested time used"},
		{r.Failed, "failed"},
		{r.Cancelled, "cancelled after starting"},
	} {
		if k.n > 0 {
			kept = append(kept, fmt.Sprintf("%d %s", k.n, k.text))
		}
	}
	jobs := fmt.Sprintf("%d replayed", r.Jobs)
	if len(kept) > 0 {
		jobs += " (" + strings.Join(kept, ", ") + ")"
	}
	parts = append(parts, jobs)
	add(r.CancelledBeforeStart, "cancelled before they started (skipped)")
	add(r.Partial, "partial-execution records of checkpointed jobs (skipped; their summary lines replay them)")
	add(r.RuntimeUnknown, "with neither run time nor requested time (skipped)")
	add(r.ProcsUnknown, "without a processor count (skipped)")
	add(r.SubmitUnknown, "without a submit time (skipped)")
	parts = append(parts, fmt.Sprintf("%d malformed", r.Malformed))
	return strings.Join(parts, ", ")
}

// describe says what was read, for the error about an input without jobs.
func (r *Records) describe(lines int) string {
	skipped := r.RuntimeUnknown + r.CancelledBeforeStart + r.Partial + r.ProcsUnknown + r.SubmitUnknown
	return fmt.Sprintf("%d lines read, %d job records skipped by the SWF rules, %d malformed", lines, skipped, r.Malformed)
}

// What parseSWFJob made of a record.
type swfKind int

const (
	swfPlain swfKind = iota
	swfZero
	swfFromRequest
	swfRuntimeUnknown
	swfCancelledBeforeStart
	swfPartial
	swfProcsUnknown
	swfSubmitUnknown
)

// swfJobRec is a job with the status of its record.
type swfJobRec struct {
	Job
	status int64
}

// timeFields are the SWF fields read as times: fractions are allowed.
var timeFields = [18]bool{1: true, 3: true, 8: true}

// parseSWFJob parses the fields of a job line: the job, its processor
// count (1 ≤ procs ≤ MaxInt), what kind of record it is, and a reason if
// the line is malformed.
func parseSWFJob(n int, f *[18][]byte, intern map[int64]string, strict bool) (swfJobRec, int64, swfKind, string) {
	if n != 18 {
		return swfJobRec{}, 0, 0, fmt.Sprintf("want 18 fields, got %d", n)
	}
	var v [18]int64
	for _, k := range [...]int{2, 4, 5, 8, 9, 11, 12, 15} {
		var x int64
		var reason string
		if timeFields[k-1] {
			x, reason = parseTime(f[k-1])
		} else {
			x, reason = parseInt(f[k-1])
		}
		if reason != "" {
			return swfJobRec{}, 0, 0, fmt.Sprintf("field %d (%s): %s", k, swfFields[k-1], reason)
		}
		v[k-1] = x
	}
	submit, run, alloc, req, reqTime, status, user, queue := v[1], v[3], v[4], v[7], v[8], v[10], v[11], v[14]
	if status < -1 || status > 5 {
		return swfJobRec{}, 0, 0, fmt.Sprintf("field 11 (status): %d is not an SWF status (-1, 0–5)", status)
	}
	procs := req
	if procs <= 0 {
		procs = alloc
	}
	if procs > math.MaxInt {
		return swfJobRec{}, 0, 0, fmt.Sprintf("%d processors is out of range", procs)
	}
	kind := swfPlain
	if strict {
		if run <= 0 {
			return swfJobRec{}, 0, 0, fmt.Sprintf("field 4 (run time): %d is not positive", run)
		}
		if procs <= 0 {
			return swfJobRec{}, 0, 0, fmt.Sprintf("no processor count: field 5 (allocated processors) is %d, field 8 (requested processors) is %d", alloc, req)
		}
	} else {
		switch {
		case status >= 2 && status <= 4:
			return swfJobRec{}, 0, swfPartial, ""
		case status == 5 && (run < 0 || run == 0 && alloc <= 0):
			return swfJobRec{}, 0, swfCancelledBeforeStart, ""
		case submit == -1:
			return swfJobRec{}, 0, swfSubmitUnknown, ""
		case procs <= 0:
			return swfJobRec{}, 0, swfProcsUnknown, ""
		case run < 0 && reqTime > 0:
			run, kind = reqTime, swfFromRequest
		case run < 0:
			return swfJobRec{}, 0, swfRuntimeUnknown, ""
		case run == 0:
			kind = swfZero
		}
	}
	wall := reqTime
	if wall <= 0 {
		wall = max(run, 1)
	}
	return swfJobRec{Job: Job{
		ID:       string(f[0]),
		Submit:   submit,
		Runtime:  run,
		Walltime: wall,
		Queue:    idText(intern, queue),
		User:     idText(intern, user),
	}, status: status}, procs, kind, ""
}

// keepSWF sets job.SWF from the fields of its line, or says why field 3
// is malformed.
func keepSWF(job *swfJobRec, f *[18][]byte) string {
	var v [4]int64
	for i, k := range [...]int{3, 4, 9} {
		x, reason := parseTime(f[k-1])
		if reason != "" {
			return fmt.Sprintf("field %d (%s): %s", k, swfFields[k-1], reason)
		}
		v[i] = max(x, -1)
	}
	job.SWF = &SWFRecord{Wait: v[0], Run: v[1], Request: v[2], Status: job.status}
	if job.SWF.Request == 0 {
		job.SWF.Request = -1
	}
	return ""
}

// parseTime parses an SWF time field: an integer, or a decimal number the
// definition permits for times, rounded to the nearest second.
func parseTime(b []byte) (int64, string) {
	x, reason := parseInt(b)
	if reason == "" || bytes.IndexByte(b, '.') < 0 && bytes.IndexAny(b, "eE") < 0 {
		return x, reason
	}
	fl, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(fl) || math.IsInf(fl, 0) || math.Abs(fl) > 1<<53 {
		return 0, fmt.Sprintf("%s is not a number of seconds", quote(b))
	}
	return int64(math.Round(fl)), ""
}

// idText returns a user or queue number as text, "" when negative
// (unknown), sharing one string per number.
func idText(intern map[int64]string, x int64) string {
	if x < 0 {
		return ""
	}
	s, ok := intern[x]
	if !ok {
		s = strconv.FormatInt(x, 10)
		intern[x] = s
	}
	return s
}

// header parses SWF header lines.
type header struct {
	last  string         // key of the field an indented line would continue
	size  int            // bytes stored
	lines map[string]int // the line each key was first given on
}

// add parses the text of a header line after its ';' into h. "Key: value"
// (a key without blanks, then ':' and a blank or the end) sets a field or
// adds a line to a repeated one; an indented line without a key continues
// the last field; an empty line ends it. add reports false when the header
// would exceed maxHeader bytes.
func (h *header) add(hdr map[string]string, text []byte, line int) bool {
	indented := len(text) > 1 && isSpace(text[0]) && isSpace(text[1])
	text = bytes.TrimSpace(text)
	if len(text) == 0 {
		h.last = ""
		return true
	}
	key, value := "", text
	end := 0
	for end < len(text) && !isSpace(text[end]) {
		end++
	}
	if end > 1 && text[end-1] == ':' && !(indented && h.last != "") {
		key, value = string(text[:end-1]), bytes.TrimSpace(text[end:])
	}
	switch {
	case key != "":
		h.last = key
		if _, ok := h.lines[key]; !ok && h.lines != nil {
			h.lines[key] = line
		}
	case h.last != "":
		key = h.last
	default:
		return true // free text outside any field
	}
	old, ok := hdr[key]
	size := len(value)
	if !ok {
		size += len(key)
	} else if len(old) > 0 {
		size++ // "\n"
	}
	if h.size+size > maxHeader {
		return false
	}
	h.size += size
	switch {
	case !ok || len(old) == 0:
		hdr[key] = string(value)
	case len(value) > 0:
		hdr[key] = old + "\n" + string(value)
	}
	return true
}

// count returns the header field key as a count between 1 and most,
// reading its first word; ok is false when the field is absent or empty.
// Any other value — zero, negative, not a number, above most — is an
// error naming the header line.
func (h *header) count(hdr map[string]string, key string, most int64) (n int64, ok bool, err error) {
	words := strings.Fields(hdr[key])
	if len(words) == 0 {
		return 0, false, nil
	}
	x, perr := strconv.ParseInt(words[0], 10, 64)
	if perr != nil || x < 1 || x > most {
		return 0, false, &LineError{Format: "swf", Line: h.lines[key], Reason: fmt.Sprintf(
			"header %s: %s is not a count between 1 and %d", key, strconv.Quote(words[0]), most)}
	}
	return x, true, nil
}

// truncation says what an unexpected end of a gzip stream means.
type truncation struct{ r io.Reader }

func (t truncation) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = fmt.Errorf("the gzip stream is truncated (the file ends inside its compressed data): %w", err)
	}
	return n, err
}

// Open reads the trace in the file at path. format is "lan" or "swf"; ""
// guesses from the name: ".swf" or ".swf.gz" is SWF, anything else Lan.
// Gzip-compressed files are recognised by their magic bytes (0x1f 0x8b),
// whatever their name. Errors are prefixed with path.
func Open(path, format string, opt Options) (*Trace, error) {
	if format == "" {
		format = "lan"
		if p := strings.ToLower(path); strings.HasSuffix(p, ".swf") || strings.HasSuffix(p, ".swf.gz") {
			format = "swf"
		}
	}
	var read func(io.Reader, Options) (*Trace, error)
	switch strings.ToLower(format) {
	case "lan":
		read = ReadLan
	case "swf":
		read = ReadSWF
	default:
		return nil, fmt.Errorf("trace: unknown format %q (want \"lan\" or \"swf\")", format)
	}
	r, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	t, err := read(r, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// OpenFile opens the file at path for reading, decompressed when it is
// gzip-compressed (recognised by its magic bytes, as Open does); a file
// named .gz that is not is an error. Errors are prefixed with path.
func OpenFile(path string) (io.ReadCloser, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(file, 64<<10)
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		file.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	gz := len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b
	if !gz && strings.HasSuffix(strings.ToLower(path), ".gz") {
		file.Close()
		return nil, fmt.Errorf("%s: named .gz but not gzip-compressed (it does not start with the gzip magic bytes)", path)
	}
	if !gz {
		return readCloser{br, file.Close}, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("%s: gzip: %w", path, err)
	}
	return readCloser{truncation{zr}, func() error { zr.Close(); return file.Close() }}, nil
}

// readCloser is a reader with the close of what it reads from.
type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }
