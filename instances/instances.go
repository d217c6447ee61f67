package instances

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
)

//go:embed *.json known.tsv
var files embed.FS

// SchemaName is the JSON Schema of the window format, shipped beside the
// window files; it is not a window.
const SchemaName = "window.schema.json"

// Names returns the names of the shipped window files, sorted.
func Names() []string {
	entries, _ := fs.Glob(files, "*.json")
	entries = slices.DeleteFunc(entries, func(n string) bool { return n == SchemaName })
	slices.Sort(entries)
	return entries
}

// Load parses the shipped window file name.
func Load(name string) (*model.Window, error) {
	data, err := files.ReadFile(name)
	if err != nil {
		return nil, err
	}
	w, err := windowjson.Parse(data, windowjson.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return w, nil
}

// Raw returns the bytes of the shipped file name (for fuzz seeds).
func Raw(name string) ([]byte, error) { return files.ReadFile(name) }

// A Known is one row of known.tsv: the objective a method reaches on a
// window, with the window's cost model and job cap.
type Known struct {
	Window string
	// Method is a solver or heuristic name ("seq"), or "optimal" for a
	// proven optimum.
	Method string
	// MaxJobs is the --max-jobs cap used (0: none).
	MaxJobs   int
	Objective int64
}

// KnownTable parses known.tsv: tab-separated window, method, max_jobs,
// objective, with '#' comments.
func KnownTable() ([]Known, error) {
	data, err := files.ReadFile("known.tsv")
	if err != nil {
		return nil, err
	}
	var out []Known
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Split(text, "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("known.tsv line %d: want 4 tab-separated fields, got %d", line, len(f))
		}
		maxJobs, err1 := strconv.Atoi(f[2])
		obj, err2 := strconv.ParseInt(f[3], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("known.tsv line %d: max_jobs and objective must be integers", line)
		}
		out = append(out, Known{Window: f[0], Method: f[1], MaxJobs: maxJobs, Objective: obj})
	}
	return out, sc.Err()
}
