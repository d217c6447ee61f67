package windowjson

import (
	"fmt"
	"slices"

	"github.com/optsched/optsched/model"
)

// This file reads the window fields of the time-and-resource model of
// [Bridi16]: place statements, the units of running jobs and node
// reservations.

// readPlace reads the optional "place" of a job or running job.
func readPlace(o *jobj, path string) (model.Place, error) {
	s, err := o.str("place", false, "")
	if err != nil {
		return model.Place{}, err
	}
	if s == "" {
		if o.has("place") {
			return model.Place{}, fieldErr(path+".place", "must not be empty")
		}
		return model.Place{}, nil
	}
	p, err := model.ParsePlace(s)
	if err != nil {
		return model.Place{}, fieldErr(path+".place", "%v", err)
	}
	return p, nil
}

// maxUnitsPerNode bounds one entry of running[].units.
const maxUnitsPerNode = model.MaxChunkCount

// readRunningUnits reads running[].units: node name → number of the job's
// units on it. It needs the job's nodes and a one-chunk select whose count
// equals the sum of the units, and names every node of the job once.
func readRunningUnits(o *jobj, path string, w *model.Window, r *model.RunningJob) (map[int]int, error) {
	raw, ok := o.get("units")
	if !ok {
		return nil, nil
	}
	p := path + ".units"
	u, err := newObj(p, raw)
	if err != nil {
		return nil, err
	}
	if r.Select == nil {
		return nil, fieldErr(p, "needs the job's select (the units are its chunks)")
	}
	if len(r.Select) != 1 {
		return nil, fieldErr(p, "needs a select of one chunk, got %d chunks", len(r.Select))
	}
	members := u.members()
	units := make(map[int]int, len(members))
	total := 0
	for _, name := range sortedKeys(members) {
		u.use(name)
		kp := fmt.Sprintf("%s[%q]", p, name)
		id, ok := w.Topology.Lookup(name)
		if !ok {
			return nil, fieldErr(kp, "node %q is not in the topology", name)
		}
		if !slices.Contains(r.Nodes, id) {
			return nil, fieldErr(kp, "node %q is not one of the job's nodes", name)
		}
		n, err := parseInt(kp, members[name], 1, maxUnitsPerNode)
		if err != nil {
			return nil, err
		}
		units[id] = int(n)
		total += int(n)
	}
	for _, id := range r.Nodes {
		if _, ok := units[id]; !ok {
			return nil, fieldErr(p, "node %q of the job has no units entry", w.Topology.Name(id))
		}
	}
	if want := r.Select.Units(); total != want {
		return nil, fieldErr(p, "the units add up to %d, the select has %d", total, want)
	}
	return units, nil
}

// readReservations reads "reservations": a list of {id, nodes, start,
// end} keeping waiting jobs off nodes over [start, end).
func readReservations(root *jobj, w *model.Window) error {
	return root.objects("reservations", false, maxRunning, "reservations", func(path string, o *jobj) error {
		var err error
		var r model.Reservation
		if r.ID, err = o.str("id", false, ""); err != nil {
			return err
		}
		if r.Nodes, err = o.nodes(path, w.Topology); err != nil {
			return err
		}
		slices.Sort(r.Nodes)
		if r.Start, err = o.int("start", true, 0, 0, model.MaxTime); err != nil {
			return err
		}
		if r.End, err = o.int("end", true, 0, 0, model.MaxTime); err != nil {
			return err
		}
		if r.End <= r.Start {
			return fieldErr(path+".end", "must be after start %d", r.Start)
		}
		if r.End <= w.Time {
			return fieldErr(path+".end", "must be after the window time %d (drop a reservation that is over)", w.Time)
		}
		if err := o.unknown(); err != nil {
			return err
		}
		w.Reservations = append(w.Reservations, r)
		return nil
	})
}
