// Command genlabels writes testdata/profiles/labels.pb.gz, the labelled CPU profile that the
// examples and tests of profq tags, profq info and profq top --by-label use:
//
//	go run ./testdata/genlabels -out testdata/profiles/labels.pb.gz
//
// It is built in code rather than recorded, so that its numbers are round and the same on
// every run: a 5 s CPU profile of an HTTP server (sample types samples/count and
// cpu/nanoseconds, period 10ms) whose samples carry the pprof.Do labels handler
// (/api/search, /api/upload, /healthz) and tenant (acme, globex, initech; /healthz has
// none). Garbage collection and scheduler samples carry no labels. main.scoreDocs has
// math.Exp inlined, and one stack ends in an address in libc, which has no symbols.
package main

import (
	"flag"
	"log"
	"os"
	"path"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// stack is one sample: frames root first ("outer+inner" is one location with an inlined
// call, "0x..." an address in libc), the CPU time and the labels as "key=value" pairs.
type stack struct {
	frames string
	ms     int64
	labels string
}

const (
	serve  = "runtime.goexit;net/http.(*conn).serve;net/http.serverHandler.ServeHTTP;"
	search = serve + "main.(*server).handleSearch;"
	upload = serve + "main.(*server).handleUpload;"
)

var stacks = []stack{
	{search + "main.scoreDocs+math.Exp", 820, "handler=/api/search tenant=acme"},
	{search + "main.scoreDocs", 300, "handler=/api/search tenant=acme"},
	{search + "main.parseQuery;strings.ToLower", 120, "handler=/api/search tenant=acme"},
	{search + "encoding/json.Marshal;runtime.mallocgc", 90, "handler=/api/search tenant=acme"},
	{search + "main.scoreDocs+math.Exp", 410, "handler=/api/search tenant=globex"},
	{search + "main.scoreDocs", 150, "handler=/api/search tenant=globex"},
	{search + "main.parseQuery;strings.ToLower", 60, "handler=/api/search tenant=globex"},
	{search + "encoding/json.Marshal;runtime.mallocgc", 50, "handler=/api/search tenant=globex"},
	{upload + "crypto/sha256.(*Digest).Write;crypto/sha256.block", 350, "handler=/api/upload tenant=acme"},
	{upload + "compress/gzip.(*Writer).Write;compress/flate.(*compressor).deflate", 420, "handler=/api/upload tenant=acme"},
	{upload + "syscall.Syscall", 80, "handler=/api/upload tenant=acme"},
	{upload + "syscall.Syscall;0x7f3a12c4e5a0", 30, "handler=/api/upload tenant=acme"},
	{upload + "crypto/sha256.(*Digest).Write;crypto/sha256.block", 120, "handler=/api/upload tenant=initech"},
	{upload + "compress/gzip.(*Writer).Write;compress/flate.(*compressor).deflate", 200, "handler=/api/upload tenant=initech"},
	{serve + "main.(*server).handleHealth;fmt.Fprintf", 20, "handler=/healthz"},
	{"runtime.gcBgMarkWorker;runtime.gcDrain;runtime.scanobject", 260, ""},
	{"runtime.mcall;runtime.schedule;runtime.findRunnable", 40, ""},
}

func main() {
	out := flag.String("out", "testdata/profiles/labels.pb.gz", "file to write")
	flag.Parse()
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	if err := build().Write(f); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

func build() *profile.Profile {
	const period = int64(10 * time.Millisecond)
	server := &profile.Mapping{
		ID: 1, File: "/srv/bin/server", BuildID: "5f0c6e2a9d4b7c1e",
		Start: 0x400000, Limit: 0xa00000,
		HasFunctions: true, HasFilenames: true, HasLineNumbers: true, HasInlineFrames: true,
	}
	libc := &profile.Mapping{ID: 2, File: "/lib/x86_64-linux-gnu/libc.so.6", Start: 0x7f3a12c00000, Limit: 0x7f3a12dc0000, Offset: 0x28000}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     period,
		TimeNanos:  time.Date(2025, 1, 15, 10, 0, 0, 0, time.UTC).UnixNano(),
		// 5 s of wall time on a machine with one busy CPU at most.
		DurationNanos: int64(5 * time.Second),
		Mapping:       []*profile.Mapping{server, libc},
	}
	funcs := map[string]*profile.Function{}
	function := func(name string) *profile.Function {
		if fn := funcs[name]; fn != nil {
			return fn
		}
		fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: fileOf(name), StartLine: int64(10 * (len(p.Function) + 1))}
		funcs[name] = fn
		p.Function = append(p.Function, fn)
		return fn
	}
	locs := map[string]*profile.Location{}
	location := func(frame string) *profile.Location {
		if l := locs[frame]; l != nil {
			return l
		}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: server, Address: 0x401000 + 0x40*uint64(len(p.Location))}
		if strings.HasPrefix(frame, "0x") {
			l.Mapping, l.Address = libc, 0x7f3a12c4e5a0
		} else {
			parts := strings.Split(frame, "+")
			// Line[0] is the innermost (inlined) function.
			for i := len(parts) - 1; i >= 0; i-- {
				fn := function(parts[i])
				l.Line = append(l.Line, profile.Line{Function: fn, Line: fn.StartLine + 2 + int64(i)})
			}
		}
		locs[frame] = l
		p.Location = append(p.Location, l)
		return l
	}
	for _, st := range stacks {
		frames := strings.Split(st.frames, ";")
		s := &profile.Sample{Value: []int64{st.ms * int64(time.Millisecond) / period, st.ms * int64(time.Millisecond)}}
		for i := len(frames) - 1; i >= 0; i-- {
			s.Location = append(s.Location, location(frames[i]))
		}
		for _, kv := range strings.Fields(st.labels) {
			k, v, _ := strings.Cut(kv, "=")
			if s.Label == nil {
				s.Label = map[string][]string{}
			}
			s.Label[k] = append(s.Label[k], v)
		}
		p.Sample = append(p.Sample, s)
	}
	if err := p.CheckValid(); err != nil {
		log.Fatal(err)
	}
	return p
}

// fileOf makes up a plausible source file for a function: main.go for the server's own
// functions, PKG/BASE.go under GOROOT for the others.
func fileOf(name string) string {
	if strings.HasPrefix(name, "main.") {
		return "/srv/src/server/main.go"
	}
	slash := strings.LastIndex(name, "/")
	pkg := name[:slash+1+strings.Index(name[slash+1:], ".")]
	return "/usr/local/go/src/" + pkg + "/" + path.Base(pkg) + ".go"
}
