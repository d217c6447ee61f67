package windowjson

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadLimited: an input past the limit (a device that never ends, a
// large file, a large slurm_file) is an error naming the limit.
func TestReadLimited(t *testing.T) {
	old := inputLimit
	inputLimit = 1 << 10
	defer func() { inputLimit = old }()
	if _, err := ReadFileLimited("/dev/zero"); err == nil || !strings.Contains(err.Error(), "larger than 1024 bytes") {
		t.Errorf("/dev/zero: %v", err)
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big.conf")
	os.WriteFile(big, []byte(strings.Repeat("# x\n", 1000)), 0o644)
	win := filepath.Join(dir, "w.json")
	os.WriteFile(win, []byte(`{"time": 0, "topology": {"slurm_file": "big.conf"}, "idle": [], "jobs": []}`), 0o644)
	if _, err := Load(win); err == nil || !strings.Contains(err.Error(), "larger than 1024 bytes") {
		t.Errorf("slurm_file: %v", err)
	}
	if data, err := ReadFileLimited(win); err != nil || len(data) == 0 {
		t.Errorf("small file: %v", err)
	}
}
