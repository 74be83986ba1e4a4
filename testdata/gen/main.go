// Command gen writes the small Go runtime profiles shipped in testdata/profiles. From the
// repository's root (make testdata-profiles runs both):
//
//	go run -gcflags=-trimpath=$PWD ./testdata/gen -out testdata/profiles
//	go run -gcflags=-trimpath=$PWD ./testdata/gen -diff -out testdata/profiles/diff
//
// -gcflags=-trimpath=$PWD makes the compiler record this file as testdata/gen/main.go,
// relative to the root, where profq list and pprof -list find it on any checkout (the
// standard library's frames keep this machine's GOROOT paths, which profq list maps to the
// reader's GOROOT). Regenerate the profiles whenever this file's functions move:
// TestShippedProfilesMatchSources (internal/cli) fails until the lines match again.
//
// With -diff it writes the captures of profq diff's examples instead: four 2 s CPU profiles
// of a base workload and four of a changed one, in which SHA-256 hashing does 2.5 times the work,
// sorting is gone and JSON encoding is new.
//
// The profiles are real runtime/pprof output, so they change every time they are made (make
// them on an idle machine: under load a CPU profile holds fewer samples, more of them in the
// scheduler); the committed files are the reference, and the tests' expectations come from
// them.
package main

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"time"
)

var sink any

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func hashData(rounds int) [32]byte {
	var sum [32]byte
	buf := make([]byte, 4096)
	for i := 0; i < rounds; i++ {
		buf[i%len(buf)] = byte(i)
		sum = sha256.Sum256(buf)
	}
	return sum
}

func sortInts(n int) {
	xs := make([]int, n)
	for i := range xs {
		xs[i] = (i * 7919) % n
	}
	sort.Ints(xs)
	sink = xs
}

func square(x int) int { return x * x } // small enough to be inlined

func sumSquares(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += square(i)
	}
	return s
}

func buildStrings(n int) string {
	var parts []string
	for i := 0; i < n; i++ {
		parts = append(parts, fmt.Sprintf("item-%d", i))
	}
	return strings.Join(parts, ",")
}

func encodeJSON(n int) []byte {
	items := make([]map[string]int, n)
	for i := range items {
		items[i] = map[string]int{"id": i, "square": square(i)}
	}
	out, err := json.Marshal(items)
	if err != nil {
		panic(err)
	}
	return out
}

// changedWork is work after a change: hashing does 2.5 times as much, sorting is gone, and JSON
// encoding is new.
func changedWork(until time.Time) {
	for time.Now().Before(until) {
		sink = fib(24)
		sink = hashData(500)
		sink = sumSquares(2_000_000)
		sink = buildStrings(2000)
		sink = encodeJSON(2000)
	}
}

// writeCPU profiles f for d into path.
func writeCPU(path string, f func(time.Time), d time.Duration) {
	out, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		log.Fatal(err)
	}
	f(time.Now().Add(d))
	pprof.StopCPUProfile()
	if err := out.Close(); err != nil {
		log.Fatal(err)
	}
}

func work(until time.Time) {
	for time.Now().Before(until) {
		sink = fib(24)
		sink = hashData(200)
		sortInts(20000)
		sink = sumSquares(2_000_000)
		sink = buildStrings(2000)
	}
}

func main() {
	out := flag.String("out", "testdata/profiles", "directory to write the profiles to")
	diff := flag.Bool("diff", false, "write the base and new captures of the diff examples")
	flag.Parse()
	runtime.MemProfileRate = 4096

	if *diff {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			log.Fatal(err)
		}
		for i := 1; i <= 4; i++ {
			writeCPU(filepath.Join(*out, fmt.Sprintf("base-%d.pb.gz", i)), work, 2*time.Second)
			writeCPU(filepath.Join(*out, fmt.Sprintf("new-%d.pb.gz", i)), changedWork, 2*time.Second)
		}
		return
	}
	writeCPU(filepath.Join(*out, "cpu.pb.gz"), work, 3*time.Second)

	runtime.GC()
	h, err := os.Create(filepath.Join(*out, "heap.pb.gz"))
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.Lookup("heap").WriteTo(h, 0); err != nil {
		log.Fatal(err)
	}
	if err := h.Close(); err != nil {
		log.Fatal(err)
	}
}
