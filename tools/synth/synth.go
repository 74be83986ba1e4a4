// Package synth generates large, deterministic synthetic CPU profiles for benchmarks.
//
// The profiles look like those a big Go service writes: Go-like function names across many
// packages and files, a main binary mapping plus shared-library mappings, inlined frames,
// address-only library frames, recursion, and stacks drawn from a call graph with skewed
// popularity so that a few paths are hot and callers repeat. Everything is a function of
// Params, Seed included, so the same Params always yield the same bytes.
package synth

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/pprof/profile"
)

// Params sizes a synthetic profile.
type Params struct {
	// Samples is the number of samples.
	Samples int
	// Locations is the number of locations, address-only library locations included.
	Locations int
	// Functions is the number of functions.
	Functions int
	// MinDepth and MaxDepth bound every stack's depth in locations, inclusive.
	MinDepth, MaxDepth int
	// InlineFraction is the fraction of symbolized locations that carry inlined frames
	// (two or three Line entries).
	InlineFraction float64
	// Seed selects the profile; equal Params give byte-identical output.
	Seed int64
}

// Default returns the Params of the benchmark profile: 1.5M samples over 180k locations and
// 60k functions, stacks 5 to 60 deep, request labels on every sample, about 95 MB once
// encoded.
func Default() Params {
	return Params{
		Samples:        1_500_000,
		Locations:      180_000,
		Functions:      60_000,
		MinDepth:       5,
		MaxDepth:       60,
		InlineFraction: 0.12,
		Seed:           1,
	}
}

// Shape constants. They are not Params because they only shape the profile; the sizes the
// benchmarks care about are in Params.
const (
	period        = 10_000_000 // 10ms, as Go's CPU profiler samples at 100 Hz
	libShare      = 50         // one location in libShare is an address-only library one
	hotShare      = 50         // one function in hotShare is "hot" (called from everywhere)
	entryShare    = 200        // one function in entryShare starts goroutines
	hotCallProb   = 0.30       // chance that a call site in ordinary code calls a hot function
	hotToHotProb  = 0.70       // chance that a call site in a hot function calls another one
	recursionProb = 0.03       // chance that a call site (other than a function's first) recurses
	cgoProb       = 0.04       // chance that a sample ends in library code
	tenantProb    = 0.6        // chance that a sample carries a "tenant" label (all carry "handler")
	tenants       = 400        // distinct tenants, drawn with a skew
	mainStart     = 0x400000
	libcStart     = 0x7f3a_1c00_0000
	libzStart     = 0x7f3a_1e40_0000
	timeNanos     = 1_735_689_600_000_000_000 // 2025-01-01T00:00:00Z, fixed for determinism
	busyCores     = 16                        // DurationNanos = total CPU / busyCores
)

