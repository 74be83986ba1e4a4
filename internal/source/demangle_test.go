package source

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/testkit/pproforacle"
)

// mangledFunction is a function of the demangling test profile: its system name, and the
// name the profile carries when that is not the system name.
type mangledFunction struct{ system, name string }

// mangledFunctions are C++ (Itanium ABI) and Rust (legacy and v0) symbols, a macOS one with
// its extra underscore, names some tool demangled already, Go names (which must not change)
// and a function the profile carries under another name.
var mangledFunctions = []mangledFunction{
	{system: "_ZN3foo3barEv"},
	{system: "_ZNSt6vectorIiSaIiEE9push_backERKi"},
	{system: "_ZNK3MapIiiE4findERKi"},
	{system: "__ZN3foo3bazEi"},
	{system: "_ZN4core3ptr13drop_in_place17h0123456789abcdefE"},
	{system: "_RNvCs1234_7mycrate4main"},
	{system: "_RNvNtCs1234_7mycrate5inner3new"},
	{system: "main.(*Server).handle"},
	{system: "slices.SortFunc[...]"},
	{system: "main.(*List[...]).Push"},
	{system: "_ZN3foo3quxEv", name: "foo::qux (from the profile)"},
	{system: "not_mangled"},
	{system: "_Zgarbage"},
}

// demangledLooking are names that are not mangled but that pprof takes for demangled C++ and
// simplifies: profq leaves them alone.
var demangledLooking = []mangledFunction{
	{system: "std::map<int, int>::find(int const&) const"},
	{system: "ns::f(a(b)c)d"},
	{system: "pkg.F[go.shape.interface { Error() string }]"},
	{system: "pkg.G[go.shape.struct { A []int }].func1"},
}

// mangledProfile is a profile with one sample per function.
func mangledProfile(functions []mangledFunction) *profile.Profile {
	m := &profile.Mapping{ID: 1, Start: 0x1000, Limit: 0x100000, File: "/opt/app/bin/server",
		HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{vt("samples", "count")},
		Mapping:    []*profile.Mapping{m},
	}
	for i, mf := range functions {
		id := uint64(i + 1)
		name := mf.name
		if name == "" {
			name = mf.system
		}
		f := &profile.Function{ID: id, Name: name, SystemName: mf.system, Filename: "app.cc"}
		l := &profile.Location{ID: id, Mapping: m, Address: 0x1000 + 0x10*id, Line: []profile.Line{{Function: f, Line: 1}}}
		p.Function = append(p.Function, f)
		p.Location = append(p.Location, l)
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{l}, Value: []int64{int64(id)}})
	}
	return p
}

func names(p *profile.Profile) []string {
	out := make([]string, len(p.Function))
	for i, f := range p.Function {
		out[i] = f.Name
	}
	return out
}

func TestDemangle(t *testing.T) {
	functions := append(slices.Clone(mangledFunctions), demangledLooking...)
	path := writeProfile(t, t.TempDir(), "mangled.pb.gz", mangledProfile(functions))
	want := map[string][]string{
		DemangleDefault: {
			"foo::bar", "std::vector::push_back", "Map::find", "foo::baz",
			"core::ptr::drop_in_place", "mycrate::main", "mycrate::inner::new",
			"main.(*Server).handle", "slices.SortFunc[...]", "main.(*List[...]).Push",
			"foo::qux (from the profile)", "not_mangled", "_Zgarbage",
			"std::map<int, int>::find(int const&) const", "ns::f(a(b)c)d",
			"pkg.F[go.shape.interface { Error() string }]", "pkg.G[go.shape.struct { A []int }].func1",
		},
		DemangleTemplates: {
			"foo::bar", "std::vector<int, std::allocator<int> >::push_back", "Map<int, int>::find", "foo::baz",
			"core::ptr::drop_in_place", "mycrate::main", "mycrate::inner::new",
			"main.(*Server).handle", "slices.SortFunc[...]", "main.(*List[...]).Push",
			"foo::qux", "not_mangled", "_Zgarbage",
			"std::map<int, int>::find(int const&) const", "ns::f(a(b)c)d",
			"pkg.F[go.shape.interface { Error() string }]", "pkg.G[go.shape.struct { A []int }].func1",
		},
		DemangleFull: {
			"foo::bar()", "std::vector<int, std::allocator<int> >::push_back(int const&)", "Map<int, int>::find(int const&) const", "foo::baz(int)",
			"core::ptr::drop_in_place", "mycrate::main", "mycrate::inner::new",
			"main.(*Server).handle", "slices.SortFunc[...]", "main.(*List[...]).Push",
			"foo::qux()", "not_mangled", "_Zgarbage",
			"std::map<int, int>::find(int const&) const", "ns::f(a(b)c)d",
			"pkg.F[go.shape.interface { Error() string }]", "pkg.G[go.shape.struct { A []int }].func1",
		},
	}
	var raw []string
	for _, mf := range functions {
		if mf.name != "" {
			raw = append(raw, mf.name)
		} else {
			raw = append(raw, mf.system)
		}
	}
	want[DemangleNone] = raw
	want[""] = want[DemangleDefault]
	for mode, w := range want {
		p, _, err := Options{Demangle: mode}.Load([]string{path})
		if err != nil {
			t.Fatalf("--demangle=%s: %v", mode, err)
		}
		if diff := cmp.Diff(w, names(p)); diff != "" {
			t.Errorf("--demangle=%s: names (-want +got):\n%s", mode, diff)
		}
		for i, f := range p.Function {
			if f.SystemName != functions[i].system {
				t.Errorf("--demangle=%s changed the system name %q to %q", mode, functions[i].system, f.SystemName)
			}
		}
	}
}

