// Package schedtest holds what the tests of the scheduler adapters
// (pbsched, slurmsched) and of the command share: golden files of the
// texts and documents that the split into package sched and its
// adapters must keep unchanged.
package schedtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Golden compares got with the golden file at path; with update it
// writes got there instead (creating the folder).
func Golden(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("differs from %s: got\n%s\nwant\n%s", path, got, want)
	}
}
