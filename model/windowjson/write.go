package windowjson

import (
	"encoding/json"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/hostlist"
)

// windowDoc is the JSON form of a window, version 1.
type windowDoc struct {
	Version       int                        `json:"version"`
	Time          int64                      `json:"time"`
	Topology      model.TopologySpec         `json:"topology"`
	Cost          *costDoc                   `json:"cost,omitempty"`
	Idle          string                     `json:"idle"`
	Running       []runningDoc               `json:"running,omitempty"`
	Queues        map[string]queueDoc        `json:"queues,omitempty"`
	Jobs          []jobDoc                   `json:"jobs"`
	NodeResources map[string]model.Resources `json:"node_resources,omitempty"`
	Reservations  []reservationDoc           `json:"reservations,omitempty"`
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

// Marshal writes w in the version 1 format that Parse reads, indented by
// two spaces, with node sets as compressed hostlists. Node resources are
// written per node.
func Marshal(w *model.Window) ([]byte, error) {
	d := windowDoc{
		Version:  Version,
		Time:     w.Time,
		Topology: w.TopologySpec,
		Idle:     hostlist.Compress(w.NodeNames(w.Idle)),
		Jobs:     []jobDoc{},
	}
	if w.Cost != model.DefaultCostModel {
		d.Cost = &costDoc{Model: w.Cost.Kind.String(), HopCost: w.Cost.HopCost}
	}
	for _, r := range w.Running {
		rd := runningDoc{ID: r.ID, Nodes: hostlist.Compress(w.NodeNames(r.Nodes)), End: r.End, Comm: r.Comm}
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
		if j.Queue != model.DefaultQueue {
			jd.Queue = j.Queue
		}
		if j.Select != nil {
			jd.Select = j.Select.String()
		}
		if !j.Comm {
			jd.Comm = new(false)
		}
		if j.Pattern != model.PatternRD {
			jd.Pattern = j.Pattern // "" (PatternRD) is omitted too
		}
		jd.Place = j.Place.String()
		d.Jobs = append(d.Jobs, jd)
	}
	if w.Resources != nil {
		d.NodeResources = map[string]model.Resources{}
		for id, r := range w.Resources {
			if r != nil {
				d.NodeResources[w.Topology.Name(id)] = r
			}
		}
	}
	for _, r := range w.Reservations {
		d.Reservations = append(d.Reservations, reservationDoc{ID: r.ID, Nodes: hostlist.Compress(w.NodeNames(r.Nodes)), Start: r.Start, End: r.End})
	}
	return json.MarshalIndent(d, "", "  ")
}
