package windowjson

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/hostlist"
	"github.com/optsched/optsched/model/internal/jsonkind"
	"github.com/optsched/optsched/model/slurm"
)

// Version is the version of the window JSON format this package reads and
// writes.
const Version = 1

// Options adjusts Parse.
type Options struct {
	// ReadFile reads the file a "slurm_file" topology names. When nil,
	// slurm_file is rejected (as for untrusted input).
	ReadFile func(path string) ([]byte, error)
}

// Load reads and validates the window file at path, of at most
// MaxInputBytes. A slurm_file topology is read relative to the window
// file's folder. Every error names path.
func Load(path string) (*model.Window, error) {
	return LoadContext(context.Background(), path)
}

// LoadContext is Load that stops with an error wrapping ctx's when ctx
// ends first: between chunks of 1 MiB while reading, and while parsing
// (ParseContext).
func LoadContext(ctx context.Context, path string) (*model.Window, error) {
	data, err := ReadJSONFileContext(ctx, path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	w, err := ParseContext(ctx, data, Options{ReadFile: func(p string) ([]byte, error) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return ReadFileLimited(p)
	}})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}

// Parse decodes and validates a window in the JSON format documented in
// docs/formats.md (version 1). Every error names the field path and the
// reason, as in "jobs[3].nodes: must be at least 1", and is a *FieldError
// (or wraps one). It never panics. A UTF-8 byte order mark at the head,
// which some editors write, is skipped.
func Parse(data []byte, opt Options) (*model.Window, error) {
	return ParseContext(context.Background(), data, opt)
}

// ParseContext is Parse that stops when ctx ends first — before each part
// of the window and every 1,024 running or waiting jobs — with an error
// wrapping ctx's (errors.Is(err, context.DeadlineExceeded) after a
// deadline) that says how far it got.
func ParseContext(ctx context.Context, data []byte, opt Options) (*model.Window, error) {
	stop := func(at string) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("reading stopped at %s: %w", at, err)
		}
		return nil
	}
	if err := stop("the start"); err != nil {
		return nil, err
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return nil, &FieldError{Reason: fmt.Sprintf("not valid JSON: %v", err)}
	}
	if jsonkind.Of(data) != "an object" {
		return nil, &FieldError{Reason: fmt.Sprintf("a window must be a JSON object, got %s", jsonkind.Of(data))}
	}
	root, err := newObj("", data)
	if err != nil {
		return nil, err // a key given twice, named
	}
	w := &model.Window{}
	if v, err := root.int("version", false, Version, 1, maxInt); err != nil {
		return nil, err
	} else if v != Version {
		return nil, fieldErr("version", "unsupported version %d (this optsched reads version %d)", v, Version)
	}
	if w.Time, err = root.int("time", true, 0, 0, model.MaxTime); err != nil {
		return nil, err
	}
	if err := stop("topology"); err != nil {
		return nil, err
	}
	if err := readTopology(root, w, opt); err != nil {
		return nil, err
	}
	if err := readCost(root, w); err != nil {
		return nil, err
	}
	if err := stop("idle"); err != nil {
		return nil, err
	}
	if err := readIdle(root, w); err != nil {
		return nil, err
	}
	ids := map[string]string{} // job id -> path that declared it
	if err := stop("running"); err != nil {
		return nil, err
	}
	if err := readRunning(root, w, ids, stop); err != nil {
		return nil, err
	}
	if err := readQueues(root, w); err != nil {
		return nil, err
	}
	if err := stop("jobs"); err != nil {
		return nil, err
	}
	if err := readJobs(root, w, ids, stop); err != nil {
		return nil, err
	}
	if err := stop("node_resources"); err != nil {
		return nil, err
	}
	if err := readNodeResources(root, w); err != nil {
		return nil, err
	}
	if err := readReservations(root, w); err != nil {
		return nil, err
	}
	if err := root.unknown(); err != nil {
		return nil, err
	}
	return w, nil
}

