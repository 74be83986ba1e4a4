package parity

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/profq/profq/internal/testkit/benchdata"
)

// TestMain points pprof's home and temporary directories at a scratch directory, pins the time
// zone, and holds the directory where the Go runtime profiles are generated.
func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

// scratchDir is created by TestMain and removed when the tests pass.
var scratchDir string

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "profq-parity-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	scratchDir = dir
	code := runTests(m, dir)
	if code != 0 {
		// The generated profiles differ from run to run: keep them so that a failure can be
		// reproduced.
		fmt.Fprintf(os.Stderr, "parity: tests failed; profiles and scratch files kept in %s\n", dir)
		return code
	}
	os.RemoveAll(dir)
	return code
}

func runTests(m *testing.M, dir string) int {
	// Locate pprof's module while HOME (and so the default GOPATH) is still the user's: the
	// answer is remembered for the whole binary.
	benchdata.PprofDir()
	// Set once for the whole binary: t.Setenv cannot be combined with parallel tests.
	for k, v := range map[string]string{
		"HOME":              dir,
		"PPROF_TMPDIR":      filepath.Join(dir, "pprof"),
		"PPROF_BINARY_PATH": filepath.Join(dir, "binaries"),
		"PPROF_TOOLS":       "",
		"TZ":                "UTC",
	} {
		os.Setenv(k, v)
	}
	return m.Run()
}

// pprofTestdata lists the profiles from pprof's own module that the parity tests use, relative
// to the module directory.
var pprofTestdata = []string{
	"profile/testdata/cppbench.cpu",
	"profile/testdata/cppbench.heap",
	"profile/testdata/cppbench.contention",
	"profile/testdata/cppbench.growth",
	"profile/testdata/cppbench.thread",
	"profile/testdata/java.cpu",
	"profile/testdata/java.heap",
	"profile/testdata/java.contention",
	"profile/testdata/gobench.cpu",
	"profile/testdata/gobench.heap",
	"profile/testdata/go.crc32.cpu",
	"profile/testdata/go.godoc.thread",
	"internal/proftest/testdata/large.cpu",
	"internal/report/testdata/sample.cpu",
}

// pprofProfile returns the path of one of pprof's test profiles, failing the test if pprof's
// module source is missing.
func pprofProfile(t testing.TB, rel string) string {
	t.Helper()
	return benchdata.PprofTestdata(t, rel)
}

var fileCache sync.Map // path -> []byte

func readFileCached(path string) ([]byte, error) {
	if v, ok := fileCache.Load(path); ok {
		return v.([]byte), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fileCache.Store(path, data)
	return data, nil
}

// Generated Go runtime profiles, written once per test binary into scratchDir.
type generatedProfiles struct {
	CPU, Heap, Mutex, Block string
	// NoCPU says why there is no CPU profile (CPU == ""): the test binary may already be
	// profiling itself (go test -cpuprofile).
	NoCPU string
}

var generated = sync.OnceValues(func() (generatedProfiles, error) {
	var g generatedProfiles
	var err error
	dir := filepath.Join(scratchDir, "generated")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return g, err
	}
	if g.CPU, err = writeCPUProfile(dir); err != nil {
		g.CPU, g.NoCPU = "", err.Error()
	}
	if g.Heap, err = writeHeapProfile(dir); err != nil {
		return g, err
	}
	if g.Mutex, err = writeMutexProfile(dir); err != nil {
		return g, err
	}
	if g.Block, err = writeBlockProfile(dir); err != nil {
		return g, err
	}
	return g, nil
})

func generatedProfile(t testing.TB) generatedProfiles {
	t.Helper()
	g, err := generated()
	if err != nil {
		t.Fatalf("generating Go runtime profiles: %v", err)
	}
	return g
}

