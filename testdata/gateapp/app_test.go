package gateapp

import "testing"

var sink uint64

// BenchmarkApp is what the gate evaluation captures: `go test -bench App -cpuprofile ...`.
func BenchmarkApp(b *testing.B) {
	k := KnobsFromEnv()
	b.ReportAllocs()
	for b.Loop() {
		sink += Work(k)
	}
}
