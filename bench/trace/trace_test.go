package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The traces the repository ships (instances/traces).
var (
	lanPath = filepath.Join("..", "..", "instances", "traces", "lan2023_trace_1800_40.txt.gz")
	kthPath = filepath.Join("..", "..", "instances", "traces", "KTH-SP2-1996-2.1-cln.swf.gz")
)

// kthHeader is the head of the KTH SP2 log from the Parallel Workloads
// Archive (11 lines), with its continuation line and empty ';' lines.
const kthHeader = `; Version: 2.2
; Computer: IBM SP2
; Installation: Swedish Royal Institute of Technology (KTH)
; Acknowledge: Lars Malinowsky
; Information: http://www.pdc.kth.se/
;              http://www.cs.huji.ac.il/labs/parallel/workload/
; MaxNodes: 100
; MaxProcs: 100
; Note: uses the EASY scheduler
;
;
`

// Three job lines of the KTH log, as written there.
const (
	kth15 = "   15   599850 192180   3477    4     -1    -1    4  53940    -1  1  12  12  -1 -1 -1 -1 -1\n"
	kth16 = "   16   600022  11940   2488   25     -1    -1   25   3600    -1  1  13  13  -1 -1 -1 -1 -1\n"
	kth17 = "   17   600476 364560 215337    5     -1    -1    5 215400    -1  0  14  14  -1 -1 -1 -1 -1\n"
)

// swfJob writes an SWF job line from the fields the reader uses; the others
// are -1.
func swfJob(id, submit, run, alloc, req, reqTime, user, queue string) string {
	return swfRec(id, submit, run, alloc, req, reqTime, "1", user, queue)
}

// swfRec is swfJob with a status (field 11).
func swfRec(id, submit, run, alloc, req, reqTime, status, user, queue string) string {
	f := []string{id, submit, "-1", run, alloc, "-1", "-1", req, reqTime, "-1", status, user, "-1", "-1", queue, "-1", "-1", "-1"}
	return strings.Join(f, " ") + "\n"
}

type readCase struct {
	name        string
	in          string
	opt         Options
	want        []Job             // nil: not checked
	wantNodes   int               // Trace.Nodes
	wantSkipped int               // Trace.Skipped
	wantRecords *Records          // Trace.Records, when set
	wantFrom    string            // Trace.NodesFrom, when set
	wantHeader  map[string]string // a subset of Trace.Header
	wantErr     string            // the exact error, "" for success
	wantLine    int               // LineError.Line when wantErr is a line error
}