func writeCPUProfile(dir string) (string, error) {
	path := filepath.Join(dir, "go.cpu.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return "", fmt.Errorf("starting the CPU profile: %w", err)
	}
	var wg sync.WaitGroup
	results := make([]uint64, 2)
	deadline := time.Now().Add(1500 * time.Millisecond)
	for i, worker := range []string{"alpha", "beta"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pprof.Do(context.Background(), pprof.Labels("worker", worker), func(context.Context) {
				results[i] = cpuWorkload(deadline, i)
			})
		}()
	}
	wg.Wait()
	pprof.StopCPUProfile()
	if results[0] == 42 && results[1] == 42 {
		fmt.Fprintln(os.Stderr, "unlikely workload result")
	}
	return path, f.Close()
}

// cpuWorkload spends CPU in several distinct functions until the deadline: recursion (fib,
// walkTree), small functions the compiler inlines (square, mix), and library code (hashing,
// sorting, maps, formatting).
func cpuWorkload(deadline time.Time, seed int) uint64 {
	var acc uint64
	buf := make([]byte, 4096)
	for i := range buf {
		buf[i] = byte(i*7 + seed)
	}
	for round := 0; time.Now().Before(deadline); round++ {
		acc += uint64(fib(22 + seed%2))
		acc += uint64(floatLoop(200000 + round%7))
		acc += hashLoop(buf, 40)
		acc += uint64(sortLoop(2000, round))
		acc += uint64(mapLoop(3000, round))
		acc += uint64(walkTree(12))
		if seed == 1 {
			acc += uint64(formatLoop(500))
		}
	}
	return acc
}

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func square(x float64) float64 { return x * x }

func mix(a, b uint64) uint64 { return (a ^ b) * 0x9e3779b97f4a7c15 }

func floatLoop(n int) float64 {
	s := 0.0
	for i := 0; i < n; i++ {
		s += math.Sqrt(square(float64(i))) + math.Abs(float64(n-i))
	}
	return s
}

func hashLoop(buf []byte, n int) uint64 {
	var acc uint64
	for i := 0; i < n; i++ {
		sum := sha256.Sum256(buf)
		acc = mix(acc, uint64(sum[0])) + uint64(crc32.ChecksumIEEE(buf))
	}
	return acc
}

func sortLoop(n, seed int) int {
	xs := make([]int, n)
	for i := range xs {
		xs[i] = (i*7919 + seed) % n
	}
	sort.Ints(xs)
	ys := slices.Clone(xs)
	slices.Reverse(ys)
	slices.Sort(ys)
	return xs[n/2] + ys[0]
}

func mapLoop(n, seed int) int {
	m := make(map[int]int)
	for i := 0; i < n; i++ {
		m[i*31+seed] = i
	}
	s := 0
	for k, v := range m {
		s += k ^ v
	}
	return s
}

func walkTree(depth int) int {
	if depth == 0 {
		return 1
	}
	return walkTree(depth-1) + walkTree(depth-1)&0xff + 1
}

func formatLoop(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += len(strconv.Itoa(i)) + len(fmt.Sprintf("%d-%x", i, i))
	}
	return s
}

func writeHeapProfile(dir string) (string, error) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	keep := heapWorkload()
	runtime.GC()
	// The writer scales each record by the rate in force when it writes, so the rate is
	// restored only afterwards.
	path, err := writeLookup(dir, "heap", "go.heap.pb.gz")
	runtime.MemProfileRate = old
	runtime.KeepAlive(keep)
	return path, err
}

// heapWorkload allocates objects of several sizes from several call paths, keeping some alive
// so the profile has both in-use and freed memory.
func heapWorkload() [][]byte {
	var keep [][]byte
	for i := 0; i < 200; i++ {
		keep = append(keep, allocSmall(i))
		_ = allocLarge(i)
		if i%3 == 0 {
			keep = append(keep, allocLarge(i))
		}
		keep = append(keep, allocTree(4, i)...)
		keep = append(keep, []byte(fmt.Sprintf("string %d", i)))
	}
	m := make(map[string][]int)
	for i := 0; i < 500; i++ {
		m[strconv.Itoa(i)] = make([]int, i%17+1)
	}
	keep = append(keep, []byte(strconv.Itoa(len(m))))
	return keep
}

