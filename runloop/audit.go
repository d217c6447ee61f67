package runloop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

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
