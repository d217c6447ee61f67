package rlscheduler

// A Row is a row of RLScheduler's Tables V–VI: the average bounded
// slowdown each policy reached on one trace, with or without
// backfilling, as published (D. Zhang et al., SC'20).
type Row struct {
	Trace    string
	Backfill bool
	// Value by policy name: fcfs, wfp3, uni, sjf, f1 and rl (the
	// learned policy).
	Value map[string]float64
}

// Paper holds the published rows of the two traces optsched ships.
// SDSC-SP2 and Lublin-2 are not in the repository.
var Paper = []Row{
	{"lublin-1", false, map[string]float64{"fcfs": 7273.77, "wfp3": 19753.53, "uni": 22274.74, "sjf": 277.35, "f1": 258.37, "rl": 254.67}},
	{"hpc2n", false, map[string]float64{"fcfs": 297.18, "wfp3": 426.99, "uni": 609.77, "sjf": 157.71, "f1": 118.01, "rl": 117.01}},
	{"lublin-1", true, map[string]float64{"fcfs": 235.82, "wfp3": 133.87, "uni": 307.23, "sjf": 73.31, "f1": 75.07, "rl": 58.64}},
	{"hpc2n", true, map[string]float64{"fcfs": 127.38, "wfp3": 97.39, "uni": 175.12, "sjf": 122.04, "f1": 71.95, "rl": 86.14}},
}

// PaperRow returns the published row of a trace ("lublin-1", "hpc2n")
// and mode, or nil.
func PaperRow(trace string, backfill bool) *Row {
	for i := range Paper {
		if Paper[i].Trace == trace && Paper[i].Backfill == backfill {
			return &Paper[i]
		}
	}
	return nil
}