func allocSmall(i int) []byte { return make([]byte, 16+i%64) }

func allocLarge(i int) []byte { return make([]byte, 8192+i*128) }

func allocTree(depth, i int) [][]byte {
	if depth == 0 {
		return [][]byte{make([]byte, 256+i)}
	}
	return append(allocTree(depth-1, i), make([]byte, 32*depth))
}

func writeMutexProfile(dir string) (string, error) {
	old := runtime.SetMutexProfileFraction(1)
	defer runtime.SetMutexProfileFraction(old)
	var a, b sync.Mutex
	var wg sync.WaitGroup
	var countA, countB int // each guarded by its mutex
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				if (g+i)%3 == 0 {
					lockSlow(&a, &countA)
				} else {
					lockFast(&b, &countB)
				}
			}
		}()
	}
	wg.Wait()
	return writeLookup(dir, "mutex", "go.mutex.pb.gz")
}

func lockSlow(mu *sync.Mutex, counter *int) {
	mu.Lock()
	for i := 0; i < 2000; i++ {
		*counter += i & 1
	}
	mu.Unlock()
}

func lockFast(mu *sync.Mutex, counter *int) {
	mu.Lock()
	*counter++
	runtime.Gosched()
	mu.Unlock()
}

func writeBlockProfile(dir string) (string, error) {
	runtime.SetBlockProfileRate(1)
	defer runtime.SetBlockProfileRate(0)
	ch := make(chan int)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			consume(ch, done)
		}()
	}
	produce(ch, 400)
	close(done)
	wg.Wait()
	waitGroupWait()
	return writeLookup(dir, "block", "go.block.pb.gz")
}

func produce(ch chan<- int, n int) {
	for i := 0; i < n; i++ {
		if i%50 == 0 {
			time.Sleep(time.Millisecond)
		}
		ch <- i
	}
}

func consume(ch <-chan int, done <-chan struct{}) {
	for {
		select {
		case <-ch:
		case <-done:
			return
		}
	}
}

func waitGroupWait() {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		time.Sleep(5 * time.Millisecond)
		wg.Done()
	}()
	wg.Wait()
}

func writeLookup(dir, name, file string) (string, error) {
	path := filepath.Join(dir, file)
	var buf bytes.Buffer
	if err := pprof.Lookup(name).WriteTo(&buf, 0); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, buf.Bytes(), 0o644)
}

// filterValues are the filter expressions used on one profile, derived from its own frames so
// that each matches something.
type filterValues struct {
	Focus, Ignore, Hide, Show, ShowFrom, PruneFrom string
	// IgnoreInFocus is an ignore that removes some but not all of the samples Focus keeps.
	IgnoreInFocus       string
	TagFocus, TagIgnore []string // empty when the profile has no labels
	SampleTypes         []string
}

// noMatch is a regexp that matches no frame of any test profile.
const noMatch = "^profq_no_such_frame$"

var filterCache sync.Map // path -> filterValues

