// Package gateapp is the workload of profq diff's gate evaluation (tools/gateeval): a small
// service-like loop that encodes and decodes JSON, sorts, hashes with SHA-256, counts words in a
// map, and scores its records in one function, Score, that holds 5-10% of the CPU time.
//
// Two environment variables inject the regressions the evaluation must catch, as a code change
// would: GATEAPP_CPU=1.2 makes Score do 20% more work, GATEAPP_ALLOC=1.2 makes it allocate 20%
// more objects. Unset (or 1), the workload is the base.
package gateapp

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Knobs scale the work and the allocations of Score.
type Knobs struct {
	CPU   float64 // work factor: 1 is the base, 1.2 is 20% more
	Alloc float64 // allocation factor
}

// KnobsFromEnv reads GATEAPP_CPU and GATEAPP_ALLOC; a missing or malformed value is 1.
func KnobsFromEnv() Knobs {
	return Knobs{CPU: factor("GATEAPP_CPU"), Alloc: factor("GATEAPP_ALLOC")}
}

func factor(name string) float64 {
	v, err := strconv.ParseFloat(os.Getenv(name), 64)
	if err != nil || v <= 0 {
		return 1
	}
	return v
}

// Record is one item the workload processes.
type Record struct {
	ID    int               `json:"id"`
	Name  string            `json:"name"`
	Tags  []string          `json:"tags"`
	Score float64           `json:"score"`
	Attrs map[string]string `json:"attrs"`
}

// records builds n records deterministically.
func records(n int) []Record {
	out := make([]Record, n)
	for i := range out {
		out[i] = Record{
			ID:   i,
			Name: "record-" + strconv.Itoa(i*7919%n),
			Tags: []string{"alpha", "beta", strconv.Itoa(i % 13)},
			Attrs: map[string]string{
				"region": []string{"eu", "us", "ap"}[i%3],
				"tier":   strconv.Itoa(i % 5),
			},
		}
	}
	return out
}

// Work runs one iteration of the workload and returns a checksum, so that nothing is optimized
// away.
func Work(k Knobs) uint64 {
	recs := records(200)
	data, err := json.Marshal(recs)
	if err != nil {
		panic(err)
	}
	var back []Record
	if err := json.Unmarshal(data, &back); err != nil {
		panic(err)
	}
	var sum uint64
	for i := range back {
		back[i].Score = Score(&back[i], k)
	}
	sort.Slice(back, func(i, j int) bool {
		if back[i].Score != back[j].Score {
			return back[i].Score < back[j].Score
		}
		return back[i].Name < back[j].Name
	})
	h := sha256.Sum256(data)
	for i := 0; i < 6; i++ {
		h = sha256.Sum256(append(h[:], data[:len(data)/2]...))
	}
	sum += uint64(h[0]) | uint64(h[1])<<8
	sum += uint64(countWords(data))
	return sum + uint64(back[0].ID)
}

// countWords counts the distinct tokens of data in a map.
func countWords(data []byte) int {
	counts := make(map[string]int)
	for _, w := range strings.FieldsFunc(string(data), func(r rune) bool { return r == '"' || r == ',' || r == ':' }) {
		counts[w]++
	}
	return len(counts)
}

// scoreRounds is the base amount of work Score does per record.
const scoreRounds = 120

// scoreAllocs is the base number of small objects Score allocates per record.
const scoreAllocs = 5

// Score is the function the injected regressions change: its arithmetic loop runs k.CPU times
// as long, and it allocates k.Alloc times as many objects.
//
//go:noinline
func Score(r *Record, k Knobs) float64 {
	x := float64(r.ID + 1)
	n := int(scoreRounds*k.CPU + 0.5)
	for i := 0; i < n; i++ {
		x = x*1.0000001 + float64(len(r.Name)^i)/(x+1)
	}
	m := int(scoreAllocs*k.Alloc + 0.5)
	keep := make([]*string, 0, 2)
	for i := 0; i < m; i++ {
		s := fmt.Sprint(r.ID + i) // one small string per round, on the heap
		if i < 2 {
			keep = append(keep, &s)
		}
	}
	return x + float64(len(keep))
}