// runtimeFuncs are real Go runtime and standard library names used for the first functions.
// The first three form the goroutine root and the main goroutine, the fourth calls into C
// libraries, and the rest are hot.
var runtimeFuncs = []struct{ name, file string }{
	{"runtime.goexit", "runtime/asm_amd64.s"},
	{"runtime.main", "runtime/proc.go"},
	{"main.main", "main.go"},
	{"runtime.cgocall", "runtime/cgocall.go"},
	{"runtime.mallocgc", "runtime/malloc.go"},
	{"runtime.memmove", "runtime/memmove_amd64.s"},
	{"runtime.memclrNoHeapPointers", "runtime/memclr_amd64.s"},
	{"runtime.newobject", "runtime/malloc.go"},
	{"runtime.growslice", "runtime/slice.go"},
	{"runtime.mapaccess2_faststr", "internal/runtime/maps/runtime_faststr.go"},
	{"runtime.mapassign_fast64", "internal/runtime/maps/runtime_fast64.go"},
	{"runtime.scanobject", "runtime/mgcmark.go"},
	{"runtime.gcDrain", "runtime/mgcmark.go"},
	{"runtime.findObject", "runtime/mbitmap.go"},
	{"runtime.greyobject", "runtime/mgcmark.go"},
	{"runtime.futex", "runtime/sys_linux_amd64.s"},
	{"runtime.lock2", "runtime/lock_futex.go"},
	{"runtime.schedule", "runtime/proc.go"},
	{"runtime.findRunnable", "runtime/proc.go"},
	{"runtime.park_m", "runtime/proc.go"},
	{"runtime.mcall", "runtime/asm_amd64.s"},
	{"runtime.selectgo", "runtime/select.go"},
	{"runtime.chansend", "runtime/chan.go"},
	{"runtime.chanrecv", "runtime/chan.go"},
	{"runtime.concatstrings", "runtime/string.go"},
	{"runtime.slicebytetostring", "runtime/string.go"},
	{"runtime.typehash", "runtime/alg.go"},
	{"runtime.memequal", "internal/bytealg/equal_amd64.s"},
	{"internal/runtime/syscall/linux.Syscall6", "internal/runtime/syscall/linux/asm_linux_amd64.s"},
	{"syscall.Syscall", "syscall/syscall_linux.go"},
	{"syscall.read", "syscall/zsyscall_linux_amd64.go"},
	{"syscall.write", "syscall/zsyscall_linux_amd64.go"},
	{"sync.(*Mutex).Lock", "sync/mutex.go"},
	{"sync.(*Mutex).Unlock", "sync/mutex.go"},
	{"sync.(*Pool).Get", "sync/pool.go"},
	{"sync/atomic.(*Int64).Add", "sync/atomic/type.go"},
	{"strings.(*Builder).WriteString", "strings/builder.go"},
	{"strconv.AppendInt", "strconv/itoa.go"},
	{"bytes.(*Buffer).Write", "bytes/buffer.go"},
	{"encoding/binary.AppendUvarint", "encoding/binary/varint.go"},
	{"encoding/json.(*decodeState).object", "encoding/json/decode.go"},
	{"encoding/json.(*encodeState).marshal", "encoding/json/encode.go"},
	{"hash/crc32.ieeeCLMUL", "hash/crc32/crc32_amd64.s"},
	{"crypto/sha256.block", "crypto/internal/fips140/sha256/sha256block_amd64.s"},
	{"sort.pdqsort", "sort/zsortinterface.go"},
	{"slices.SortFunc[go.shape.[]int,go.shape.int]", "slices/sort.go"},
	{"time.Now", "time/time.go"},
	{"fmt.(*pp).doPrintf", "fmt/print.go"},
	{"reflect.Value.Field", "reflect/value.go"},
	{"net.(*conn).Read", "net/net.go"},
	{"net.(*conn).Write", "net/net.go"},
	{"bufio.(*Reader).Read", "bufio/bufio.go"},
	{"internal/poll.(*FD).Read", "internal/poll/fd_unix.go"},
	{"compress/flate.(*compressor).deflate", "compress/flate/deflate.go"},
}

const (
	fnGoexit = iota
	fnRuntimeMain
	fnMainMain
	fnCgocall // only called just above library frames
	firstHot
)