// deriveFilters picks filter expressions from a profile's frames: a focus on the frame whose
// samples carry closest to half of the profile's value, an ignore on one with about a quarter,
// a hide on the heaviest leaf, and so on. Frames without function names are named by their
// binary, which the name filters also match.
func deriveFilters(path string) (filterValues, error) {
	if v, ok := filterCache.Load(path); ok {
		return v.(filterValues), nil
	}
	p, err := readProfile(path)
	if err != nil {
		return filterValues{}, err
	}
	var fv filterValues
	for _, st := range p.SampleType {
		fv.SampleTypes = append(fv.SampleTypes, st.Type)
	}

	// Frames are weighed by the |value| (default sample type) of the samples they appear in,
	// so that a filter chosen to keep part of the profile keeps a part that has a value.
	idx, err := p.SampleIndexByName("")
	if err != nil {
		return filterValues{}, err
	}
	count := map[string]int64{}      // value of samples whose stack has the frame
	leafCount := map[string]int64{}  // value of samples whose leaf is the frame
	innerCount := map[string]int64{} // value of samples where a named function is not the leaf
	isFunc := map[string]bool{}
	type weightedKeys struct {
		w    int64
		keys map[string]bool // the frames of one sample
	}
	var weighted []weightedKeys
	var n int64
	for _, s := range p.Sample {
		w := s.Value[idx]
		if w < 0 {
			w = -w
		}
		n += w
		seen, seenInner := map[string]bool{}, map[string]bool{}
		weighted = append(weighted, weightedKeys{w, seen})
		for i, loc := range s.Location {
			var keys []string
			for _, ln := range loc.Line {
				if ln.Function != nil && ln.Function.Name != "" {
					keys = append(keys, ln.Function.Name)
					isFunc[ln.Function.Name] = true
				}
			}
			if len(keys) == 0 && loc.Mapping != nil && loc.Mapping.File != "" {
				keys = append(keys, filepath.Base(loc.Mapping.File))
			}
			for j, k := range keys {
				if i == 0 && j == 0 {
					leafCount[k] += w
				} else if isFunc[k] && !seenInner[k] {
					seenInner[k] = true
					innerCount[k] += w
				}
				if !seen[k] {
					seen[k] = true
					count[k] += w
				}
			}
		}
	}
	closest := func(m map[string]int64, target int64, exclude ...string) string {
		return closestKey(m, n, target, exclude...)
	}
	quote := func(k string) string {
		if k == "" {
			return noMatch
		}
		return regexp.QuoteMeta(k)
	}
	focus := closest(count, n/2)
	if focus == "" {
		// Every frame is in every sample: focus on any of them.
		for _, k := range sortedKeys(count) {
			if count[k] > 0 {
				focus = k
				break
			}
		}
	}
	fv.Focus = quote(focus)
	fv.ShowFrom = fv.Focus
	fv.Ignore = quote(closest(count, n/4, focus))
	inFocus := map[string]int64{}
	var nf int64
	for _, wk := range weighted {
		if wk.keys[focus] {
			nf += wk.w
			for k := range wk.keys {
				inFocus[k] += wk.w
			}
		}
	}
	fv.IgnoreInFocus = quote(closestKey(inFocus, nf, nf/2, focus))
	hide := ""
	for _, k := range sortedKeys(leafCount) {
		if hide == "" || leafCount[k] > leafCount[hide] {
			hide = k
		}
	}
	fv.Hide = quote(hide)
	// show keeps matching lines only, so frames without lines (address-only locations) are
	// hidden even when their binary matches: build it from function names.
	var show []string
	for _, k := range []string{focus, hide, closest(count, n/4, focus, hide)} {
		if isFunc[k] && !slices.Contains(show, regexp.QuoteMeta(k)) {
			show = append(show, regexp.QuoteMeta(k))
		}
	}
	fv.Show = noMatch
	if len(show) > 0 {
		fv.Show = strings.Join(show, "|")
	}
	// prune_from matches simplified function names only, which end at the first '('.
	prunable := map[string]int64{}
	for k, c := range innerCount {
		if !strings.Contains(k, "(") {
			prunable[k] = c
		}
	}
	fv.PruneFrom = noMatch
	if k := closest(prunable, n/2); k != "" {
		fv.PruneFrom = "^" + regexp.QuoteMeta(k) + "$"
	}

	// Tag filters: on the first string label, its first value (with and without the key) and
	// its last; on the numeric "bytes" label, ranges from its median and from 1kB, and an
	// ignore of the largest sizes.
	strVals := map[string]map[string]int{}
	var bytesVals []int64
	for _, s := range p.Sample {
		for k, vs := range s.Label {
			if strVals[k] == nil {
				strVals[k] = map[string]int{}
			}
			for _, v := range vs {
				strVals[k][v]++
			}
		}
		bytesVals = append(bytesVals, s.NumLabel["bytes"]...)
	}
	for _, k := range sortedKeys(strVals) {
		vals := sortedKeys(strVals[k])
		fv.TagFocus = append(fv.TagFocus, k+"="+regexp.QuoteMeta(vals[0]))
		fv.TagIgnore = append(fv.TagIgnore, k+"="+regexp.QuoteMeta(vals[len(vals)-1]))
		fv.TagFocus = append(fv.TagFocus, regexp.QuoteMeta(vals[0])) // keyless: matches key:value
		break
	}
	if len(bytesVals) > 0 {
		slices.Sort(bytesVals)
		med := bytesVals[len(bytesVals)/2]
		fv.TagFocus = append(fv.TagFocus, fmt.Sprintf("bytes=%db:", med), "1kb:")
		// Ignore the largest allocations, or none when all sizes are equal.
		maxv := bytesVals[len(bytesVals)-1]
		if bytesVals[0] == maxv {
			maxv++
		}
		fv.TagIgnore = append(fv.TagIgnore, fmt.Sprintf("bytes=%db:", maxv))
	}
	filterCache.Store(path, fv)
	return fv, nil
}

