// Command gen writes the small Go runtime profiles shipped in testdata/profiles.
//
//	go run ./testdata/gen -out testdata/profiles
//
// The profiles are real runtime/pprof output, so they change every time they are made; the
// committed files are the reference, and the tests' expectations come from them.
package main

import (
	"crypto/sha256"
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
	flag.Parse()
	runtime.MemProfileRate = 4096

	f, err := os.Create(filepath.Join(*out, "cpu.pb.gz"))
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Fatal(err)
	}
	work(time.Now().Add(3 * time.Second))
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}

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