var (
	orgWords = []string{"github.com/acme", "go.example.org/platform", "github.com/synthco"}
	svcWords = []string{
		"billing", "catalog", "search", "ingest", "ledger", "router", "gateway", "storage",
		"metrics", "tracing", "feeds", "ranking", "identity", "payments", "inventory",
		"scheduler", "notifier", "pipeline", "analytics", "vault",
	}
	compWords = []string{
		"index", "query", "planner", "cache", "rpc", "codec", "auth", "shard", "raft", "wal",
		"compact", "proto", "tsdb", "encoder", "worker", "pool", "lease", "gossip", "bloom",
		"btree", "lsm", "parquet", "vector", "session", "tenant", "quota", "audit", "export",
		"httpapi", "grpcapi", "config", "retry", "ratelimit", "batch", "stream", "merge",
		"snapshot", "replica", "segment", "schema",
	}
	typeWords = []string{
		"Index", "Engine", "Store", "Reader", "Writer", "Cursor", "Iterator", "Batch", "Table",
		"Segment", "Block", "Page", "Node", "Tree", "Client", "Server", "Conn", "Stream",
		"Handler", "Planner", "Executor", "Builder", "Decoder", "Encoder", "Cache", "Pool",
		"Queue", "Shard", "Replica", "Snapshot",
	}
	methodWords = []string{
		"Get", "Put", "Lookup", "Scan", "Next", "Seek", "Flush", "Compact", "Merge", "Apply",
		"Encode", "Decode", "Read", "Write", "Close", "Open", "Serve", "Handle", "Dispatch",
		"Run", "Step", "Commit", "Append", "Load", "Store", "Evict", "Reset", "Grow", "Hash",
		"Compare", "Split", "Visit", "Walk", "Resolve", "Validate", "Marshal", "Unmarshal",
		"process", "fetch", "build", "emit", "update", "refresh", "drain",
	}
	handlers = []string{
		"/api/v1/search", "/api/v1/items", "/api/v1/orders", "/api/v2/query", "/healthz",
		"/api/v1/users", "/internal/replicate", "/metrics",
	}
)

// Validate reports whether p can be generated.
func (p Params) Validate() error {
	switch {
	case p.Samples < 0:
		return fmt.Errorf("synth: Samples %d < 0", p.Samples)
	case p.Functions < 8:
		return fmt.Errorf("synth: Functions %d < 8", p.Functions)
	case p.Locations-libLocations(p.Locations) < p.Functions:
		return fmt.Errorf("synth: Locations %d too few for %d functions plus library locations", p.Locations, p.Functions)
	case p.MinDepth < 2:
		return fmt.Errorf("synth: MinDepth %d < 2", p.MinDepth)
	case p.MaxDepth < p.MinDepth:
		return fmt.Errorf("synth: MaxDepth %d < MinDepth %d", p.MaxDepth, p.MinDepth)
	case p.InlineFraction < 0 || p.InlineFraction > 1:
		return fmt.Errorf("synth: InlineFraction %v not in [0, 1]", p.InlineFraction)
	}
	return nil
}

func libLocations(locations int) int { return max(2, locations/libShare) }

// callGraph is the static structure stacks are drawn from.
type callGraph struct {
	funcs     []*profile.Function
	sites     []int32 // sites[f] is the index in locs of f's first call site
	nsites    []int32
	callee    []int32 // callee[l] is the function called from main location l
	locs      []*profile.Location
	mainLocs  int // locs[:mainLocs] are symbolized; the rest are address-only library ones
	entries   []int32
	entryZipf *rand.Zipf
	hot       int // functions [firstHot, firstHot+hot) are hot
	hotZipf   *rand.Zipf
}

// Generate builds the profile described by p. It panics if p.Validate fails.
func Generate(p Params) *profile.Profile {
	if err := p.Validate(); err != nil {
		panic(err)
	}
	r := rand.New(rand.NewPCG(uint64(p.Seed), 0x9e3779b97f4a7c15))

	prof := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "samples", Unit: "count"},
			{Type: "cpu", Unit: "nanoseconds"},
		},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     period,
		TimeNanos:  timeNanos,
	}
	buildID := fmt.Sprintf("%016x%016x", r.Uint64(), r.Uint64())
	mainMap := &profile.Mapping{
		ID: 1, Start: mainStart, File: "/usr/bin/synth", BuildID: buildID,
		HasFunctions: true, HasFilenames: true, HasLineNumbers: true, HasInlineFrames: true,
	}
	libc := &profile.Mapping{
		ID: 2, Start: libcStart, Offset: 0x28000,
		File: "/usr/lib/x86_64-linux-gnu/libc.so.6", BuildID: fmt.Sprintf("%040x", r.Uint64()),
	}
	libz := &profile.Mapping{
		ID: 3, Start: libzStart, Offset: 0x2000,
		File: "/usr/lib/x86_64-linux-gnu/libz.so.1.3", BuildID: fmt.Sprintf("%040x", r.Uint64()),
	}
	prof.Mapping = []*profile.Mapping{mainMap, libc, libz}

	g := buildGraph(r, p, mainMap, libc, libz)
	prof.Function = g.funcs
	prof.Location = g.locs

	total := addSamples(r, p, g, prof)
	prof.DurationNanos = total / busyCores
	renumber(prof)
	return prof
}