func readTopology(root *jobj, w *model.Window, opt Options) error {
	raw, ok := root.get("topology")
	if !ok {
		return fieldErr("topology", "required")
	}
	o, err := newObj("topology", raw)
	if err != nil {
		return err
	}
	var kinds []string
	for _, k := range []string{"layout", "fat_tree", "slurm", "slurm_file"} {
		if o.has(k) {
			kinds = append(kinds, k)
		}
	}
	if err := o.unknown(); err != nil {
		return err
	}
	if len(kinds) != 1 {
		return fieldErr("topology", "must have exactly one of layout, fat_tree, slurm, slurm_file (got %d)", len(kinds))
	}
	switch kinds[0] {
	case "layout":
		raw, _ := o.get("layout")
		l, err := newObj("topology.layout", raw)
		if err != nil {
			return err
		}
		var s model.LayoutSpec
		var v [3]int64
		for i, k := range []string{"pods", "leaves_per_pod", "nodes_per_leaf"} {
			if v[i], err = l.int(k, true, 0, 1, model.MaxGeneratedNodes); err != nil {
				return err
			}
		}
		if err := l.unknown(); err != nil {
			return err
		}
		s = model.LayoutSpec{Pods: int(v[0]), LeavesPerPod: int(v[1]), NodesPerLeaf: int(v[2])}
		if v[0]*v[1]*v[2] > model.MaxGeneratedNodes {
			return fieldErr("topology.layout", "%d nodes exceed the limit of %d", v[0]*v[1]*v[2], model.MaxGeneratedNodes)
		}
		w.TopologySpec.Layout = &s
		w.Topology, err = model.NewLayout(s.Pods, s.LeavesPerPod, s.NodesPerLeaf)
		if err != nil {
			return fieldErr("topology.layout", "%v", err)
		}
	case "fat_tree":
		raw, _ := o.get("fat_tree")
		f, err := newObj("topology.fat_tree", raw)
		if err != nil {
			return err
		}
		k, err := f.int("k", true, 0, 2, 160)
		if err != nil {
			return err
		}
		if k%2 != 0 {
			return fieldErr("topology.fat_tree.k", "must be even, got %d", k)
		}
		pods, err := f.int("pods", false, 0, 1, k)
		if err != nil {
			return err
		}
		if err := f.unknown(); err != nil {
			return err
		}
		w.TopologySpec.FatTree = &model.FatTreeSpec{K: int(k), Pods: int(pods)}
		w.Topology, err = model.NewFatTree(int(k), int(pods))
		if err != nil {
			return fieldErr("topology.fat_tree", "%v", err)
		}
	case "slurm":
		raw, _ := o.get("slurm")
		if k := jsonkind.Of(raw); k != "a string" {
			return fieldErr("topology.slurm", "must be a string, got %s", k)
		}
		text, err := decodeString("topology.slurm", raw, -1) // bounded by the input alone
		if err != nil {
			return err
		}
		w.TopologySpec.Slurm = text
		if w.Topology, err = slurm.ParseTopology(text); err != nil {
			return fieldErr("topology.slurm", "%v", err)
		}
	case "slurm_file":
		path, err := o.str("slurm_file", true, "")
		if err != nil {
			return err
		}
		if opt.ReadFile == nil {
			return fieldErr("topology.slurm_file", "reading files is not allowed here; inline the text as topology.slurm")
		}
		text, err := opt.ReadFile(path)
		if err != nil {
			return fieldErr("topology.slurm_file", "%v", err)
		}
		w.TopologySpec.SlurmFile = path
		if w.Topology, err = slurm.ParseTopology(string(text)); err != nil {
			return fieldErr("topology.slurm_file", "%s: %v", path, err)
		}
	}
	return nil
}

