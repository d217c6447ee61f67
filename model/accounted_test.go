package model_test

import (
	"strings"
	"testing"

	"github.com/optsched/optsched/model"
)

func TestCheckAccounted(t *testing.T) {
	w := &model.Window{Jobs: []model.Job{{ID: "a"}, {ID: "b"}, {ID: "c"}}}
	ok := []model.Allocation{{Job: 0}, {Job: 2}}
	def := []model.Deferral{{Job: 1, Reason: "waits"}}
	if err := model.CheckAccounted(w, ok, def); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		allocs []model.Allocation
		def    []model.Deferral
		want   string
	}{
		"nothing":       {nil, nil, "3 missing"},
		"dropped":       {ok, nil, "1 missing"},
		"twice":         {ok, []model.Deferral{{Job: 1, Reason: "x"}, {Job: 0, Reason: "x"}}, "job a appears 2 times"},
		"invented":      {ok, []model.Deferral{{Job: 1, Reason: "x"}, {Job: 7, Reason: "x"}}, "index 7"},
		"no reason":     {ok, []model.Deferral{{Job: 1}}, "without a reason"},
		"unknown alloc": {[]model.Allocation{{Job: -1}}, def, "index -1"},
	} {
		if err := model.CheckAccounted(w, c.allocs, c.def); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}
