package source

import (
	"bytes"
	"errors"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/profq/profq/internal/source/formats/goroutine"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/testkit/parked"
)

// goroutineDumps are this process's goroutine dumps, debug=1 and debug=2, taken at one
// moment while the parked goroutines (which a process may start once: the sleeper never
// returns) block in their functions.
var goroutineDumps = sync.OnceValues(func() (*dumps, error) {
	set, err := parked.Start(3, 2, 4, 1)
	if err != nil {
		return nil, err
	}
	defer set.Release()
	d := &dumps{groups: set.Groups}
	var b1, b2 bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b1, 1); err != nil {
		return nil, err
	}
	if err := pprof.Lookup("goroutine").WriteTo(&b2, 2); err != nil {
		return nil, err
	}
	d.debug1, d.debug2 = b1.Bytes(), b2.Bytes()
	return d, nil
})

type dumps struct {
	groups         []parked.Group
	debug1, debug2 []byte
}

func loadDump(t *testing.T, data []byte) (*profile.Profile, Input) {
	t.Helper()
	p, in, err := LoadData("dump", data)
	if err != nil {
		t.Fatalf("LoadData: %v\n%s", err, data)
	}
	if in.Format != goroutine.Name {
		t.Fatalf("read as %q, want %q", in.Format, goroutine.Name)
	}
	if len(p.SampleType) != 1 || p.SampleType[0].Type != "goroutine" || p.SampleType[0].Unit != "count" {
		t.Fatalf("sample types %v, want goroutine/count", p.SampleType)
	}
	return p, in
}

// inFunction counts the goroutines whose stack has fn, by state ("" when the sample has
// none).
func inFunction(p *profile.Profile, fn string) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Sample {
		has := false
		for _, l := range s.Location {
			for _, ln := range l.Line {
				has = has || ln.Function.Name == fn
			}
		}
		if has {
			state := ""
			if st := s.Label[goroutine.StateLabel]; len(st) == 1 {
				state = st[0]
			}
			out[state] += s.Value[0]
		}
	}
	return out
}

func TestGoroutineDumpDebug1(t *testing.T) {
	d, err := goroutineDumps()
	if err != nil {
		t.Fatal(err)
	}
	p, _ := loadDump(t, d.debug1)
	for _, g := range d.groups {
		if got := inFunction(p, g.Function); got[""] != int64(g.Count) || len(got) != 1 {
			t.Errorf("%s: goroutines %v, want %d", g.Function, got, g.Count)
		}
	}
	// The total is the header's, and every location is one address of the dump, named
	// where a "#" line names it.
	header := strings.Fields(strings.SplitN(string(d.debug1), "\n", 2)[0])
	var total int64
	for _, s := range p.Sample {
		total += s.Value[0]
	}
	if want := header[len(header)-1]; want != strconv.FormatInt(total, 10) {
		t.Errorf("total %d, header %q", total, want)
	}
	// The one frame the dump hides below the ones it prints is runtime.goexit: the reader
	// names it at the bottom of stacks, where no "#" line gives its address.
	bottom := map[*profile.Location]bool{}
	for _, s := range p.Sample {
		bottom[s.Location[len(s.Location)-1]] = true
	}
	goexits := 0
	for _, l := range p.Location {
		if l.Address == 0 {
			t.Errorf("location %d has no address", l.ID)
		}
		for _, ln := range l.Line {
			if ln.Function.Name == "runtime.goexit" && bottom[l] && !bytes.Contains(d.debug1, []byte("#\t"+hexAddr(l.Address))) {
				goexits++
				continue
			}
			if !bytes.Contains(d.debug1, []byte("#\t"+hexAddr(l.Address)+"\t"+ln.Function.Name+"+")) {
				t.Errorf("location %s named %s, which no # line of the dump says", hexAddr(l.Address), ln.Function.Name)
			}
		}
	}
	if goexits != 1 {
		t.Errorf("%d locations named runtime.goexit, want 1", goexits)
	}
}

func TestGoroutineDumpDebug2(t *testing.T) {
	d, err := goroutineDumps()
	if err != nil {
		t.Fatal(err)
	}
	p, _ := loadDump(t, d.debug2)
	for _, g := range d.groups {
		got := inFunction(p, g.Function)
		if want := map[string]int64{g.State: int64(g.Count)}; !mapsEqual(got, want) {
			t.Errorf("%s: goroutines by state %v, want %v", g.Function, got, want)
		}
	}
	// Every goroutine of the dump is counted once.
	var total int64
	for _, s := range p.Sample {
		total += s.Value[0]
		if c := s.Label[goroutine.CreatorLabel]; len(c) > 1 {
			t.Errorf("sample with creators %v", c)
		}
	}
	if want := int64(bytes.Count(d.debug2, []byte("\ngoroutine ")) + 1); total != want {
		t.Errorf("%d goroutines, the dump has %d", total, want)
	}
}

