package runloop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Phases are the parts of a cycle's wall time in an audit log, in
// milliseconds: reading the server's state (the documents at once),
// deciding and checking the plan, reading the state again before acting
// (0 when not read again), and acting (qrun; scontrol update, read-back
// and release).
type Phases struct {
	ReadMS   float64 `json:"read"`
	DecideMS float64 `json:"decide"`
	RereadMS float64 `json:"reread"`
	ApplyMS  float64 `json:"apply"`
}

// MS is d in milliseconds, to the microsecond, as the audit logs give
// times.
func MS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// AppendJSONLine appends v as one JSON line to the log at path, creating
// it (and its folder) when needed. The line is written with one write
// call on a file opened for appending, so that lines of two writers never
// interleave.
func AppendJSONLine(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	line, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("audit log %s: %w", path, err)
	}
	return f.Close()
}