var swfCases = []readCase{
	{
		// Regression for the reader's basic contract on the archive's own
		// layout: a continuation line, blank ';' lines, padded fields.
		name: "kth",
		in:   kthHeader + kth15 + kth16 + kth17,
		want: []Job{
			{ID: "15", Submit: 599850, Runtime: 3477, Walltime: 53940, Nodes: 4, User: "12"},
			{ID: "16", Submit: 600022, Runtime: 2488, Walltime: 3600, Nodes: 25, User: "13"},
			{ID: "17", Submit: 600476, Runtime: 215337, Walltime: 215400, Nodes: 5, User: "14"},
		},
		wantNodes: 100,
		wantHeader: map[string]string{
			"Version":     "2.2",
			"Computer":    "IBM SP2",
			"MaxNodes":    "100",
			"MaxProcs":    "100",
			"Acknowledge": "Lars Malinowsky",
			"Information": "http://www.pdc.kth.se/\nhttp://www.cs.huji.ac.il/labs/parallel/workload/",
			"Note":        "uses the EASY scheduler",
		},
	},
	{
		name: "fallbacks for -1 and 0",
		in: swfJob("1", "0", "100", "8", "-1", "-1", "-1", "3") + // requested procs and time unknown
			swfJob("2", "5", "100", "8", "0", "0", "7", "-1") + // zero requests count as unknown
			swfJob("3", "9", "100", "-1", "6", "50", "7", "0"), // allocated unknown; walltime < runtime kept
		want: []Job{
			{ID: "1", Submit: 0, Runtime: 100, Walltime: 100, Nodes: 8, Queue: "3"},
			{ID: "2", Submit: 5, Runtime: 100, Walltime: 100, Nodes: 8, User: "7"},
			{ID: "3", Submit: 9, Runtime: 100, Walltime: 50, Nodes: 6, Queue: "0", User: "7"},
		},
		wantNodes: 8, wantFrom: "largest job",
	},
	{
		name: "procs per node from the header",
		in: "; MaxNodes: 100\n; MaxProcs: 400\n" +
			swfJob("1", "0", "1", "10", "10", "60", "1", "1") +
			swfJob("2", "0", "1", "4", "4", "60", "1", "1"),
		want: []Job{
			{ID: "1", Runtime: 1, Walltime: 60, Nodes: 3, Queue: "1", User: "1"},
			{ID: "2", Runtime: 1, Walltime: 60, Nodes: 1, Queue: "1", User: "1"},
		},
		wantNodes: 100,
	},
	{
		// ⌈10/3⌉ = 4 procs per node keeps a MaxProcs job within MaxNodes.
		name:      "uneven header rounds procs per node up",
		in:        "; MaxNodes: 3\n; MaxProcs: 10\n" + swfJob("1", "0", "1", "10", "-1", "-1", "-1", "-1"),
		want:      []Job{{ID: "1", Runtime: 1, Walltime: 1, Nodes: 3}},
		wantNodes: 3,
	},
	{
		name:      "explicit procs per node overrides the header",
		in:        "; MaxNodes: 100\n; MaxProcs: 400\n" + swfJob("1", "0", "1", "10", "-1", "-1", "-1", "-1"),
		opt:       Options{ProcsPerNode: 2},
		want:      []Job{{ID: "1", Runtime: 1, Walltime: 1, Nodes: 5}},
		wantNodes: 100,
	},
	{
		name:      "MaxProcs alone gives the cluster size",
		in:        "; MaxProcs: 64\n" + swfJob("1", "0", "1", "9", "-1", "-1", "-1", "-1"),
		opt:       Options{ProcsPerNode: 8},
		want:      []Job{{ID: "1", Runtime: 1, Walltime: 1, Nodes: 2}},
		wantNodes: 8,
	},
	{
		name:      "no header: one processor per node, the largest job sizes the cluster",
		in:        swfJob("1", "0", "1", "5", "-1", "-1", "-1", "-1") + swfJob("2", "0", "1", "3", "-1", "-1", "-1", "-1"),
		want:      []Job{{ID: "1", Runtime: 1, Walltime: 1, Nodes: 5}, {ID: "2", Runtime: 1, Walltime: 1, Nodes: 3}},
		wantNodes: 5, wantFrom: "largest job",
	},
	{
		name:      "header after the jobs still applies",
		in:        swfJob("1", "0", "1", "8", "-1", "-1", "-1", "-1") + "; MaxNodes: 4\n; MaxProcs: 16\n",
		want:      []Job{{ID: "1", Runtime: 1, Walltime: 1, Nodes: 2}},
		wantNodes: 4,
	},
	{
		name: "sorted by submit, stable",
		in: swfJob("a", "30", "1", "1", "-1", "-1", "-1", "-1") +
			swfJob("b", "10", "1", "1", "-1", "-1", "-1", "-1") +
			swfJob("c", "20", "1", "1", "-1", "-1", "-1", "-1") +
			swfJob("d", "10", "1", "1", "-1", "-1", "-1", "-1"),
		want: []Job{
			{ID: "b", Submit: 10, Runtime: 1, Walltime: 1, Nodes: 1},
			{ID: "d", Submit: 10, Runtime: 1, Walltime: 1, Nodes: 1},
			{ID: "c", Submit: 20, Runtime: 1, Walltime: 1, Nodes: 1},
			{ID: "a", Submit: 30, Runtime: 1, Walltime: 1, Nodes: 1},
		},
		wantNodes: 1,
	},
	{
		name: "negative submit shifts the trace to start at 0",
		in: swfJob("1", "10", "1", "1", "-1", "-1", "-1", "-1") +
			swfJob("2", "-5", "1", "1", "-1", "-1", "-1", "-1"),
		want: []Job{
			{ID: "2", Submit: 0, Runtime: 1, Walltime: 1, Nodes: 1},
			{ID: "1", Submit: 15, Runtime: 1, Walltime: 1, Nodes: 1},
		},
		wantNodes: 1,
	},
	{
		name: "MaxJobs keeps the first jobs of the file",
		in:   kthHeader + kth17 + kth16 + kth15,
		opt:  Options{MaxJobs: 2},
		want: []Job{
			{ID: "16", Submit: 600022, Runtime: 2488, Walltime: 3600, Nodes: 25, User: "13"},
			{ID: "17", Submit: 600476, Runtime: 215337, Walltime: 215400, Nodes: 5, User: "14"},
		},
		wantNodes: 100,
	},
	{
		name:      "CRLF, tabs and fractional unread fields",
		in:        "; MaxNodes: 10\r\n1\t0\t-1\t7\t2\t12.5\t3.25\t-1\t-1\t-1\t1\t4\t4\t-1\t1\t-1\t-1\t-1\r\n",
		want:      []Job{{ID: "1", Runtime: 7, Walltime: 7, Nodes: 2, Queue: "1", User: "4"}},
		wantNodes: 10,
	},
	{
		name:    "empty input",
		in:      "",
		wantErr: "swf: no jobs in the input (0 lines read, 0 job records skipped by the SWF rules, 0 malformed)",
	},
	{
		name: "empty input allowed",
		in:   "; MaxNodes: 4\n",
		opt:  Options{AllowEmpty: true},
		want: []Job{}, wantNodes: 4,
	},
	{
		name:    "only records the rules skip",
		in:      swfRec("1", "0", "-1", "-1", "4", "-1", "5", "-1", "-1") + swfRec("2", "0", "10", "4", "4", "60", "2", "-1", "-1"),
		wantErr: "swf: no jobs in the input (2 lines read, 2 job records skipped by the SWF rules, 0 malformed)",
	},
	{
		// The definition's records: run time 0 and -1, failed, cancelled
		// before and after starting, the parts of a checkpointed job
		// after its summary line, unknown processors and submit time.
		name: "the SWF rules",
		in: "; MaxNodes: 16\n" +
			swfRec("1", "0", "0", "4", "4", "60", "1", "-1", "-1") + // ran < 0.5 s
			swfRec("2", "1", "-1", "4", "4", "60", "1", "-1", "-1") + // run time unknown: requested time
			swfRec("3", "2", "-1", "4", "4", "-1", "1", "-1", "-1") + // neither: skipped
			swfRec("4", "3", "30", "4", "4", "60", "0", "-1", "-1") + // failed: ran 30 s
			swfRec("5", "4", "-1", "-1", "4", "60", "5", "-1", "-1") + // cancelled before start
			swfRec("6", "5", "0", "-1", "4", "60", "5", "-1", "-1") + // cancelled, nothing allocated
			swfRec("7", "6", "20", "4", "4", "60", "5", "-1", "-1") + // cancelled after 20 s
			swfRec("8", "7", "50", "4", "4", "60", "1", "-1", "-1") + // a checkpointed job's summary
			swfRec("8", "7", "20", "4", "4", "60", "2", "-1", "-1") + // its parts
			swfRec("8", "7", "30", "4", "4", "60", "3", "-1", "-1") +
			swfRec("9", "8", "10", "-1", "-1", "60", "1", "-1", "-1") + // no processor count
			swfRec("10", "-1", "10", "4", "4", "60", "1", "-1", "-1") + // no submit time
			swfRec("11", "9", "10", "4", "4", "60", "-1", "-1", "-1"), // status unknown (a model)
		want: []Job{
			{ID: "1", Submit: 0, Runtime: 0, Walltime: 60, Nodes: 4},
			{ID: "2", Submit: 1, Runtime: 60, Walltime: 60, Nodes: 4},
			{ID: "4", Submit: 3, Runtime: 30, Walltime: 60, Nodes: 4},
			{ID: "7", Submit: 6, Runtime: 20, Walltime: 60, Nodes: 4},
			{ID: "8", Submit: 7, Runtime: 50, Walltime: 60, Nodes: 4},
			{ID: "11", Submit: 9, Runtime: 10, Walltime: 60, Nodes: 4},
		},
		wantNodes: 16, wantFrom: "MaxNodes",
		wantRecords: &Records{Jobs: 6, ZeroRuntime: 1, RuntimeFromRequest: 1, Cancelled: 1, Failed: 1,
			RuntimeUnknown: 1, CancelledBeforeStart: 2, Partial: 2, ProcsUnknown: 1, SubmitUnknown: 1},
	},
	{
		name:     "status outside the definition",
		in:       swfRec("1", "0", "10", "4", "4", "60", "7", "-1", "-1"),
		wantErr:  "swf line 1: field 11 (status): 7 is not an SWF status (-1, 0–5)",
		wantLine: 1,
	},
	{
		name:     "Strict: run time 0 is malformed",
		in:       swfJob("1", "0", "0", "4", "4", "60", "-1", "-1"),
		opt:      Options{Strict: true},
		wantErr:  "swf line 1: field 4 (run time): 0 is not positive",
		wantLine: 1,
	},
	{
		name:     "Strict: run time -1 is malformed",
		in:       swfJob("1", "0", "-1", "4", "4", "60", "-1", "-1"),
		opt:      Options{Strict: true},
		wantErr:  "swf line 1: field 4 (run time): -1 is not positive",
		wantLine: 1,
	},
	{
		name:     "Strict: no processor count is malformed",
		in:       swfJob("1", "0", "10", "-1", "0", "60", "-1", "-1"),
		opt:      Options{Strict: true},
		wantErr:  "swf line 1: no processor count: field 5 (allocated processors) is -1, field 8 (requested processors) is 0",
		wantLine: 1,
	},
	{
		name:     "header MaxNodes 0",
		in:       "; Version: 2.2\n; MaxNodes: 0\n" + swfJob("1", "0", "10", "4", "4", "60", "-1", "-1"),
		wantErr:  `swf line 2: header MaxNodes: "0" is not a count between 1 and 1048576`,
		wantLine: 2,
	},
	{
		name:     "header MaxNodes negative",
		in:       "; MaxNodes: -5\n" + swfJob("1", "0", "10", "4", "4", "60", "-1", "-1"),
		wantErr:  `swf line 1: header MaxNodes: "-5" is not a count between 1 and 1048576`,
		wantLine: 1,
	},
	{
		name:     "header MaxNodes absurd",
		in:       swfJob("1", "0", "10", "4", "4", "60", "-1", "-1") + "; MaxNodes: 1000000000\n",
		wantErr:  `swf line 2: header MaxNodes: "1000000000" is not a count between 1 and 1048576`,
		wantLine: 2,
	},
	{
		name:     "header MaxProcs not a number",
		in:       "; MaxProcs: many\n" + swfJob("1", "0", "10", "4", "4", "60", "-1", "-1"),
		wantErr:  `swf line 1: header MaxProcs: "many" is not a count between 1 and 9223372036854775807`,
		wantLine: 1,
	},
	{
		name:     "header MaxProcs beyond the largest cluster",
		in:       "; MaxProcs: 4000000\n" + swfJob("1", "0", "10", "4", "4", "60", "-1", "-1"),
		opt:      Options{ProcsPerNode: 2},
		wantErr:  "swf line 1: header MaxProcs: 4000000 processors at 2 a node are 2000000 nodes, more than the 1048576 optsched simulates",
		wantLine: 1,
	},
	{
		name:      "fractional times are rounded",
		in:        swfJob("1", "1.5", "99.4", "4", "4", "60.6", "-1", "-1"),
		want:      []Job{{ID: "1", Submit: 2, Runtime: 99, Walltime: 61, Nodes: 4}},
		wantNodes: 4,
	},
	{
		name:     "wrong field count",
		in:       kth15 + "16 600022 11940 2488 25 -1 -1 25 3600 -1 1 13 13 -1 -1 -1 -1\n",
		wantErr:  "swf line 2: want 18 fields, got 17",
		wantLine: 2,
	},
	{
		// The bad line is line 12: 11 header lines precede it.
		name:     "non-integer allocated processors",
		in:       kthHeader + swfJob("15", "599850", "3477", "x", "4", "53940", "12", "-1"),
		wantErr:  `swf line 12: field 5 (allocated processors): "x" is not an integer`,
		wantLine: 12,
	},
	{
		name:     "non-numeric submit time",
		in:       swfJob("1", "1.5s", "1", "1", "-1", "-1", "-1", "-1"),
		wantErr:  `swf line 1: field 2 (submit time): "1.5s" is not a number of seconds`,
		wantLine: 1,
	},
	{
		name:     "out of range",
		in:       swfJob("1", "0", "99999999999999999999", "1", "-1", "-1", "-1", "-1"),
		wantErr:  `swf line 1: field 4 (run time): "99999999999999999999" is out of range`,
		wantLine: 1,
	},
	{
		name: "SkipBad counts and drops malformed lines",
		in: kthHeader + kth15 +
			"garbage\n" +
			swfJob("a", "0", "0", "4", "4", "60", "-1", "-1") +
			swfJob("b", "0", "10", "-1", "-1", "60", "-1", "-1") +
			swfJob("c", "x", "10", "1", "1", "60", "-1", "-1") +
			kth16,
		opt: Options{SkipBad: true},
		want: []Job{
			{ID: "a", Submit: 0, Runtime: 0, Walltime: 60, Nodes: 4}, // run time 0 is legal
			{ID: "15", Submit: 599850, Runtime: 3477, Walltime: 53940, Nodes: 4, User: "12"},
			{ID: "16", Submit: 600022, Runtime: 2488, Walltime: 3600, Nodes: 25, User: "13"},
		},
		wantNodes:   100,
		wantSkipped: 2, // garbage and "x": b has no processor count, which the rules skip
		wantRecords: &Records{Jobs: 3, ZeroRuntime: 1, ProcsUnknown: 1, Malformed: 2},
	},
	{
		name:     "line longer than 1 MiB fails even with SkipBad",
		in:       kth15 + strings.Repeat(" ", MaxLine+1) + "\n" + kth16,
		opt:      Options{SkipBad: true},
		wantErr:  "swf line 2: line longer than 1 MiB",
		wantLine: 2,
	},
	{
		name:     "unterminated line longer than 1 MiB",
		in:       kth15 + strings.Repeat("1", 3*MaxLine),
		wantErr:  "swf line 2: line longer than 1 MiB",
		wantLine: 2,
	},
	{
		name:     "header longer than 1 MiB",
		in:       strings.Repeat("; Note: "+strings.Repeat("n", 1000)+"\n", 1100),
		wantErr:  "swf line 1048: header longer than 1 MiB",
		wantLine: 1048, // 4+1000 bytes, then 1+1000 per line
	},
	{
		name:    "negative MaxJobs",
		in:      kth15,
		opt:     Options{MaxJobs: -1},
		wantErr: "trace: Options.MaxJobs -1 is negative",
	},
	{
		name:    "negative ProcsPerNode",
		in:      kth15,
		opt:     Options{ProcsPerNode: -4},
		wantErr: "trace: Options.ProcsPerNode -4 is negative",
	},
}

