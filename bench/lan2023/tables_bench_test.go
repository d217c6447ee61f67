package lan2023

import (
	"context"
	"fmt"
	"testing"

	"github.com/optsched/optsched/bench/trace"
)

// BenchmarkTables runs the whole Table III/IV protocol (10 epochs × 100
// periods on the paper's trace, every method; the target: ≤ 60 s
// on 2 cores) with one worker and with one per CPU.
func BenchmarkTables(b *testing.B) {
	tr, err := trace.Open(tblTracePath, "lan", trace.Options{})
	if err != nil {
		b.Fatalf("the trace the repository ships (instances/traces) cannot be read: %v", err)
	}
	for _, workers := range []int{1, 0} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			cfg := DefaultTableConfig()
			cfg.Workers = workers
			windows := 0
			for b.Loop() {
				r, err := RunTables(context.Background(), tr, cfg)
				if err != nil {
					b.Fatal(err)
				}
				windows = r.Windows
			}
			b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N), "s/protocol")
			b.ReportMetric(float64(windows), "windows")
		})
	}
}
