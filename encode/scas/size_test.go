package scas

import (
	"testing"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
)

// TestSizeMatchesBuild: Size gives exactly the variables, rows and
// nonzeros of the program Build writes, in both forms.
func TestSizeMatchesBuild(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		cfg := instances.PaperGenConfig()
		cfg.Seed, cfg.Idle, cfg.Jobs = seed, 60+int(seed)*20, 6
		w, err := instances.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sel := model.SelectJobs(w, 0)
		for _, f := range []Formulation{Strong, Paper} {
			e, err := Build(w, sel.Multi, f)
			if err != nil {
				t.Fatal(err)
			}
			v, r, nz := Size(w, sel.Multi, f)
			if v != int64(e.Program.NumVars()) || r != int64(len(e.Program.Rows)) || nz != int64(e.Program.NumNonzeros()) {
				t.Errorf("seed %d %v: Size = %d vars, %d rows, %d nonzeros; Build wrote %d, %d, %d",
					seed, f, v, r, nz, e.Program.NumVars(), len(e.Program.Rows), e.Program.NumNonzeros())
			}
		}
	}
}