// TestGoroutineDumpsAgree checks that the two forms of one moment count the same
// goroutines on each stack, compared by the functions both name.
func TestGoroutineDumpsAgree(t *testing.T) {
	d, err := goroutineDumps()
	if err != nil {
		t.Fatal(err)
	}
	p1, _ := loadDump(t, d.debug1)
	p2, _ := loadDump(t, d.debug2)
	byStack := func(p *profile.Profile) map[string]int64 {
		out := map[string]int64{}
		for _, s := range p.Sample {
			var names []string
			for _, l := range s.Location {
				for _, ln := range l.Line {
					if !strings.HasPrefix(ln.Function.Name, "runtime.") {
						names = append(names, ln.Function.Name)
					}
				}
			}
			if slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "testkit/parked.park") }) {
				out[strings.Join(names, ";")] += s.Value[0]
			}
		}
		return out
	}
	s1, s2 := byStack(p1), byStack(p2)
	if !mapsEqual(s1, s2) || len(s1) != len(d.groups) {
		t.Errorf("debug=1 stacks %v\ndebug=2 stacks %v", s1, s2)
	}
}

func TestGoroutineDumpText(t *testing.T) {
	debug2 := "goroutine 1 [running]:\nmain.main()\n\t/a/main.go:5 +0x1d\n\n" +
		"goroutine 7 [chan receive, 12 minutes]:\nmain.f(0x0?)\n\t/a/main.go:9 +0x15\nmain.g(...)\n\t/a/main.go:12\nmain.h()\n\t/a/main.go:20 +0x2e\ncreated by main.main in goroutine 1\n\t/a/main.go:4 +0x6b\n\n" +
		"goroutine 8 [chan receive, 12 minutes]:\nmain.f(0x0?)\n\t/a/main.go:9 +0x15\nmain.g(...)\n\t/a/main.go:12\nmain.h()\n\t/a/main.go:20 +0x2e\ncreated by main.main in goroutine 1\n\t/a/main.go:4 +0x6b\n\n" +
		"goroutine 9 [chan receive (leaked) (scan)]:\nmain.f(0x0?)\n\t/a/main.go:9 +0x15\nmain.g(...)\n\t/a/main.go:12\nmain.h()\n\t/a/main.go:20 +0x2e\n...additional frames elided...\ncreated by main.main in goroutine 1\n\t/a/main.go:4 +0x6b\n\n" +
		"goroutine 10 [select, locked to thread labels:{\"k\": \"v\"}]:\nmain.(*T).m[...](0x1, {0x2, 0x3})\n\t/a/t.go:3 +0x1\n"
	p, _ := loadDump(t, []byte(debug2))
	if len(p.Sample) != 4 {
		t.Fatalf("%d samples, want 4", len(p.Sample))
	}
	s := p.Sample[1]
	if s.Value[0] != 2 || s.Label[goroutine.StateLabel][0] != "chan receive" || s.NumLabel[goroutine.WaitLabel][0] != 12 ||
		s.NumUnit[goroutine.WaitLabel][0] != goroutine.WaitUnit || s.Label[goroutine.CreatorLabel][0] != "main.main" {
		t.Errorf("sample %v %v %v", s.Value, s.Label, s.NumLabel)
	}
	// main.g is inlined into main.h: one location of two lines, innermost first.
	if l := s.Location[1]; len(s.Location) != 2 || len(l.Line) != 2 || l.Line[0].Function.Name != "main.g" || l.Line[1].Function.Name != "main.h" || l.Line[1].Line != 20 {
		t.Errorf("stack %v", s.Location)
	}
	s = p.Sample[2]
	if s.Label[goroutine.StateLabel][0] != "chan receive (leaked)" || s.Label[goroutine.ElidedLabel][0] != "true" || s.NumLabel != nil {
		t.Errorf("leaked sample %v %v", s.Label, s.NumLabel)
	}
	s = p.Sample[3]
	if s.Label["k"][0] != "v" || s.Label[goroutine.StateLabel][0] != "select" || s.Location[0].Line[0].Function.Name != "main.(*T).m[...]" {
		t.Errorf("labelled sample %v %v", s.Label, s.Location[0].Line)
	}

	debug1 := "goroutineleak profile: total 3\n2 @ 0x10 0x20 0x30\n# labels: {\"a\":\"b\"}\n#\t0xf\tmain.f+0x1\t\t/a.go:1\n#\t0x1f\tmain.g+0x2\t/a.go:2\n#\t0x1f\tmain.h+0x3\t/a.go:3\n\n1 @ 0x10\n#\t0xf\tmain.f+0x1\t/a.go:1\n"
	p, err := Options{}.parse1(debug1)
	if err != nil {
		t.Fatal(err)
	}
	if p.SampleType[0].Type != "goroutineleak" || len(p.Sample) != 2 || p.Sample[0].Value[0] != 2 || p.Sample[0].Label["a"][0] != "b" {
		t.Fatalf("profile:\n%v", p)
	}
	locs := p.Sample[0].Location
	if len(locs) != 3 || locs[0].Address != 0xf || locs[1].Address != 0x1f || len(locs[1].Line) != 2 ||
		locs[1].Line[1].Function.Name != "main.h" || len(locs[2].Line) != 1 || locs[2].Line[0].Function.Name != "runtime.goexit" ||
		p.Sample[1].Location[0] != locs[0] {
		t.Errorf("locations %v", locs)
	}
}

