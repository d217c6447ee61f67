package windowjson

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxInputBytes bounds what optsched reads from one input file or from
// stdin: 256 MiB, so that /dev/zero or a runaway file is an error, not
// gigabytes of memory.
const MaxInputBytes = 256 << 20

// ReadFileLimited reads the file at path, of at most MaxInputBytes: a
// larger file (or a device that never ends) is an error naming the limit.
func ReadFileLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadLimited(f, path)
}

// ReadLimited reads r to its end, at most MaxInputBytes; name names the
// input in the error.
func ReadLimited(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, inputLimit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > inputLimit {
		return nil, fmt.Errorf("%s: larger than %d bytes, the limit of one input", name, inputLimit)
	}
	return data, nil
}

// inputLimit is MaxInputBytes; tests lower it.
var inputLimit int64 = MaxInputBytes

// readChunk is how much ReadJSON reads at a time.
const readChunk = 1 << 20

// ReadJSON reads a JSON document from r, of at most MaxInputBytes, and
// stops at the first byte that cannot be part of JSON text — a control
// byte (a binary file, /dev/zero) or a first byte that begins no JSON
// value — with an error naming name, the byte and its offset, having read
// at most one chunk (1 MiB) past it. size, when positive, is the input's
// size (a regular file's): the buffer is then allocated once, and the
// peak is the input's size. Otherwise (a pipe) it reads into chunks and
// joins them at the end: a peak of twice the input at most.
func ReadJSON(r io.Reader, name string, size int64) ([]byte, error) {
	return ReadJSONContext(context.Background(), r, name, size)
}

// ReadJSONContext is ReadJSON that stops between reads of at most 1 MiB
// when ctx ends, with an error naming name and wrapping ctx's. A read that blocks (a pipe with no writer) is not
// interrupted: the caller that must return at a deadline waits for it in
// another goroutine.
func ReadJSONContext(ctx context.Context, r io.Reader, name string, size int64) ([]byte, error) {
	r = ctxReader{ctx: ctx, r: r}
	if size > inputLimit {
		return nil, fmt.Errorf("%s: %d bytes, larger than %d bytes, the limit of one input", name, size, inputLimit)
	}
	if size > 0 {
		buf := make([]byte, size+1) // +1: to see a file that grew
		n, err := readJSONInto(r, buf, 0, name, new(bool))
		if err != nil {
			return nil, err
		}
		if int64(n) <= size {
			return buf[:n], nil
		}
		// The file grew while read: go on in chunks.
		return readJSONChunks(r, name, [][]byte{buf[:n]}, n)
	}
	return readJSONChunks(r, name, nil, 0)
}

// readJSONChunks reads the rest of r into chunks after those given
// (total bytes so far), checking each (checkJSONBytes), and joins them.
func readJSONChunks(r io.Reader, name string, chunks [][]byte, total int) ([]byte, error) {
	started := total > 0
	for {
		c := make([]byte, readChunk)
		n, err := readJSONInto(r, c, total, name, &started)
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, c[:n])
		total += n
		if int64(total) > inputLimit {
			return nil, fmt.Errorf("%s: larger than %d bytes, the limit of one input", name, inputLimit)
		}
		if n < len(c) {
			break // end of input
		}
	}
	if len(chunks) == 1 {
		return chunks[0], nil
	}
	out := make([]byte, 0, total)
	for i, c := range chunks {
		out = append(out, c...)
		chunks[i] = nil // let the collector take it
	}
	return out, nil
}

// readJSONInto fills buf from r until it is full or r ends, checking
// every byte read (checkJSONBytes; off is buf's offset in the input), and
// returns the bytes read.
func readJSONInto(r io.Reader, buf []byte, off int, name string, started *bool) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := r.Read(buf[n:])
		if k > 0 {
			if err := checkJSONBytes(buf[n:n+k], off+n, started); err != nil {
				return 0, fmt.Errorf("%s: %w", name, err)
			}
			n += k
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return 0, fmt.Errorf("reading %s: %w", name, err)
		}
	}
	return n, nil
}

// checkJSONBytes reports the first byte of b (at offset off of the input)
// that no JSON text holds: a control byte other than tab, newline and
// carriage return (not even in a string), or, as the first byte that is
// not white space (started false until then), one that begins no value
// (a UTF-8 byte order mark is let through to the parser).
func checkJSONBytes(b []byte, off int, started *bool) error {
	for i, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return fmt.Errorf("byte 0x%02x at offset %d cannot be part of JSON text (a binary file or a device?)", c, off+i)
		}
		if !*started && c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			*started = true
			if !strings.ContainsRune("{[\"-0123456789tfn\xef", rune(c)) {
				return fmt.Errorf("byte %q at offset %d begins no JSON value (want a JSON object)", c, off+i)
			}
		}
	}
	return nil
}

// ctxReader reads at most readChunk bytes a call from r, and fails once
// ctx has ended.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, fmt.Errorf("reading stopped: %w", err)
	}
	return c.r.Read(p[:min(len(p), readChunk)])
}

// ReadJSONFile is ReadJSON of the file at path.
func ReadJSONFile(path string) ([]byte, error) {
	return ReadJSONFileContext(context.Background(), path)
}

// ReadJSONFileContext is ReadJSONContext of the file at path.
func ReadJSONFileContext(ctx context.Context, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	return ReadJSONContext(ctx, f, path, size)
}
