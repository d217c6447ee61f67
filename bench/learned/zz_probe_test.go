package learned

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/optsched/optsched/bench/rlscheduler"
)

type ruleChooser struct {
	key      func(w rlscheduler.Waiting, now int64) float64
	fitFirst bool
}

func (c *ruleChooser) Choose(now int64, free, nodes int, waiting []rlscheduler.Waiting) int {
	best, bk, bfit := -1, math.Inf(1), false
	for i, w := range waiting {
		k := c.key(w, now)
		fit := c.fitFirst && w.Nodes <= free
		if best < 0 || (fit && !bfit) || (fit == bfit && k < bk) {
			best, bk, bfit = i, k, fit
		}
	}
	return best
}

func f1k(w rlscheduler.Waiting, _ int64) float64 {
	return math.Log10(pos(float64(w.Request)))*float64(w.Nodes) + 870*math.Log10(pos(float64(w.Submit)))
}
func pos(x float64) float64 {
	if x <= 0 {
		return 0.1
	}
	return x
}

func TestZZProbe(t *testing.T) {
	tr := os.Getenv("PROBE_TRACE")
	if tr == "" {
		t.Skip()
	}
	drop := 0
	if strings.Contains(tr, "HPC2N") {
		drop = 5
	}
	w, err := rlscheduler.Open(tr, rlscheduler.LoadOptions{DropFirst: drop})
	if err != nil {
		t.Fatal(err)
	}
	L, _ := strconv.Atoi(os.Getenv("PROBE_LEN"))
	var starts []int
	for _, s := range strings.Split(os.Getenv("PROBE_STARTS"), ",") {
		v, _ := strconv.Atoi(s)
		starts = append(starts, v)
	}
	rules := map[string]*ruleChooser{
		"f1":      {key: f1k},
		"ff-f1":   {key: f1k, fitFirst: true},
		"ff-sjf":  {key: func(w rlscheduler.Waiting, _ int64) float64 { return float64(w.Request) + float64(w.Submit)*1e-12 }, fitFirst: true},
		"ff-area": {key: func(w rlscheduler.Waiting, _ int64) float64 { return float64(w.Request) * float64(w.Nodes) }, fitFirst: true},
	}
	names := []string{"f1", "ff-f1", "ff-sjf", "ff-area"}
	fmt.Printf("%d jobs\n", len(w.Jobs))
	for _, name := range append([]string{"F1pub", "SJFpub"}, names...) {
		var sum float64
		line := ""
		for _, s := range starts {
			seq := rlscheduler.Sequence{W: w, Start: s, Len: L}
			var sc *rlscheduler.Schedule
			switch name {
			case "F1pub":
				sc, err = rlscheduler.Replay(context.Background(), seq, "f1", false)
			case "SJFpub":
				sc, err = rlscheduler.Replay(context.Background(), seq, "sjf", false)
			default:
				sc, err = rlscheduler.ReplayChooser(context.Background(), seq, rules[name])
			}
			if err != nil {
				t.Fatal(err)
			}
			m := sc.Mean()
			sum += m
			line += fmt.Sprintf(" %.2f", m)
		}
		fmt.Printf("%-8s mean %.2f |%s\n", name, sum/float64(len(starts)), line)
	}
}
