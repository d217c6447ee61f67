package windowjson

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// manyJobs is a window of n waiting jobs on a 40-node layout.
func manyJobs(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"time": 0, "topology": {"layout": {"pods": 2, "leaves_per_pod": 2, "nodes_per_leaf": 10}}, "idle": "n[0-9]", "jobs": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id": "j%d", "nodes": 2, "walltime": 60}`, i)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// countdown is a context whose Err turns to DeadlineExceeded after n
// calls: a deadline that passes part-way, deterministically.
type countdown struct {
	context.Context
	n int
}

func (c *countdown) Err() error {
	if c.n--; c.n < 0 {
		return context.DeadlineExceeded
	}
	return nil
}

// TestParseContextStops: a deadline that has passed, or passes while the
// jobs are read, stops the parse with an error wrapping it that says
// where; with time enough the same window parses as Parse reads it.
func TestParseContextStops(t *testing.T) {
	data := manyJobs(5000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ParseContext(ctx, data, Options{}); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "reading stopped at the start") {
		t.Errorf("cancelled: %v", err)
	}
	_, err := ParseContext(&countdown{Context: context.Background(), n: 8}, data, Options{})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "reading stopped at jobs[") {
		t.Errorf("past the deadline among the jobs: %v", err)
	}
	w, err := ParseContext(context.Background(), data, Options{})
	if err != nil || len(w.Jobs) != 5000 {
		t.Fatalf("no deadline: %v", err)
	}
}

// TestReadJSONContextStops: reading stops between chunks of 1 MiB once
// the context ends, from a pipe as from a regular file's size.
func TestReadJSONContextStops(t *testing.T) {
	data := bytes.Repeat([]byte(" "), 3*readChunk)
	for _, size := range []int64{0, int64(len(data))} {
		ctx, cancel := context.WithCancel(context.Background())
		r := &cancelAfterRead{r: bytes.NewReader(data), cancel: cancel}
		_, err := ReadJSONContext(ctx, r, "in", size)
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "in") {
			t.Errorf("size %d: %v", size, err)
		}
		if r.reads != 1 {
			t.Errorf("size %d: %d reads after the context ended at the first", size, r.reads)
		}
	}
	got, err := ReadJSONContext(context.Background(), bytes.NewReader(data), "in", 0)
	if err != nil || len(got) != len(data) {
		t.Errorf("no deadline: %d bytes, %v", len(got), err)
	}
}

// cancelAfterRead cancels its context after its first read.
type cancelAfterRead struct {
	r      io.Reader
	cancel context.CancelFunc
	reads  int
}

func (c *cancelAfterRead) Read(p []byte) (int, error) {
	c.reads++
	if len(p) > readChunk {
		return 0, fmt.Errorf("a read of %d bytes, more than a chunk", len(p))
	}
	n, err := c.r.Read(p)
	c.cancel()
	return n, err
}
