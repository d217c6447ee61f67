package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
)

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// maxInput bounds what optsched reads from one file or stdin (256 MiB).
const maxInput = windowjson.MaxInputBytes

// loadWindow reads a window from path, or from stdin when path is "-".
func loadWindow(path string, stdin io.Reader) (*model.Window, error) {
	w, err := readWindow(path, stdin)
	if err == nil {
		settleHeap(w)
	}
	return w, err
}

// settleHeap collects the garbage of reading a large window (100,000
// nodes or more) before the time limit starts: otherwise the collector's
// last cycles over the reader's garbage run during the solve and its
// checks, and on a 10⁶-node window they cost tens of milliseconds of the
// limit. It is part of the start-up, outside the solve's elapsed time.
//
// It then lets the heap grow to four times what is live (GOGC 300, unless
// GOGC was set) before the next cycle: the window's topology is most of
// the heap (a switch list and a name a node), and a cycle's marking of it
// costs some 0.3–1 s of CPU on a 10⁶-node window — more than a 100 ms
// limit — while the solve, the checks and the answer allocate less than
// what is live. The cost is memory: the peak grows by what they allocate
// (on the 10⁶-node, 200,000-job window of docs/limits.md, about 100 MB).
func settleHeap(w *model.Window) {
	if w.Topology != nil && w.Topology.NumNodes() >= 100_000 {
		runtime.GC()
		if old := debug.SetGCPercent(largeWindowGOGC); old != 100 {
			debug.SetGCPercent(old) // GOGC was set: it stands
		}
	}
}

// largeWindowGOGC is the GOGC of the solve of a large window (settleHeap).
const largeWindowGOGC = 300

// loadWindowBy is loadWindow that returns when the command's --deadline
// (at, when not zero) passes first, with a deadlineError: the reading
// goes on in another goroutine (a read of a pipe cannot be interrupted)
// and stops at its next look at the deadline (windowjson.LoadContext);
// the command returns at once.
func loadWindowBy(at time.Time, deadline time.Duration, start time.Time, path string, stdin io.Reader) (*model.Window, error) {
	if at.IsZero() {
		return loadWindow(path, stdin)
	}
	ctx, cancel := context.WithDeadline(context.Background(), at)
	type loaded struct {
		w   *model.Window
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		w, err := readWindowContext(ctx, path, stdin)
		if err == nil {
			settleHeap(w)
		}
		done <- loaded{w, err}
	}()
	var l loaded
	select {
	case l = <-done:
	case <-ctx.Done():
		l.err = ctx.Err()
	}
	cancel()
	if l.err != nil && errors.Is(l.err, context.DeadlineExceeded) {
		return nil, deadlineError{deadline: deadline, after: time.Since(start), window: path}
	}
	return l.w, l.err
}

// deadlineError is a --deadline that passed while the window was read:
// exit 1 (exitError), nothing written on stdout.
type deadlineError struct {
	deadline, after time.Duration
	window          string
}

func (e deadlineError) Error() string {
	name := e.window
	if name == "-" {
		name = "stdin"
	}
	return fmt.Sprintf("the --deadline %v passed while reading the window %s (%v after the start): nothing was solved or written; give a longer --deadline or a smaller window",
		e.deadline, name, e.after.Round(time.Millisecond))
}

func readWindow(path string, stdin io.Reader) (*model.Window, error) {
	return readWindowContext(context.Background(), path, stdin)
}

func readWindowContext(ctx context.Context, path string, stdin io.Reader) (*model.Window, error) {
	if path != "-" {
		return windowjson.LoadContext(ctx, path)
	}
	data, err := windowjson.ReadJSONContext(ctx, stdin, "stdin", 0)
	if err != nil {
		return nil, err
	}
	w, err := windowjson.ParseContext(ctx, data, windowjson.Options{ReadFile: windowjson.ReadFileLimited})
	if err != nil {
		return nil, fmt.Errorf("stdin: %w", err)
	}
	return w, nil
}

// formatNames are the output formats of every optsched command: as -o
// values they never name a file.
var formatNames = []string{"json", "table", "lp", "mps", "cnf", "csv", "tsv", "text", "txt"}

// outputFlag resolves -o/--output for the commands that write a file
// (gen, export): -o is the output format there as everywhere, and a value
// that is not one of formats is the file of the old spelling (-o FILE),
// which still works with a deprecation note — unless it is the name of a
// format (formatNames): -o table is refused, not a file named table.
// *format and *file are set.
func outputFlag(s *streams, command, value string, formats []string, format, file *string) error {
	switch {
	case value == "":
		return nil
	case slices.Contains(formats, value):
		*format = value
		return nil
	case *file != "-":
		return usageError{fmt.Errorf("-o %q is not an output format of %s (%s), and --out is given", value, command, strings.Join(formats, ", "))}
	case slices.Contains(formatNames, value):
		// The name of another command's format, not a file name.
		return usageError{fmt.Errorf("-o %s: %s writes %s (-o), to --out FILE", value, command, strings.Join(formats, " or "))}
	}
	fmt.Fprintf(s.err, "optsched %s: -o FILE is deprecated: -o is the output format (%s), --out FILE the file; writing %s\n", command, strings.Join(formats, ", "), value)
	*file = value
	return nil
}

// outputFormat resolves -o: explicit json or table, or table on a
// terminal and JSON otherwise.
func outputFormat(flag string, s *streams) (string, error) {
	switch flag {
	case "json", "table":
		return flag, nil
	case "":
		if s.outIsTerminal {
			return "table", nil
		}
		return "json", nil
	}
	return "", usageError{fmt.Errorf("-o must be json or table, got %q", flag)}
}

// writeJSON writes v to w as indented JSON with a final newline, the form
// of every JSON document optsched prints.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeJSONFile writes v as indented JSON to path.
func writeJSONFile(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// writeFileWith creates path and fills it with write.
func writeFileWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
