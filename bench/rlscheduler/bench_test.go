package rlscheduler

import (
	"context"
	"testing"
)

// BenchmarkSequence replays one Lublin-1 sequence of 1,024 jobs under
// each published policy, their backfilling and EASY.
func BenchmarkSequence(b *testing.B) {
	w, err := Open(shipped[0].path, LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	seq := Sequence{w, Starts[0], SequenceLength}
	for _, p := range Published {
		for _, bf := range []bool{false, true} {
			name := p
			if bf {
				name += "-backfill"
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					if _, err := Replay(context.Background(), seq, p, bf); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	b.Run("easy", func(b *testing.B) {
		for b.Loop() {
			if _, err := Simulate(context.Background(), seq, EASY{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