var lanCases = []readCase{
	{
		name: "lines, comments and blanks",
		in: "# id arrival runtime nodes\n" +
			"1  25  1386  10\n" +
			"\n" +
			"2  39  450  4   # trailing comment\n" +
			"\t3\t45\t1091\t25\r\n",
		want: []Job{
			{ID: "1", Submit: 25, Runtime: 1386, Walltime: 1386, Nodes: 10},
			{ID: "2", Submit: 39, Runtime: 450, Walltime: 450, Nodes: 4},
			{ID: "3", Submit: 45, Runtime: 1091, Walltime: 1091, Nodes: 25},
		},
	},
	{
		name: "sorted by arrival, stable",
		in:   "a 30 1 1\nb 10 1 1\nc 20 1 1\nd 10 1 1\n",
		want: []Job{
			{ID: "b", Submit: 10, Runtime: 1, Walltime: 1, Nodes: 1},
			{ID: "d", Submit: 10, Runtime: 1, Walltime: 1, Nodes: 1},
			{ID: "c", Submit: 20, Runtime: 1, Walltime: 1, Nodes: 1},
			{ID: "a", Submit: 30, Runtime: 1, Walltime: 1, Nodes: 1},
		},
	},
	{
		name: "negative arrival shifts the trace to start at 0",
		in:   "1 10 5 1\n2 -5 5 1\n",
		want: []Job{
			{ID: "2", Submit: 0, Runtime: 5, Walltime: 5, Nodes: 1},
			{ID: "1", Submit: 15, Runtime: 5, Walltime: 5, Nodes: 1},
		},
	},
	{
		name: "MaxJobs",
		in:   "1 25 1386 10\n2 39 450 4\n3 45 1091 25\n",
		opt:  Options{MaxJobs: 2},
		want: []Job{
			{ID: "1", Submit: 25, Runtime: 1386, Walltime: 1386, Nodes: 10},
			{ID: "2", Submit: 39, Runtime: 450, Walltime: 450, Nodes: 4},
		},
	},
	{
		name:    "only comments",
		in:      "# nothing\n\n   \n",
		wantErr: "lan: no jobs in the input (3 lines read, 0 malformed)",
	},
	{
		name: "only comments, allowed",
		in:   "# nothing\n\n   \n",
		opt:  Options{AllowEmpty: true},
		want: []Job{},
	},
	{
		name:     "too few fields",
		in:       "1 25 1386 10\n2 39 450 4\n3 45\n",
		wantErr:  "lan line 3: want 4 fields (id arrival runtime nodes), got 2",
		wantLine: 3,
	},
	{
		name:     "too many fields",
		in:       "1 25 1386 10 7\n",
		wantErr:  "lan line 1: want 4 fields (id arrival runtime nodes), got 5",
		wantLine: 1,
	},
	{
		name:     "non-integer runtime",
		in:       "1 25 1.5 10\n",
		wantErr:  `lan line 1: field 3 (runtime): "1.5" is not an integer`,
		wantLine: 1,
	},
	{
		name:     "non-integer arrival",
		in:       "1 x 15 10\n",
		wantErr:  `lan line 1: field 2 (arrival): "x" is not an integer`,
		wantLine: 1,
	},
	{
		name:     "zero runtime",
		in:       "1 25 0 10\n",
		wantErr:  "lan line 1: field 3 (runtime): 0 is not positive",
		wantLine: 1,
	},
	{
		name:     "zero nodes",
		in:       "# header\n1 25 10 0\n",
		wantErr:  "lan line 2: field 4 (nodes): 0 is not positive",
		wantLine: 2,
	},
	{
		name:     "long field is quoted short",
		in:       "1 25 " + strings.Repeat("9", 100) + " 1\n",
		wantErr:  `lan line 1: field 3 (runtime): "` + strings.Repeat("9", 40) + `"… is out of range`,
		wantLine: 1,
	},
	{
		name:        "SkipBad",
		in:          "1 25 1386 10\n2 39\n3 45 0 25\n4 x 1 1\n5 50 1 0\n6 60 7 3\n",
		opt:         Options{SkipBad: true},
		want:        []Job{{ID: "1", Submit: 25, Runtime: 1386, Walltime: 1386, Nodes: 10}, {ID: "6", Submit: 60, Runtime: 7, Walltime: 7, Nodes: 3}},
		wantSkipped: 4,
	},
	{
		name:     "line longer than 1 MiB",
		in:       "1 25 1386 10\n#" + strings.Repeat("#", MaxLine) + "\n",
		opt:      Options{SkipBad: true},
		wantErr:  "lan line 2: line longer than 1 MiB",
		wantLine: 2,
	},
	{
		name:    "submit span beyond int64",
		in:      "1 -9223372036854775808 1 1\n2 9223372036854775807 1 1\n",
		wantErr: "lan: submit times span -9223372036854775808 to 9223372036854775807, more than an int64 holds",
	},
	{
		name: "a line of exactly 1 MiB is fine",
		in:   "1 25 1386 10" + strings.Repeat(" ", MaxLine-12) + "\r\n",
		want: []Job{{ID: "1", Submit: 25, Runtime: 1386, Walltime: 1386, Nodes: 10}},
	},
}