func readCost(root *jobj, w *model.Window) error {
	w.Cost = model.DefaultCostModel
	raw, ok := root.get("cost")
	if !ok {
		return nil
	}
	o, err := newObj("cost", raw)
	if err != nil {
		return err
	}
	name, err := o.str("model", false, model.DefaultCostModel.Kind.String())
	if err != nil {
		return err
	}
	if w.Cost.Kind, err = model.ParseCostKind(name); err != nil {
		return fieldErr("cost.model", "%v", err)
	}
	if w.Cost.HopCost, err = o.int("hop_cost", false, model.DefaultHopCost, 1, 1_000_000); err != nil {
		return err
	}
	return o.unknown()
}

// nodeList reads a list of node names or a hostlist string at path and
// returns their ids.
func nodeList(path string, raw json.RawMessage, t *model.Topology) ([]int, error) {
	var names []string
	switch jsonkind.Of(raw) {
	case "a string":
		var s string
		if err := decodeValue(path, raw, &s); err != nil {
			return nil, err
		}
		if strings.TrimSpace(s) == "" {
			return nil, nil
		}
		var err error
		if names, err = hostlist.Expand(s); err != nil {
			return nil, fieldErr(path, "%v", err)
		}
	case "a list":
		var l []json.RawMessage
		if err := decodeValue(path, raw, &l); err != nil {
			return nil, err
		}
		for i, r := range l {
			s, err := decodeString(fmt.Sprintf("%s[%d]", path, i), r, maxString)
			if err != nil {
				return nil, err
			}
			names = append(names, s)
		}
	default:
		return nil, fieldErr(path, "must be a list of node names or a hostlist string, got %s", jsonkind.Of(raw))
	}
	ids := make([]int, len(names))
	seen := make(map[int]bool, len(names))
	for i, n := range names {
		id, ok := t.Lookup(n)
		if !ok {
			return nil, fieldErr(path, "node %q is not in the topology", n)
		}
		if seen[id] {
			return nil, fieldErr(path, "node %q is listed twice", n)
		}
		seen[id] = true
		ids[i] = id
	}
	return ids, nil
}

func readIdle(root *jobj, w *model.Window) error {
	raw, ok := root.get("idle")
	if !ok {
		return fieldErr("idle", "required (an empty list when no node is idle)")
	}
	ids, err := nodeList("idle", raw, w.Topology)
	if err != nil {
		return err
	}
	slices.Sort(ids)
	w.Idle = ids
	if w.Idle == nil {
		w.Idle = []int{}
	}
	return nil
}

func readRunning(root *jobj, w *model.Window, ids map[string]string, stop func(string) error) error {
	return root.objects("running", false, maxRunning, "running jobs", func(path string, o *jobj) error {
		if len(w.Running)&1023 == 1023 {
			if err := stop(path); err != nil {
				return err
			}
		}
		var err error
		var r model.RunningJob
		if r.ID, err = o.id("id"); err != nil {
			return err
		}
		if prev, dup := ids[r.ID]; dup {
			return fieldErr(path+".id", "job %q is already declared at %s", r.ID, prev)
		}
		ids[r.ID] = path
		if r.Nodes, err = o.nodes(path, w.Topology); err != nil {
			return err
		}
		for _, id := range r.Nodes {
			if w.IsIdle(id) {
				return fieldErr(path+".nodes", "node %q is also listed as idle", w.Topology.Name(id))
			}
		}
		if r.End, err = o.int("end", true, 0, 0, model.MaxTime); err != nil {
			return err
		}
		if r.End <= w.Time {
			return fieldErr(path+".end", "must be after the window time %d (give an overrunning job a new estimated end)", w.Time)
		}
		if r.Select, err = readSelect(o, path); err != nil {
			return err
		}
		if r.Comm, err = readBool(o, "comm", false); err != nil {
			return err
		}
		if r.Place, err = readPlace(o, path); err != nil {
			return err
		}
		if r.Units, err = readRunningUnits(o, path, w, &r); err != nil {
			return err
		}
		if err := o.unknown(); err != nil {
			return err
		}
		w.Running = append(w.Running, r)
		return nil
	})
}

