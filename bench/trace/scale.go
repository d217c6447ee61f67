package trace

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
)

// ScaleOptions say how ScaleSWF reshapes a log.
type ScaleOptions struct {
	// Nodes is the size of the scaled log's largest job: every processor
	// count (fields 5 and 8) is multiplied by Nodes / P, rounded up, where
	// P is the largest processor count of the log's job lines. 0 keeps
	// the counts.
	Nodes int
	// Jobs is the number of job lines to write: the log's job lines are
	// repeated, each copy's submit times shifted by the copies before it
	// (the last submit time plus one second, each) and its job numbers
	// (fields 1 and 17) by the largest job number, until Jobs lines; the
	// last copy is cut short. 0 writes the log once.
	Jobs int
}

// ScaleSWF writes to dst the SWF log src reshaped by opt: an archive log
// of another size, to test the simulator at scale on real arrival and
// run-time patterns. The header is kept but for its MaxNodes and MaxProcs
// lines, which are dropped — the cluster then is the largest job's size,
// as for a log whose header gives neither (ReadSWF) — and a Note line that
// says what was done. The other fields of every job line are copied as
// they are; blank lines are dropped. src is read whole into memory.
//
// A line that is not 18 fields, or whose job number, submit time or
// processor counts are not numbers, is an error naming the line.
func ScaleSWF(dst io.Writer, src io.Reader, opt ScaleOptions) error {
	if opt.Nodes < 0 || opt.Jobs < 0 {
		return fmt.Errorf("trace: ScaleOptions %+v: negative", opt)
	}
	type rec struct {
		fields                 [18][]byte
		id, submit, alloc, req int64
		prev                   int64
	}
	lr := newLineReader(src, "swf")
	var header [][]byte
	var recs []rec
	var maxProcs, maxID, maxSubmit int64
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		text := bytes.TrimLeft(line, " \t\r\v\f")
		if len(text) > 0 && text[0] == ';' {
			key := bytes.TrimSpace(text[1:])
			if bytes.HasPrefix(key, []byte("MaxNodes:")) || bytes.HasPrefix(key, []byte("MaxProcs:")) {
				continue
			}
			header = append(header, bytes.Clone(line))
			continue
		}
		var r rec
		n := splitFields(bytes.Clone(line), r.fields[:])
		if n == 0 {
			continue
		}
		if n != 18 {
			return lr.errorf("want 18 fields, got %d", n)
		}
		var reason string
		ints := []struct {
			dst *int64
			f   int
		}{{&r.id, 0}, {&r.alloc, 4}, {&r.req, 7}, {&r.prev, 16}}
		for _, x := range ints {
			if *x.dst, reason = parseInt(r.fields[x.f]); reason != "" {
				return &LineError{Format: "swf", Line: lr.n, Reason: "field " + strconv.Itoa(x.f+1) + ": " + reason}
			}
		}
		if r.submit, reason = parseTime(r.fields[1]); reason != "" {
			return &LineError{Format: "swf", Line: lr.n, Reason: "field 2: " + reason}
		}
		maxProcs = max(maxProcs, r.alloc, r.req)
		maxID = max(maxID, r.id)
		maxSubmit = max(maxSubmit, r.submit)
		recs = append(recs, r)
	}
	if lr.err != nil {
		return lr.err
	}
	if opt.Nodes > 0 && maxProcs > math.MaxInt64/int64(opt.Nodes) {
		return fmt.Errorf("trace: ScaleSWF: %d processors × %d nodes overflow", maxProcs, opt.Nodes)
	}
	want := opt.Jobs
	if want == 0 {
		want = len(recs)
	}
	if len(recs) == 0 && want > 0 {
		return fmt.Errorf("trace: ScaleSWF: no job lines to repeat")
	}
	// Processor counts scale by Nodes / maxProcs, rounded up.
	scale := func(p int64) int64 {
		if opt.Nodes == 0 || p <= 0 || maxProcs == 0 {
			return p
		}
		return ceilDiv(p*int64(opt.Nodes), maxProcs)
	}
	w := bufio.NewWriter(dst)
	for _, h := range header {
		w.Write(h)
		w.WriteByte('\n')
	}
	copies := (want + max(len(recs), 1) - 1) / max(len(recs), 1)
	procs := "processors as they were"
	if opt.Nodes > 0 && maxProcs > 0 {
		procs = fmt.Sprintf("processors x %d/%d rounded up", opt.Nodes, maxProcs)
	}
	fmt.Fprintf(w, "; Note: scaled by optsched (trace.ScaleSWF): %s, %d job lines in %d copies shifted by %d s; MaxNodes and MaxProcs dropped\n",
		procs, want, copies, maxSubmit+1)
	var buf []byte
	for k := 0; k < want; k++ {
		c, r := int64(k/len(recs)), &recs[k%len(recs)]
		buf = buf[:0]
		for f, field := range r.fields {
			if f > 0 {
				buf = append(buf, ' ')
			}
			switch {
			case f == 0:
				buf = strconv.AppendInt(buf, r.id+c*maxID, 10)
			case f == 1 && c > 0 && r.submit >= 0:
				buf = strconv.AppendInt(buf, r.submit+c*(maxSubmit+1), 10)
			case f == 4:
				buf = strconv.AppendInt(buf, scale(r.alloc), 10)
			case f == 7:
				buf = strconv.AppendInt(buf, scale(r.req), 10)
			case f == 16 && c > 0 && r.prev > 0:
				buf = strconv.AppendInt(buf, r.prev+c*maxID, 10)
			default:
				buf = append(buf, field...)
			}
		}
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return w.Flush()
}