func runCases(t *testing.T, read func(in string, opt Options) (*Trace, error), cases []readCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := read(c.in, c.opt)
			if c.wantErr != "" {
				if err == nil {
					t.Fatalf("got %d jobs, want error %q", len(tr.Jobs), c.wantErr)
				}
				if err.Error() != c.wantErr {
					t.Fatalf("error\n got %q\nwant %q", err, c.wantErr)
				}
				var le *LineError
				if errors.As(err, &le) != (c.wantLine > 0) || (le != nil && le.Line != c.wantLine) {
					t.Fatalf("error %#v: want a LineError at line %d", err, c.wantLine)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := checkTrace(tr, c.opt); err != nil {
				t.Fatal(err)
			}
			if c.want != nil && !reflect.DeepEqual(tr.Jobs, c.want) && !(len(tr.Jobs) == 0 && len(c.want) == 0) {
				t.Errorf("jobs\n got %+v\nwant %+v", tr.Jobs, c.want)
			}
			if tr.Nodes != c.wantNodes {
				t.Errorf("Nodes = %d, want %d", tr.Nodes, c.wantNodes)
			}
			if tr.Skipped != c.wantSkipped {
				t.Errorf("Skipped = %d, want %d", tr.Skipped, c.wantSkipped)
			}
			if c.wantRecords != nil && tr.Records != *c.wantRecords {
				t.Errorf("Records\n got %+v\nwant %+v", tr.Records, *c.wantRecords)
			}
			if c.wantFrom != "" && tr.NodesFrom != c.wantFrom {
				t.Errorf("NodesFrom = %q, want %q", tr.NodesFrom, c.wantFrom)
			}
			for k, v := range c.wantHeader {
				if got := tr.Header[k]; got != v {
					t.Errorf("Header[%q] = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestReadSWF(t *testing.T) {
	runCases(t, func(in string, opt Options) (*Trace, error) {
		return ReadSWF(strings.NewReader(in), opt)
	}, swfCases)
}

func TestReadLan(t *testing.T) {
	runCases(t, func(in string, opt Options) (*Trace, error) {
		tr, err := ReadLan(strings.NewReader(in), opt)
		if err == nil && tr.Header != nil {
			t.Errorf("Lan trace has a header %v", tr.Header)
		}
		return tr, err
	}, lanCases)
}

// checkTrace checks the guarantees of every Trace a reader returns; it
// shares no code with the readers.
func checkTrace(tr *Trace, opt Options) error {
	if tr == nil {
		return errors.New("nil trace without an error")
	}
	if opt.MaxJobs > 0 && len(tr.Jobs) > opt.MaxJobs {
		return fmt.Errorf("%d jobs, MaxJobs %d", len(tr.Jobs), opt.MaxJobs)
	}
	if tr.Skipped < 0 || (!opt.SkipBad && tr.Skipped != 0) {
		return fmt.Errorf("Skipped = %d with SkipBad %v", tr.Skipped, opt.SkipBad)
	}
	if tr.Nodes < 0 {
		return fmt.Errorf("Nodes = %d", tr.Nodes)
	}
	for i, j := range tr.Jobs {
		switch {
		case j.Nodes < 1:
			return fmt.Errorf("job %d (%q): Nodes = %d", i, j.ID, j.Nodes)
		case j.Runtime < 0:
			return fmt.Errorf("job %d (%q): Runtime = %d", i, j.ID, j.Runtime)
		case j.Walltime < 1:
			return fmt.Errorf("job %d (%q): Walltime = %d", i, j.ID, j.Walltime)
		case j.Submit < 0:
			return fmt.Errorf("job %d (%q): Submit = %d", i, j.ID, j.Submit)
		case i > 0 && j.Submit < tr.Jobs[i-1].Submit:
			return fmt.Errorf("job %d (%q): Submit %d before job %d's %d", i, j.ID, j.Submit, i-1, tr.Jobs[i-1].Submit)
		}
	}
	return nil
}

func writeFile(t *testing.T, name string, data []byte, gz bool) string {
	t.Helper()
	if gz {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		data = b.Bytes()
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpen(t *testing.T) {
	swf := kthHeader + kth17 + kth15 + kth16
	lan := "3 45 1091 25\n1 25 1386 10\n2 39 450 4\n"
	wantSWF, err := ReadSWF(strings.NewReader(swf), Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantLan, err := ReadLan(strings.NewReader(lan), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, file, format string
		data               string
		gz                 bool
		want               *Trace
	}{
		{"swf.gz by name", "kth.swf.gz", "", swf, true, wantSWF},
		{"swf by name", "kth.SWF", "", swf, false, wantSWF},
		{"gzip detected in a .swf", "kth.swf", "", swf, true, wantSWF},
		{"lan plain", "trace.txt", "", lan, false, wantLan},
		{"lan gzip without .gz", "trace.txt", "", lan, true, wantLan},
		{"lan .txt.gz", "trace.txt.gz", "lan", lan, true, wantLan},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, c.file, []byte(c.data), c.gz)
			got, err := Open(path, c.format, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing.swf"), "", Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v, want os.ErrNotExist", err)
	}
	path := writeFile(t, "x.txt", []byte("1 2 3 4\n"), false)
	if _, err := Open(path, "csv", Options{}); err == nil || err.Error() != `trace: unknown format "csv" (want "lan" or "swf")` {
		t.Errorf("unknown format: got %v", err)
	}

	// A parse error names the file, the line and the reason.
	path = writeFile(t, "bad.txt", []byte("1 25 1386 10\n2 39\n"), true)
	_, err := Open(path, "", Options{})
	if want := path + ": lan line 2: want 4 fields (id arrival runtime nodes), got 2"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}

	// A truncated gzip stream is a read error at the line being read.
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(strings.Repeat("1 25 1386 10\n", 1000)))
	w.Close()
	path = writeFile(t, "cut.gz", b.Bytes()[:b.Len()/2], false)
	_, err = Open(path, "lan", Options{})
	var le *LineError
	if !errors.As(err, &le) || !strings.Contains(le.Reason, "read: ") || le.Err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated gzip: got %v, want a read LineError saying the stream is truncated", err)
	}

	// Cut inside a job line of an SWF log, the error is the truncation,
	// not the fragment's field count.
	b.Reset()
	w = gzip.NewWriter(&b)
	for i := range 3000 {
		w.Write([]byte(swfJob(fmt.Sprint(i+1), fmt.Sprint(i*37%100003), fmt.Sprint(i*i%9973+1), fmt.Sprint(i%64+1), "-1", "-1", "-1", "-1")))
	}
	w.Close()
	for _, cut := range []int{b.Len() / 3, b.Len() / 2, b.Len() - 9} {
		path = writeFile(t, "cut.swf.gz", b.Bytes()[:cut], false)
		_, err = Open(path, "", Options{})
		if err == nil || !strings.Contains(err.Error(), "gzip stream is truncated") || strings.Contains(err.Error(), "fields") {
			t.Errorf("SWF cut at %d of %d bytes: got %v", cut, b.Len(), err)
		}
	}

	// A file named .gz must be gzip; gzip is recognised by its content.
	path = writeFile(t, "plain.swf.gz", []byte(swfJob("1", "0", "1", "1", "-1", "-1", "-1", "-1")), false)
	if _, err := Open(path, "", Options{}); err == nil || !strings.Contains(err.Error(), "named .gz but not gzip-compressed") {
		t.Errorf("plain text named .gz: got %v", err)
	}

	// An input without jobs is an error that says what was read, unless
	// allowed.
	path = writeFile(t, "empty.swf", []byte("; MaxNodes: 8\n"), false)
	if _, err := Open(path, "", Options{}); err == nil || !strings.Contains(err.Error(), "no jobs in the input") {
		t.Errorf("empty log: got %v", err)
	}
	if tr, err := Open(path, "", Options{AllowEmpty: true}); err != nil || len(tr.Jobs) != 0 || tr.Nodes != 8 {
		t.Errorf("empty log allowed: %v, %+v", err, tr)
	}
	path = writeFile(t, "magic.gz", []byte{0x1f, 0x8b, 0}, false)
	if _, err := Open(path, "lan", Options{}); err == nil {
		t.Error("bad gzip header: no error")
	}
}

func TestLanSharedTrace(t *testing.T) {
	if _, err := os.Stat(lanPath); err != nil {
		t.Fatalf("the trace the repository ships (instances/traces) cannot be read: %v", err)
	}
	tr, err := Open(lanPath, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkTrace(tr, Options{}); err != nil {
		t.Fatal(err)
	}
	if len(tr.Jobs) != 100000 || tr.Skipped != 0 || tr.Nodes != 0 {
		t.Fatalf("%d jobs, %d skipped, Nodes %d; want 100000, 0, 0", len(tr.Jobs), tr.Skipped, tr.Nodes)
	}
	for i, j := range tr.Jobs {
		if i > 0 {
			if gap := j.Submit - tr.Jobs[i-1].Submit; gap < 5 || gap > 30 {
				t.Fatalf("job %s: arrival gap %d outside [5,30]", j.ID, gap)
			}
		}
		if j.Runtime < 10 || j.Runtime > 1800 || j.Walltime != j.Runtime {
			t.Fatalf("job %s: runtime %d, walltime %d; want 10..1800 and equal", j.ID, j.Runtime, j.Walltime)
		}
		if j.Nodes < 1 || j.Nodes > 40 {
			t.Fatalf("job %s: %d nodes outside [1,40]", j.ID, j.Nodes)
		}
	}
	tr, err = Open(lanPath, "", Options{MaxJobs: 10})
	if err != nil || len(tr.Jobs) != 10 || tr.Jobs[9].ID != "10" {
		t.Fatalf("MaxJobs 10: %v, %+v", err, tr)
	}
}

func TestKTHSharedTrace(t *testing.T) {
	if _, err := os.Stat(kthPath); err != nil {
		t.Fatalf("the trace the repository ships (instances/traces) cannot be read: %v", err)
	}
	tr, err := Open(kthPath, "", Options{SkipBad: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkTrace(tr, Options{SkipBad: true}); err != nil {
		t.Fatal(err)
	}
	if n := len(tr.Jobs) + tr.Skipped; n != 27992 {
		t.Errorf("%d jobs + %d skipped = %d, want 27992", len(tr.Jobs), tr.Skipped, n)
	}
	if tr.Header["MaxNodes"] != "100" && tr.Header["MaxProcs"] != "100" {
		t.Errorf("MaxNodes %q, MaxProcs %q; want 100", tr.Header["MaxNodes"], tr.Header["MaxProcs"])
	}
	if tr.Nodes != 100 {
		t.Errorf("Nodes = %d, want 100", tr.Nodes)
	}
	if tr.Header["Acknowledge"] == "" {
		t.Error("no Acknowledge in the header")
	}
	for _, j := range tr.Jobs {
		if j.Nodes < 1 || j.Nodes > 100 {
			t.Fatalf("job %s: %d nodes outside [1,100]", j.ID, j.Nodes)
		}
	}
}

// fuzzSeeds adds the table inputs to a fuzz target.
func fuzzSeeds(f *testing.F, cases []readCase) {
	for _, c := range cases {
		if len(c.in) > 4096 { // the over-long-line cases would slow every run
			continue
		}
		f.Add(c.in, uint8(c.opt.ProcsPerNode), c.opt.SkipBad, uint8(c.opt.MaxJobs))
	}
}

func fuzzRead(t *testing.T, read func(string, Options) (*Trace, error), in string, ppn uint8, skipBad bool, maxJobs uint8) {
	opt := Options{ProcsPerNode: int(ppn), SkipBad: skipBad, MaxJobs: int(maxJobs)}
	tr, err := read(in, opt)
	if err != nil {
		if tr != nil {
			t.Fatalf("trace and error %v", err)
		}
		return
	}
	if err := checkTrace(tr, opt); err != nil {
		t.Fatal(err)
	}
}

func FuzzReadSWF(f *testing.F) {
	fuzzSeeds(f, swfCases)
	f.Fuzz(func(t *testing.T, in string, ppn uint8, skipBad bool, maxJobs uint8) {
		fuzzRead(t, func(in string, opt Options) (*Trace, error) {
			return ReadSWF(strings.NewReader(in), opt)
		}, in, ppn, skipBad, maxJobs)
	})
}

func FuzzReadLan(f *testing.F) {
	fuzzSeeds(f, lanCases)
	f.Fuzz(func(t *testing.T, in string, ppn uint8, skipBad bool, maxJobs uint8) {
		fuzzRead(t, func(in string, opt Options) (*Trace, error) {
			return ReadLan(strings.NewReader(in), opt)
		}, in, ppn, skipBad, maxJobs)
	})
}

// BenchmarkReadLan reads the full shipped Lan trace (100,000 jobs): parse
// alone from memory, and Open from the file.
func BenchmarkReadLan(b *testing.B) {
	data, err := os.ReadFile(lanPath)
	if err != nil {
		b.Fatalf("the trace the repository ships (instances/traces) cannot be read: %v", err)
	}
	b.Run("parse", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ReadLan(bytes.NewReader(data), Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("open", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Open(lanPath, "", Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestKeepSWF: Options.KeepSWF keeps the wait, run, request and status
// fields as read (-1 where unknown, a request of 0 unknown too), only
// then parses the wait, and leaves Job.SWF nil without it.
func TestKeepSWF(t *testing.T) {
	log := "1 0 5 100 1 -1 -1 1 200 -1 1 3 -1 -1 1 -1 -1 -1\n" +
		"2 1 -1 -1 1 -1 -1 1 50 -1 0 4 -1 -1 1 -1 -1 -1\n" +
		"3 2 7.6 30 1 -1 -1 1 0 -1 5 4 -1 -1 1 -1 -1 -1\n"
	tr, err := ReadSWF(strings.NewReader(log), Options{KeepSWF: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []SWFRecord{{Wait: 5, Run: 100, Request: 200, Status: 1}, {Wait: -1, Run: -1, Request: 50, Status: 0}, {Wait: 8, Run: 30, Request: -1, Status: 5}}
	for i, j := range tr.Jobs {
		if j.SWF == nil || *j.SWF != want[i] {
			t.Errorf("job %s: SWF %+v, want %+v", j.ID, j.SWF, want[i])
		}
	}
	if tr.Jobs[1].Runtime != 50 || tr.Jobs[2].Walltime != 30 {
		t.Errorf("jobs %+v", tr.Jobs)
	}
	tr, err = ReadSWF(strings.NewReader(log), Options{})
	if err != nil || tr.Jobs[0].SWF != nil {
		t.Fatalf("without KeepSWF: %v, %+v", err, tr.Jobs[0])
	}
	bad := "1 0 x 100 1 -1 -1 1 200 -1 1 3 -1 -1 1 -1 -1 -1\n"
	if _, err := ReadSWF(strings.NewReader(bad), Options{}); err != nil {
		t.Errorf("field 3 is not read without KeepSWF: %v", err)
	}
	if _, err := ReadSWF(strings.NewReader(bad), Options{KeepSWF: true}); err == nil || !strings.Contains(err.Error(), "field 3 (wait time)") {
		t.Errorf("a malformed wait with KeepSWF: %v", err)
	}
}
