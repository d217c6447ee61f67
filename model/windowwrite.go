package model

import (
	"encoding/json"
	"strconv"
	"strings"
)

// windowDoc is the JSON form of a window, version 1.
type windowDoc struct {
	Version       int                  `json:"version"`
	Time          int64                `json:"time"`
	Topology      TopologySpec         `json:"topology"`
	Cost          *costDoc             `json:"cost,omitempty"`
	Idle          string               `json:"idle"`
	Running       []runningDoc         `json:"running,omitempty"`
	Queues        map[string]queueDoc  `json:"queues,omitempty"`
	Jobs          []jobDoc             `json:"jobs"`
	NodeResources map[string]Resources `json:"node_resources,omitempty"`
	Reservations  []reservationDoc     `json:"reservations,omitempty"`
}

type reservationDoc struct {
	ID    string `json:"id,omitempty"`
	Nodes string `json:"nodes"`
	Start int64  `json:"start"`
	End   int64  `json:"end"`
}

type costDoc struct {
	Model   string `json:"model"`
	HopCost int64  `json:"hop_cost"`
}

type runningDoc struct {
	ID     string `json:"id"`
	Nodes  string `json:"nodes"`
	End    int64  `json:"end"`
	Select string `json:"select,omitempty"`
	// Comm is written only when true (the default is false).
	Comm  bool           `json:"comm,omitempty"`
	Place string         `json:"place,omitempty"`
	Units map[string]int `json:"units,omitempty"`
}

type queueDoc struct {
	ExpectedWait int64 `json:"expected_wait"`
}

type jobDoc struct {
	ID       string `json:"id"`
	Nodes    int    `json:"nodes"`
	Walltime int64  `json:"walltime"`
	Submit   int64  `json:"submit"`
	Queue    string `json:"queue,omitempty"`
	NWP      int    `json:"nwp,omitempty"`
	Select   string `json:"select,omitempty"`
	// Comm is written only when false (the default is true).
	Comm *bool `json:"comm,omitempty"`
	// Pattern is written only when it is not the default "rd".
	Pattern string `json:"pattern,omitempty"`
	// Place is written only when it is not the default (free, shared).
	Place string `json:"place,omitempty"`
}

// MarshalJSON writes the window in the version 1 format that ParseWindow
// reads, with node sets as compressed hostlists. Node resources are written
// per node.
func (w *Window) MarshalJSON() ([]byte, error) {
	d := windowDoc{
		Version:  WindowVersion,
		Time:     w.Time,
		Topology: w.TopologySpec,
		Idle:     CompressHostlist(w.NodeNames(w.Idle)),
		Jobs:     []jobDoc{},
	}
	if w.Cost != DefaultCostModel {
		d.Cost = &costDoc{Model: w.Cost.Kind.String(), HopCost: w.Cost.HopCost}
	}
	for _, r := range w.Running {
		rd := runningDoc{ID: r.ID, Nodes: CompressHostlist(w.NodeNames(r.Nodes)), End: r.End, Comm: r.Comm}
		if r.Select != nil {
			rd.Select = r.Select.String()
		}
		rd.Place = r.Place.String()
		if r.Units != nil {
			rd.Units = make(map[string]int, len(r.Units))
			for id, u := range r.Units {
				rd.Units[w.Topology.Name(id)] = u
			}
		}
		d.Running = append(d.Running, rd)
	}
	if w.Queues != nil {
		d.Queues = map[string]queueDoc{}
		for name, q := range w.Queues {
			d.Queues[name] = queueDoc{ExpectedWait: q.ExpectedWait}
		}
	}
	for _, j := range w.Jobs {
		jd := jobDoc{ID: j.ID, Nodes: j.Nodes, Walltime: j.Walltime, Submit: j.Submit, NWP: j.NWP}
		if j.Queue != DefaultQueue {
			jd.Queue = j.Queue
		}
		if j.Select != nil {
			jd.Select = j.Select.String()
		}
		if !j.Comm {
			jd.Comm = new(false)
		}
		if j.Pattern != PatternRD {
			jd.Pattern = j.Pattern // "" (PatternRD) is omitted too
		}
		jd.Place = j.Place.String()
		d.Jobs = append(d.Jobs, jd)
	}
	if w.Resources != nil {
		d.NodeResources = map[string]Resources{}
		for id, r := range w.Resources {
			if r != nil {
				d.NodeResources[w.Topology.Name(id)] = r
			}
		}
	}
	for _, r := range w.Reservations {
		d.Reservations = append(d.Reservations, reservationDoc{ID: r.ID, Nodes: CompressHostlist(w.NodeNames(r.Nodes)), Start: r.Start, End: r.End})
	}
	return json.MarshalIndent(d, "", "  ")
}

// CompressHostlist writes names as a Slurm hostlist, merging runs of
// consecutive numbered names that share a prefix: n0 n1 n2 n5 becomes
// "n[0-2,5]". Names whose number has leading zeros are kept as they are.
// ExpandHostlist(CompressHostlist(names)) returns names.
func CompressHostlist(names []string) string {
	var out []string
	i := 0
	for i < len(names) {
		prefix, num, ok := splitNumbered(names[i])
		if !ok {
			out = append(out, names[i])
			i++
			continue
		}
		// Gather the following names with the same prefix, in order,
		// merging consecutive numbers into ranges.
		var ranges []string
		lo, hi := num, num
		j := i + 1
		for ; j < len(names); j++ {
			p, n, ok := splitNumbered(names[j])
			if !ok || p != prefix {
				break
			}
			if n == hi+1 {
				hi = n
				continue
			}
			ranges = append(ranges, rangeText(lo, hi))
			lo, hi = n, n
		}
		ranges = append(ranges, rangeText(lo, hi))
		if len(ranges) == 1 && lo == hi {
			out = append(out, names[i])
		} else {
			out = append(out, prefix+"["+strings.Join(ranges, ",")+"]")
		}
		i = j
	}
	return strings.Join(out, ",")
}

func rangeText(lo, hi int) string {
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return strconv.Itoa(lo) + "-" + strconv.Itoa(hi)
}

// splitNumbered splits "tux12" into ("tux", 12). ok is false when the name
// has no trailing number, the number has a leading zero, or the prefix
// holds characters that hostlists treat specially.
func splitNumbered(name string) (prefix string, num int, ok bool) {
	if strings.ContainsAny(name, "[],") {
		return "", 0, false
	}
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	digits := name[i:]
	if digits == "" || len(digits) > 9 || (len(digits) > 1 && digits[0] == '0') {
		return "", 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return "", 0, false
	}
	return name[:i], n, true
}