func (o Options) parse1(text string) (*profile.Profile, error) {
	p, _, err := goroutine.Parse(o.reader(), []byte(text))
	return p, err
}

func TestGoroutineDumpRefused(t *testing.T) {
	for _, text := range []string{
		"goroutine x [running]:\nmain.main()\n",
		"goroutines\n1 @ 0x1\n",
	} {
		if _, _, err := (Options{Format: goroutine.Name}).LoadData("x", []byte(text)); err == nil {
			t.Errorf("%q read as a goroutine dump", text)
		}
	}
	// Limits count as the dump is read.
	text := "goroutine 1 [running]:\na()\n\t/a.go:1 +0x1\nb()\n\t/a.go:2 +0x1\nc()\n\t/a.go:3 +0x1\n"
	var depth *format.DepthLimitError
	if _, _, err := (Options{MaxStackDepth: 2}).LoadData("x", []byte(text)); !errors.As(err, &depth) {
		t.Errorf("depth limit: %v", err)
	}
	text = "goroutine 1 [running]:\na()\n\t/a.go:1 +0x1\n\ngoroutine 2 [select]:\na()\n\t/a.go:1 +0x1\n\ngoroutine 3 [sleep]:\na()\n\t/a.go:1 +0x1\n"
	var samples *format.SampleLimitError
	if _, _, err := (Options{MaxSamples: 2}).LoadData("x", []byte(text)); !errors.As(err, &samples) {
		t.Errorf("sample limit: %v", err)
	}
	var entries *format.EntryLimitError
	if _, _, err := (Options{MaxEntries: 1}).LoadData("x", []byte("goroutine profile: total 1\n1 @ 0x10 0x20\n")); !errors.As(err, &entries) {
		t.Errorf("entry limit: %v", err)
	}
}

func FuzzGoroutineDump(f *testing.F) {
	f.Add([]byte("goroutine profile: total 2\n2 @ 0x10 0x20\n# labels: {\"a\":\"b\"}\n#\t0xf\tmain.f+0x1\t/a.go:1\n"))
	f.Add([]byte("goroutine 7 [chan receive, 3 minutes]:\nmain.f(...)\n\t/a.go:9\nmain.g()\n\t/a.go:1 +0x2\ncreated by main.main in goroutine 1\n\t/a.go:4 +0x6b\n"))
	f.Add([]byte("goroutine 1 [running]:\n\tgoroutine running on other thread; stack unavailable\nnon-Go function at pc=0x12\n"))
	if d, err := goroutineDumps(); err == nil {
		f.Add(d.debug1)
		f.Add(d.debug2)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, warnings, err := goroutine.Parse(Options{}.reader(), data)
		if err != nil {
			if msg := err.Error(); strings.ContainsFunc(msg, func(r rune) bool { return !unicode.IsPrint(r) }) {
				t.Errorf("error is not one printable line: %q", msg)
			}
			return
		}
		if err := p.CheckValid(); err != nil {
			t.Fatalf("invalid profile: %v", err)
		}
		for _, w := range warnings {
			if strings.ContainsFunc(w, func(r rune) bool { return !unicode.IsPrint(r) }) {
				t.Errorf("warning is not one printable line: %q", w)
			}
		}
		for _, s := range p.Sample {
			if len(s.Value) != 1 {
				t.Fatalf("sample with %d values", len(s.Value))
			}
		}
	})
}

func mapsEqual[K comparable](a, b map[K]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func hexAddr(a uint64) string { return "0x" + strconv.FormatUint(a, 16) }