// buildGraph creates functions, locations and the call edges between them.
func buildGraph(r *rand.Rand, p Params, mainMap, libc, libz *profile.Mapping) *callGraph {
	nf := p.Functions
	g := &callGraph{
		funcs:  make([]*profile.Function, nf),
		sites:  make([]int32, nf),
		nsites: make([]int32, nf),
	}
	fnStore := make([]profile.Function, nf)
	nrt := min(len(runtimeFuncs), nf-4)
	fileLines := make(map[string]int64)
	for i := range nf {
		var name, file string
		if i < nrt {
			name, file = runtimeFuncs[i].name, runtimeFuncs[i].file
			if i == fnMainMain {
				file = "/home/build/src/github.com/acme/synth/" + file
			} else {
				file = "/usr/local/go/src/" + file
			}
		} else {
			name, file = generatedName(i - nrt)
		}
		start := fileLines[file] + 1 + int64(r.IntN(12))
		fileLines[file] = start + 8 + int64(r.IntN(160))
		f := &fnStore[i]
		*f = profile.Function{ID: uint64(i + 1), Name: name, SystemName: name, Filename: file, StartLine: start}
		g.funcs[i] = f
	}

	// Every function gets one call site; the rest are spread with a 1/x-like skew so that
	// low-numbered (hot) functions are big and most functions are small.
	nlib := libLocations(p.Locations)
	g.mainLocs = p.Locations - nlib
	for i := range g.nsites {
		g.nsites[i] = 1
	}
	g.nsites[fnGoexit] = 1 // its single frame is the root of every stack
	for range g.mainLocs - nf {
		f := r.IntN(r.IntN(nf-1)+1) + 1
		if f == fnGoexit || f == fnRuntimeMain {
			f = fnMainMain
		}
		g.nsites[f]++
	}

	// The hot functions are the runtime ones after the roots and runtime.cgocall, topped up
	// with generated ones to one in hotShare, leaving at least three ordinary functions.
	g.hot = max(1, min(max(nrt-firstHot, nf/hotShare), nf-firstHot-3))
	g.hotZipf = rand.NewZipf(r, 1.15, 2, uint64(g.hot-1))

	// Goroutine entry points: runtime.main (leading to main.main) and a set of ordinary
	// functions from the non-hot part.
	nentry := max(1, nf/entryShare)
	g.entries = append(g.entries, fnRuntimeMain)
	firstCold := firstHot + g.hot
	for e := range nentry {
		g.entries = append(g.entries, int32(firstCold+(e*7919)%(nf-firstCold)))
	}
	g.entryZipf = rand.NewZipf(r, 1.1, 4, uint64(len(g.entries)-1))

	locStore := make([]profile.Location, p.Locations)
	lineStore := make([]profile.Line, 0, g.mainLocs+2*int(float64(g.mainLocs)*p.InlineFraction)+16)
	g.locs = make([]*profile.Location, p.Locations)
	g.callee = make([]int32, g.mainLocs)
	addr := uint64(mainStart + 0x1000)
	l := 0
	for f := range nf {
		g.sites[f] = int32(l)
		fn := g.funcs[f]
		line := fn.StartLine
		for s := range int(g.nsites[f]) {
			line += 1 + int64(r.IntN(6))
			addr += 4 + uint64(r.IntN(60))
			loc := &locStore[l]
			loc.ID = uint64(l + 1)
			loc.Mapping = mainMap
			loc.Address = addr
			first := len(lineStore)
			if f >= 3 && r.Float64() < p.InlineFraction {
				// Inlined frames come first, innermost first; the physical function is last.
				for range 1 + r.IntN(2) {
					in := g.funcs[3+r.IntN(nf-3)]
					if in == fn {
						in = g.funcs[3+(f-3+1)%(nf-3)]
					}
					lineStore = append(lineStore, profile.Line{Function: in, Line: in.StartLine + 1 + int64(r.IntN(20))})
				}
			}
			lineStore = append(lineStore, profile.Line{Function: fn, Line: line})
			loc.Line = lineStore[first:len(lineStore):len(lineStore)]
			g.locs[l] = loc
			g.callee[l] = g.pickCallee(r, f, s)
			l++
		}
		addr += 16 + uint64(r.IntN(256))
	}
	mainMap.Limit = (addr + 0x10000) &^ 0xfff

	// Address-only library locations: the first half in libc, the rest in libz.
	for i := range nlib {
		loc := &locStore[l]
		m := libc
		if i >= nlib/2 {
			m = libz
		}
		loc.ID = uint64(l + 1)
		loc.Mapping = m
		loc.Address = m.Start + 0x400 + uint64(i)*0x90 + uint64(r.IntN(0x80))
		m.Limit = (loc.Address + 0x1000) &^ 0xfff
		g.locs[l] = loc
		l++
	}
	return g
}