// TestDemangleAgainstPprof compares the names with pprof's: pprof demangles after
// symbolizing, so it runs with its default -symbolize (and -symbolize=demangle=MODE for the
// other modes) on a profile whose mapping is symbolized already and whose binary cannot be
// opened, which leaves only the demangling to do. With -symbolize=none pprof does not
// demangle: that is --demangle=none. The names pprof merely takes for demangled C++ are
// checked apart: pprof simplifies them, profq does not.
func TestDemangleAgainstPprof(t *testing.T) {
	path := writeProfile(t, t.TempDir(), "mangled.pb.gz", mangledProfile(mangledFunctions))
	for mode, symbolize := range map[string]string{
		DemangleDefault:   "",
		DemangleTemplates: "demangle=templates",
		DemangleFull:      "demangle=full",
		DemangleNone:      "none",
	} {
		want := pprofRawSymbolized(t, symbolize, path)
		p, _, err := Options{Demangle: mode}.Load([]string{path})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, p.String()); diff != "" {
			t.Errorf("--demangle=%s against pprof -symbolize=%s (-pprof +profq):\n%s", mode, symbolize, diff)
		}
	}
}

// pprofRawSymbolized is pprofRaw with the given -symbolize value, and binaries that can
// never be opened.
func pprofRawSymbolized(t *testing.T, symbolize string, args ...string) string {
	t.Helper()
	t.Setenv("PPROF_BINARY_PATH", t.TempDir())
	out, _, err := pproforacle.Run(append([]string{"-raw", "-symbolize=" + symbolize}, args...)...)
	if err != nil {
		t.Fatalf("pprof %q: %v", args, err)
	}
	return string(out)
}

// TestDemangleUnlikePprof pins down where profq and pprof's default part ways: pprof cuts
// "(...)" and "<...>" out of names that look like demangled C++, Go generics included.
func TestDemangleUnlikePprof(t *testing.T) {
	path := writeProfile(t, t.TempDir(), "looking.pb.gz", mangledProfile(demangledLooking))
	pprofNames := pprofRawSymbolized(t, "", path)
	for _, name := range []string{"std::map::find const", "ns::fd", "pkg.F[go.shape.interface { Error string }]"} {
		if !strings.Contains(pprofNames, name) {
			t.Errorf("pprof no longer simplifies to %q; profq's documentation says it does:\n%s", name, pprofNames)
		}
	}
	p, _, err := Options{}.Load([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	if want := pprofRawSymbolized(t, "none", path); p.String() != want {
		t.Errorf("profq's default changed names pprof -symbolize=none keeps:\n%s\nwant:\n%s", p, want)
	}
}

// TestDemangleBadMode checks that an unknown mode is an error, not a panic as in pprof.
func TestDemangleBadMode(t *testing.T) {
	if err := demangleProfile(mangledProfile(mangledFunctions), "fancy"); err == nil {
		t.Error("no error for an unknown demangling mode")
	}
}
