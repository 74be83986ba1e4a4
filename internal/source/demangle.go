package source

import (
	"fmt"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/ianlancetaylor/demangle"
)

// Demangling modes (Options.Demangle). They are pprof's -symbolize=demangle=... values, and
// a mangled name gets pprof's name: the same library (github.com/ianlancetaylor/demangle, at
// the version go.mod pins for both), the same options and the same retry without macOS's
// leading underscore.
//
// One difference, in every mode: pprof also simplifies names that are not mangled but look
// like demangled C++ (they hold "::", "<>" or "[]"), cutting every "(...)" and "<...>" out of
// them. Go names of generic functions look like that to it: pprof turns
// "pkg.F[go.shape.interface { Error() string }]" into "pkg.F[go.shape.interface { Error
// string }]". profq changes only names that are mangled, so a Go profile reads exactly as
// `pprof -symbolize=none` reads it, whatever the mode, and names that a profiler demangled
// already (perf's, for instance) stay as it wrote them.
const (
	// DemangleDefault is pprof's default: C++ and Rust names without parameters, template
	// arguments or return types ("std::vector::push_back"). Names a profile already carries
	// in demangled form (Name differs from SystemName) are kept.
	DemangleDefault = "default"
	// DemangleNone keeps every name as the profile holds it: the names of
	// `pprof -symbolize=none`, which does not demangle at all. (pprof's own
	// -symbolize=demangle=none also puts back the system name of functions the profile
	// carries demangled; profq leaves those alone.)
	DemangleNone = "none"
	// DemangleTemplates is DemangleDefault with template arguments kept, applied to every
	// function that has a system name, even those the profile carries demangled.
	DemangleTemplates = "templates"
	// DemangleFull is the complete demangled name, parameters and all (clone suffixes
	// aside), applied as DemangleTemplates is.
	DemangleFull = "full"
)

// DemangleModes returns the values Options.Demangle accepts, the default first.
func DemangleModes() []string {
	return []string{DemangleDefault, DemangleNone, DemangleTemplates, DemangleFull}
}

// demangleProfile demangles the function names of p as pprof's symbolizer does after
// symbolization (symbolizer.Demangle): profq never symbolizes, and this is the part of
// pprof's symbolization that applies to profiles whose names are already there, such as
// those of C++ and Rust programs profiled with perf or gperftools. The modes other than
// the default replace the names the profile carries by their system names first, as
// pprof's explicit demangle= options ("force") do.
func demangleProfile(p *profile.Profile, mode string) error {
	var opts []demangle.Option
	force := false
	switch mode {
	case "", DemangleDefault:
		opts = []demangle.Option{demangle.NoParams, demangle.NoEnclosingParams, demangle.NoTemplateParams}
	case DemangleTemplates:
		opts, force = []demangle.Option{demangle.NoParams, demangle.NoEnclosingParams}, true
	case DemangleFull:
		opts, force = []demangle.Option{demangle.NoClones}, true
	case DemangleNone:
		return nil
	default:
		return fmt.Errorf("unknown demangling mode %q (want one of %s)", mode, strings.Join(DemangleModes(), ", "))
	}
	for _, fn := range p.Function {
		if force && fn.Name != "" && fn.SystemName != "" {
			fn.Name = fn.SystemName
		}
		demangleFunction(fn, opts)
	}
	return nil
}

// demangleFunction sets fn.Name to the demangled fn.SystemName when that is a mangled name,
// unless the profile already carries a different (demangled) name. A system name the library
// cannot demangle is tried again without a leading underscore (macOS prefixes every symbol
// with one). Any other name is left as it is (see the modes for how pprof differs).
func demangleFunction(fn *profile.Function, opts []demangle.Option) {
	if fn.Name != "" && fn.Name != fn.SystemName {
		return
	}
	if d, ok := filter(fn.SystemName, opts); ok {
		fn.Name = d
		return
	}
	if rest, ok := strings.CutPrefix(fn.SystemName, "_"); ok {
		if d, ok := filter(rest, opts); ok {
			fn.Name = d
			return
		}
	}
}

// filter demangles name, reporting whether it was a mangled name. The library is fuzzed but
// reads untrusted input here: a panic in it leaves the name as it is rather than ending the
// report.
func filter(name string, opts []demangle.Option) (d string, ok bool) {
	defer func() {
		if recover() != nil {
			d, ok = name, false
		}
	}()
	d = demangle.Filter(name, opts...)
	return d, d != name
}