// pickCallee chooses the function called from call site s of function f.
func (g *callGraph) pickCallee(r *rand.Rand, f, s int) int32 {
	nf := len(g.funcs)
	switch f {
	case fnRuntimeMain:
		return fnMainMain
	case fnGoexit:
		return fnGoexit // unused: entries are drawn separately
	}
	if s > 0 && r.Float64() < recursionProb {
		return int32(f)
	}
	hotProb := hotCallProb
	if f >= firstHot && f < firstHot+g.hot {
		hotProb = hotToHotProb
	}
	if r.Float64() < hotProb {
		return int32(firstHot + g.hotZipf.Uint64())
	}
	return int32(firstHot + g.hot + r.IntN(nf-firstHot-g.hot))
}

// generatedName returns the name and file of the i-th generated function. Names are unique:
// i picks a package, and within the package a distinct (type, method) pair.
func generatedName(i int) (name, file string) {
	const perPkg = 75
	pkg, j := i/perPkg, i%perPkg
	svc := svcWords[pkg%len(svcWords)]
	comp := compWords[(pkg/len(svcWords))%len(compWords)]
	org := orgWords[pkg%len(orgWords)]
	path := org + "/" + svc + "/internal/" + comp
	if v := pkg / (len(svcWords) * len(compWords)); v > 0 {
		path += fmt.Sprintf("/v%d", v+1)
	}
	pairs := len(typeWords) * len(methodWords) // 1320, coprime with 91
	k := (j*91 + pkg*37) % pairs
	typ, meth := typeWords[k/len(methodWords)], methodWords[k%len(methodWords)]
	switch {
	case j%11 == 0:
		name = path + "." + strings.ToLower(meth[:1]) + meth[1:] + typ
	case j%4 == 0:
		name = path + "." + typ + "." + meth
	default:
		name = path + ".(*" + typ + ")." + meth
	}
	if j%9 == 4 {
		name += ".func1"
	}
	file = "/home/build/src/" + path + "/" + strings.ToLower(typ) + ".go"
	return name, file
}

