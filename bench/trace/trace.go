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
	Runtime  int64  // actual run time, s (≥ 1)
	Walltime int64  // requested time, s (≥ 1); SWF does not guarantee ≥ Runtime, kept as read
	Nodes    int    // whole nodes requested (≥ 1)
	Queue    string // SWF queue number as a string, "" when unknown
	User     string // SWF user id as a string, "" when unknown
}

// Trace is a workload read by ReadLan, ReadSWF or Open.
type Trace struct {
	Jobs []Job // sorted by Submit, stable (file order among equal submits)
	// Nodes is the cluster size in nodes when the trace says so (SWF
	// MaxNodes, else ⌈MaxProcs / procs-per-node⌉), else 0.
	Nodes int
	// Header holds the SWF header fields ("; Key: value" lines), e.g.
	// "MaxNodes", "MaxProcs", "Computer", "Installation", "Acknowledge".
	// A repeated key and the indented lines continuing a field are joined
	// to its value with "\n". Nil for Lan traces.
	Header map[string]string
	// Skipped counts the malformed job lines skipped under Options.SkipBad.
	Skipped int
}

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
// non-blank line is a job of 18 whitespace-separated fields, -1 meaning
// unknown:
//
//	1 job number            7 used memory            13 group id
//	2 submit time           8 requested processors   14 executable
//	3 wait time             9 requested time         15 queue number
//	4 run time              10 requested memory      16 partition
//	5 allocated processors  11 status                17 preceding job
//	6 average CPU time      12 user id               18 think time
//
// A Job takes its ID from field 1 as written, Submit from 2, Runtime from 4,
// processors from 8 or, when unknown (≤ 0), from 5, Walltime from 9 or,
// when unknown, the run time, User from 12 and Queue from 15 ("" when
// negative). Nodes = ⌈procs / ProcsPerNode⌉. Fields 2, 4, 5, 8, 9, 12 and
// 15 must be integers; the others are not read, so the fractional values
// some logs carry there are accepted. A line is malformed if it has not 18
// fields, a field read is not an integer, the run time is ≤ 0, or neither
// processor count is > 0.
//
// Jobs are sorted by submit time. SWF submit times are already relative to
// the log's start and are kept; if one is negative all are shifted to make
// the earliest 0.
func ReadSWF(r io.Reader, opt Options) (*Trace, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	t := &Trace{Header: map[string]string{}}
	lr := newLineReader(r, "swf")
	var (
		f      [18][]byte
		procs  []int64 // per job, in file order
		hdr    header
		intern = map[int64]string{} // user and queue numbers as text
	)
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		text := bytes.TrimLeft(line, " \t\r\v\f")
		if len(text) > 0 && text[0] == ';' {
			if !hdr.add(t.Header, text[1:]) {
				return nil, &LineError{Format: "swf", Line: lr.n, Reason: "header longer than 1 MiB"}
			}
			continue
		}
		hdr.last = "" // a job line ends a header field
		n := splitFields(line, f[:])
		if n == 0 {
			continue
		}
		job, p, reason := parseSWFJob(n, &f, intern)
		if reason != "" {
			if opt.SkipBad {
				t.Skipped++
				continue
			}
			return nil, &LineError{Format: "swf", Line: lr.n, Reason: reason}
		}
		t.Jobs = appendJob(t.Jobs, job)
		procs = append(procs, p)
		if opt.MaxJobs > 0 && len(t.Jobs) >= opt.MaxJobs {
			break
		}
	}
	if lr.err != nil {
		return nil, lr.err
	}

	// Header lines may follow job lines, so nodes are counted at the end.
	maxNodes, okNodes := headerInt(t.Header, "MaxNodes")
	maxProcs, okProcs := headerInt(t.Header, "MaxProcs")
	ppn := int64(opt.ProcsPerNode)
	if ppn == 0 {
		ppn = 1
		if okNodes && okProcs {
			ppn = ceilDiv(maxProcs, maxNodes)
		}
	}
	switch {
	case okNodes:
		t.Nodes = int(maxNodes)
	case okProcs:
		t.Nodes = int(ceilDiv(maxProcs, ppn))
	}
	for i := range t.Jobs {
		t.Jobs[i].Nodes = int(ceilDiv(procs[i], ppn)) // ≤ procs ≤ MaxInt
	}
	if err := finish(t, "swf"); err != nil {
		return nil, err
	}
	return t, nil
}

// parseSWFJob parses the fields of a job line and returns the job, its
// processor count (1 ≤ procs ≤ MaxInt), and a reason if it is malformed.
func parseSWFJob(n int, f *[18][]byte, intern map[int64]string) (Job, int64, string) {
	if n != 18 {
		return Job{}, 0, fmt.Sprintf("want 18 fields, got %d", n)
	}
	var v [18]int64
	for _, k := range [...]int{2, 4, 5, 8, 9, 12, 15} {
		x, reason := parseInt(f[k-1])
		if reason != "" {
			return Job{}, 0, fmt.Sprintf("field %d (%s): %s", k, swfFields[k-1], reason)
		}
		v[k-1] = x
	}
	submit, run, alloc, req, reqTime, user, queue := v[1], v[3], v[4], v[7], v[8], v[11], v[14]
	if run <= 0 {
		return Job{}, 0, fmt.Sprintf("field 4 (run time): %d is not positive", run)
	}
	procs := req
	if procs <= 0 {
		procs = alloc
	}
	if procs <= 0 {
		return Job{}, 0, fmt.Sprintf("no processor count: field 5 (allocated processors) is %d, field 8 (requested processors) is %d", alloc, req)
	}
	if procs > math.MaxInt {
		return Job{}, 0, fmt.Sprintf("%d processors is out of range", procs)
	}
	wall := reqTime
	if wall <= 0 {
		wall = run
	}
	return Job{
		ID:       string(f[0]),
		Submit:   submit,
		Runtime:  run,
		Walltime: wall,
		Queue:    idText(intern, queue),
		User:     idText(intern, user),
	}, procs, ""
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
	last string // key of the field an indented line would continue
	size int    // bytes stored
}

// add parses the text of a header line after its ';' into h. "Key: value"
// (a key without blanks, then ':' and a blank or the end) sets a field or
// adds a line to a repeated one; an indented line without a key continues
// the last field; an empty line ends it. add reports false when the header
// would exceed maxHeader bytes.
func (h *header) add(hdr map[string]string, text []byte) bool {
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

// headerInt returns the header field key as a positive int, reading its
// first word.
func headerInt(hdr map[string]string, key string) (int64, bool) {
	words := strings.Fields(hdr[key])
	if len(words) == 0 {
		return 0, false
	}
	x, err := strconv.ParseInt(words[0], 10, 64)
	if err != nil || x < 1 || x > math.MaxInt {
		return 0, false
	}
	return x, true
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
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	br := bufio.NewReaderSize(file, 64<<10)
	var r io.Reader = br
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	t, err := read(r, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}