// closestKey returns the key of m whose weight is closest to target, skipping the excluded
// keys and keys that weigh nothing or the whole (whole), or "" if none is left.
func closestKey(m map[string]int64, whole, target int64, exclude ...string) string {
	best, bestDist := "", int64(math.MaxInt64)
	for _, k := range sortedKeys(m) {
		if slices.Contains(exclude, k) || m[k] == 0 || m[k] >= whole {
			continue
		}
		if d := abs(m[k] - target); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// eachProfile runs test on every profile of profiles, in name order, each in its own parallel
// subtest named after it, with the filter values derived from the profile.
func eachProfile(t *testing.T, profiles map[string]string, test func(t *testing.T, name, path string, fv filterValues)) {
	t.Helper()
	for _, name := range sortedKeys(profiles) {
		path := profiles[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fv, err := deriveFilters(path)
			if err != nil {
				t.Fatal(err)
			}
			test(t, name, path, fv)
		})
	}
}

// shortEvery is how -short samples the option matrices of the corpus tests (TestParity,
// TestTracesParity, TestParityPeek, TestParityGraph): each profile runs every shortEvery-th
// case of its matrix, from an offset of its own. The offsets (crc32 of the name) of the
// corpus cover every remainder, so every position of a matrix still runs on some profiles
// and every profile on some cases; `make test` runs every case. large.cpu (about 23,000
// nodes, half a second a pprof run) runs one case of each matrix under -short.
const shortEvery = 4

// skipLargeShort skips large.cpu (about 23,000 nodes) under -short in the tests whose
// subject is an option or an output format, not size: traces, callgrind, list, raw, tree,
// --trim_path and the text options, where its cases cost seconds of pprof and profq each.
// TestParity, TestParityPeek, TestParityGraph and TestOracle still run it under -short,
// and `make test` runs it everywhere.
func skipLargeShort(t *testing.T, name string) {
	t.Helper()
	if testing.Short() && name == "large.cpu" {
		t.Skip("large.cpu: one pprof run of this matrix takes seconds; make test runs it")
	}
}

// shortSample returns cases, or under -short the deterministic sample of them that profile
// name runs (see shortEvery).
func shortSample[T any](name string, cases []T) []T {
	if !testing.Short() {
		return cases
	}
	offset := int(crc32.ChecksumIEEE([]byte(name)) % shortEvery)
	if name == "large.cpu" && len(cases) > 0 {
		return cases[offset%len(cases) : offset%len(cases)+1]
	}
	var kept []T
	for i, c := range cases {
		if (i+offset)%shortEvery == 0 {
			kept = append(kept, c)
		}
	}
	return kept
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
