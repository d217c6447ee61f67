package lan2023

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// roundTrip returns r as read back from its JSON, as bench merge sees it.
func roundTrip(t *testing.T, r *TableResult) TableResult {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out TableResult
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// untimed clears the wall-clock figures, which differ between runs.
func untimed(r *TableResult) {
	r.Elapsed = 0
	for i := range r.Epochs {
		for m := range r.Epochs[i].Rows {
			r.Epochs[i].Rows[m].MeanTimeMS, r.Epochs[i].Rows[m].MaxTimeMS = 0, 0
		}
	}
	for m := range r.Summary {
		r.Summary[m].MeanTimeMS, r.Summary[m].MaxTimeMS = 0, 0
	}
}

func TestMergeTablesEqualsWholeRun(t *testing.T) {
	tr := tblSynthetic(5, 500)
	cfg := tblSmall()
	cfg.Epochs = 5
	cfg.NSASteps = -1 // NSA's SA-eq column runs for NSA's wall time: not reproducible
	whole, err := RunTables(context.Background(), tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var shards []TableResult
	for i := range 3 { // in reverse order: the merge sorts the epochs
		c := cfg
		c.Shard, c.Shards = 2-i, 3
		r, err := RunTables(context.Background(), tr, c)
		if err != nil {
			t.Fatal(err)
		}
		if want := []int{1, 2, 2}[i]; len(r.Epochs) != want {
			t.Fatalf("shard %d/3 ran %d epochs, want %d", 2-i, len(r.Epochs), want)
		}
		shards = append(shards, roundTrip(t, r))
	}
	m, err := MergeTables(shards)
	if err != nil {
		t.Fatal(err)
	}
	w := roundTrip(t, whole)
	untimed(m)
	untimed(&w)
	if !reflect.DeepEqual(m, &w) {
		a, _ := json.Marshal(m)
		b, _ := json.Marshal(&w)
		t.Fatalf("merged shards differ from the whole run:\n%s\n%s", a, b)
	}

	// Errors: an epoch twice, another protocol, another benchmark, none.
	for _, c := range []struct {
		name string
		rs   []TableResult
	}{
		{"duplicate", []TableResult{shards[0], shards[0]}},
		{"protocol", func() []TableResult {
			o := roundTrip(t, &shards[1])
			o.Config.Seed++
			return []TableResult{shards[0], o}
		}()},
		{"benchmark", func() []TableResult {
			o := roundTrip(t, &shards[1])
			o.Benchmark = "scas"
			return []TableResult{shards[0], o}
		}()},
		{"rows", func() []TableResult {
			o := roundTrip(t, &shards[1])
			o.Epochs[0].Rows = o.Epochs[0].Rows[:1]
			return []TableResult{o}
		}()},
		{"none", nil},
	} {
		if _, err := MergeTables(c.rs); !errors.Is(err, ErrTableConfig) {
			t.Errorf("%s: err %v, want ErrTableConfig", c.name, err)
		}
	}
	bad := cfg
	bad.Shard, bad.Shards = 3, 3
	if _, err := RunTables(context.Background(), tr, bad); !errors.Is(err, ErrTableConfig) {
		t.Errorf("shard 3/3: err %v", err)
	}
}