// addSamples draws p.Samples stacks and returns the total CPU time.
func addSamples(r *rand.Rand, p Params, g *callGraph, prof *profile.Profile) int64 {
	samples := make([]profile.Sample, p.Samples)
	values := make([]int64, 2*p.Samples)
	prof.Sample = make([]*profile.Sample, p.Samples)
	var chunk []*profile.Location
	stack := make([]*profile.Location, 0, p.MaxDepth)
	tenantNames := make([]string, tenants)
	for i := range tenantNames {
		tenantNames[i] = fmt.Sprintf("tenant-%03d", i)
	}
	nlib := len(g.locs) - g.mainLocs
	var total int64
	for i := range samples {
		ud := r.Float64()
		depth := p.MinDepth + int(float64(p.MaxDepth-p.MinDepth+1)*ud*ud*ud)
		depth = min(depth, p.MaxDepth)
		nlibFrames := 0
		if depth >= 4 && r.Float64() < cgoProb {
			nlibFrames = 1 + r.IntN(min(3, depth-3))
		}
		goDepth := depth - nlibFrames

		stack = stack[:0]
		stack = append(stack, g.locs[g.sites[fnGoexit]])
		fn := int(g.entries[g.entryZipf.Uint64()])
		for len(stack) < goDepth {
			if nlibFrames > 0 && len(stack) == goDepth-1 {
				fn = fnCgocall
			}
			n := int(g.nsites[fn])
			u := r.Float64()
			site := int(g.sites[fn]) + int(float64(n)*u*u*u)
			stack = append(stack, g.locs[site])
			fn = int(g.callee[site])
		}
		for range nlibFrames {
			stack = append(stack, g.locs[g.mainLocs+r.IntN(r.IntN(nlib)+1)])
		}

		if len(chunk) < depth {
			chunk = make([]*profile.Location, max(1<<20, depth))
		}
		locs := chunk[:depth:depth]
		chunk = chunk[depth:]
		for k, loc := range stack { // leaf first
			locs[depth-1-k] = loc
		}
		count := int64(1)
		if u := r.Float64(); u > 0.93 {
			count = 2 + int64((u-0.93)*100)%4
		}
		v := values[2*i : 2*i+2 : 2*i+2]
		v[0], v[1] = count, count*period
		total += v[1]
		s := &samples[i]
		s.Location, s.Value = locs, v
		// Services label their work (pprof.Do), so samples carry request labels: a handler
		// always, and usually the tenant it ran for.
		s.Label = map[string][]string{"handler": {handlers[r.IntN(len(handlers))]}}
		if u := r.Float64(); u < tenantProb {
			t := int(float64(tenants) * u * u / (tenantProb * tenantProb))
			s.Label["tenant"] = []string{tenantNames[t]}
		}
		prof.Sample[i] = s
	}
	return total
}

// renumber gives locations and functions IDs in order of first use by the samples, as Go's
// profile builder does, so that hot locations get small IDs and short varints; unused ones
// follow in their original order. Tables are sorted by the new IDs.
func renumber(prof *profile.Profile) {
	for _, l := range prof.Location {
		l.ID = 0
	}
	for _, f := range prof.Function {
		f.ID = 0
	}
	locs := make([]*profile.Location, 0, len(prof.Location))
	funcs := make([]*profile.Function, 0, len(prof.Function))
	useLoc := func(l *profile.Location) {
		if l.ID != 0 {
			return
		}
		locs = append(locs, l)
		l.ID = uint64(len(locs))
		for _, ln := range l.Line {
			if ln.Function.ID == 0 {
				funcs = append(funcs, ln.Function)
				ln.Function.ID = uint64(len(funcs))
			}
		}
	}
	for _, s := range prof.Sample {
		for _, l := range s.Location {
			useLoc(l)
		}
	}
	for _, l := range prof.Location {
		useLoc(l)
	}
	for _, f := range prof.Function {
		if f.ID == 0 {
			funcs = append(funcs, f)
			f.ID = uint64(len(funcs))
		}
	}
	prof.Location, prof.Function = locs, funcs
}

// WriteFile generates the profile described by p and writes it gzip-compressed to path,
// atomically: a reader never sees a partial file.
func WriteFile(path string, p Params) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return WriteProfile(path, Generate(p))
}

// WriteProfile writes prof gzip-compressed to path, atomically: a reader never sees a
// partial file.
func WriteProfile(path string, prof *profile.Profile) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	bw := bufio.NewWriterSize(tmp, 1<<20)
	err = tmp.Chmod(0o644) // CreateTemp's 0600 is for secrets; this is a shared input
	if err == nil {
		err = prof.Write(bw)
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
