package nsa

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// FuzzReadPolicy: the weights reader never panics on any input, and what
// it accepts writes back to a file that reads as the same network.
func FuzzReadPolicy(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, a := range []Arch{FCN1, CNN1} {
		p, err := NewPolicy(a, 16, a == CNN1, a == FCN1, 40, rng)
		if err != nil {
			f.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WritePolicy(&buf, p); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
		f.Add(gunzip(f, buf.Bytes()))
		f.Add(buf.Bytes()[:len(buf.Bytes())/2])
	}
	f.Add([]byte(weightsMagic))
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ReadPolicy(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WritePolicy(&buf, p); err != nil {
			t.Fatal(err)
		}
		q, err := ReadPolicy(&buf)
		if err != nil {
			t.Fatalf("a policy the reader accepted does not read back: %v", err)
		}
		x := make([]float64, p.Beta()*p.Net.Q)
		for i := range x {
			x[i] = float64(i%7) / 7
		}
		a := append([]float64(nil), p.Net.Forward(x, 1)...)
		b := q.Net.Forward(x, 1)
		for i := range a {
			if a[i] != b[i] && !(a[i] != a[i] && b[i] != b[i]) {
				t.Fatalf("output %d: %v, after a round trip %v", i, a[i], b[i])
			}
		}
	})
}