// readBool returns key as true or false; def when absent or null.
func readBool(o *jobj, key string, def bool) (bool, error) {
	raw, ok := o.get(key)
	if !ok {
		return def, nil
	}
	if k := jsonkind.Of(raw); k != "a boolean" {
		return false, fieldErr(o.sub(key), "must be true or false, got %s", k)
	}
	var b bool
	if err := decodeValue(o.sub(key), raw, &b); err != nil {
		return false, err
	}
	return b, nil
}

func readSelect(o *jobj, path string) (model.Select, error) {
	s, err := o.str("select", false, "")
	if err != nil || s == "" {
		if err == nil && o.has("select") {
			return nil, fieldErr(path+".select", "must not be empty")
		}
		return nil, err
	}
	sel, err := model.ParseSelect(s)
	if err != nil {
		return nil, fieldErr(path+".select", "%v", err)
	}
	return sel, nil
}

func readQueues(root *jobj, w *model.Window) error {
	raw, ok := root.get("queues")
	if !ok {
		return nil
	}
	o, err := newObj("queues", raw)
	if err != nil {
		return err
	}
	members := o.members()
	w.Queues = make(map[string]model.Queue, len(members))
	for _, name := range sortedKeys(members) {
		path := fmt.Sprintf("queues[%q]", name)
		if strings.TrimSpace(name) == "" {
			return fieldErr(path, "queue name must not be empty")
		}
		q, err := newObj(path, members[name])
		if err != nil {
			return err
		}
		o.use(name)
		ewt, err := q.int("expected_wait", true, 0, 1, model.MaxTime)
		if err != nil {
			return err
		}
		if err := q.unknown(); err != nil {
			return err
		}
		w.Queues[name] = model.Queue{ExpectedWait: ewt}
	}
	return nil
}

func readJobs(root *jobj, w *model.Window, ids map[string]string, stop func(string) error) error {
	list, _, err := root.list("jobs", true, maxJobs, "waiting jobs")
	if err != nil {
		return err
	}
	w.Jobs = make([]model.Job, 0, len(list))
	if len(list) > len(ids) {
		// Grow the map of ids once rather than as the jobs come.
		grown := make(map[string]string, len(ids)+len(list))
		maps.Copy(grown, ids)
		ids = grown
	}
	for i, raw := range list {
		path := fmt.Sprintf("jobs[%d]", i)
		if i&1023 == 1023 {
			if err := stop(path); err != nil {
				return err
			}
		}
		o, err := newObj(path, raw)
		if err != nil {
			return err
		}
		var j model.Job
		if j.ID, err = o.id("id"); err != nil {
			return err
		}
		if prev, dup := ids[j.ID]; dup {
			return fieldErr(path+".id", "job %q is already declared at %s", j.ID, prev)
		}
		ids[j.ID] = path
		n, err := o.int("nodes", true, 0, 1, model.MaxGeneratedNodes)
		if err != nil {
			return err
		}
		j.Nodes = int(n)
		wraw, ok := o.get("walltime")
		if !ok {
			return fieldErr(path+".walltime", "required")
		}
		if j.Walltime, err = parseSeconds(path+".walltime", wraw, 1, model.MaxTime); err != nil {
			return err
		}
		if j.Walltime > model.MaxTime {
			return fieldErr(path+".walltime", "must be at most %d s", int64(model.MaxTime))
		}
		if j.Submit, err = o.int("submit", false, w.Time, 0, model.MaxTime); err != nil {
			return err
		}
		if j.Submit > w.Time {
			return fieldErr(path+".submit", "is after the window time %d", w.Time)
		}
		if j.Queue, err = o.str("queue", false, model.DefaultQueue); err != nil {
			return err
		}
		if w.Queues != nil {
			if _, ok := w.Queues[j.Queue]; !ok {
				return fieldErr(path+".queue", "queue %q is not in queues", j.Queue)
			}
		}
		nwp, err := o.int("nwp", false, 0, 0, 1<<31-1)
		if err != nil {
			return err
		}
		j.NWP = int(nwp)
		if j.Select, err = readSelect(o, path); err != nil {
			return err
		}
		if j.Select != nil && o.has("nodes") && j.Select.Units() != j.Nodes {
			return fieldErr(path+".select", "asks for %d units, but nodes is %d: the two must agree (or give one of them)", j.Select.Units(), j.Nodes)
		}
		if j.Comm, err = readBool(o, "comm", true); err != nil {
			return err
		}
		if j.Pattern, err = o.str("pattern", false, model.PatternRD); err != nil {
			return err
		}
		switch j.Pattern {
		case model.PatternRD, model.PatternRHVD, model.PatternBinomial:
		default:
			return fieldErr(path+".pattern", "must be %s, %s or %s", model.PatternRD, model.PatternRHVD, model.PatternBinomial)
		}
		if j.Place, err = readPlace(o, path); err != nil {
			return err
		}
		if err := o.unknown(); err != nil {
			return err
		}
		w.Jobs = append(w.Jobs, j)
	}
	return nil
}

// readNodeResources reads node_resources: a map from "default", a node
// name or a hostlist to capacities. "default" applies to every node; a
// more specific key overrides it resource by resource; a node named by two
// non-default keys is an error.
func readNodeResources(root *jobj, w *model.Window) error {
	raw, ok := root.get("node_resources")
	if !ok {
		return nil
	}
	o, err := newObj("node_resources", raw)
	if err != nil {
		return err
	}
	n := w.Topology.NumNodes()
	w.Resources = make([]model.Resources, n)
	owner := make([]string, n)
	members := o.members()
	keys := sortedKeys(members)
	// "default" first, so that the others override it.
	if i := slices.Index(keys, "default"); i > 0 {
		keys = append([]string{"default"}, slices.Delete(keys, i, i+1)...)
	}
	for _, key := range keys {
		o.use(key)
		path := fmt.Sprintf("node_resources[%q]", key)
		caps, err := readCapacities(path, members[key])
		if err != nil {
			return err
		}
		var ids []int
		if key == "default" {
			for id := range n {
				ids = append(ids, id)
			}
		} else {
			names, err := hostlist.Expand(key)
			if err != nil {
				return fieldErr(path, "%v", err)
			}
			for _, name := range names {
				id, ok := w.Topology.Lookup(name)
				if !ok {
					return fieldErr(path, "node %q is not in the topology", name)
				}
				if owner[id] != "" {
					return fieldErr(path, "node %q is also named by %q", name, owner[id])
				}
				owner[id] = key
				ids = append(ids, id)
			}
		}
		for _, id := range ids {
			if w.Resources[id] == nil {
				w.Resources[id] = model.Resources{}
			}
			for r, v := range caps {
				w.Resources[id][r] = v
			}
		}
	}
	return nil
}

func readCapacities(path string, raw json.RawMessage) (model.Resources, error) {
	o, err := newObj(path, raw)
	if err != nil {
		return nil, err
	}
	caps := model.Resources{}
	members := o.members()
	for _, k := range sortedKeys(members) {
		o.use(k)
		p := path + "." + k
		if !model.ValidResourceName(k) {
			return nil, fieldErr(p, "bad resource name")
		}
		v := members[k]
		switch jsonkind.Of(v) {
		case "a number":
			n, err := parseInt(p, v, 0, maxInt)
			if err != nil {
				return nil, err
			}
			caps[k] = n
		case "a string":
			var s string
			if err := decodeValue(p, v, &s); err != nil {
				return nil, err
			}
			n, err := model.ParseSize(s)
			if err != nil {
				return nil, fieldErr(p, "%v", err)
			}
			caps[k] = n
		default:
			return nil, fieldErr(p, "must be a non-negative integer or a size such as \"64gb\", got %s", jsonkind.Of(v))
		}
	}
	return caps, nil
}
