package report

import (
	"path"
	"strings"
)

// PackageOf returns the package a function name belongs to, for grouping frames (a flame
// graph colours them by it). frameType is the frame's type as the profile states it ("go",
// "jvm", ...) or "" when it does not; it settles the naming convention where the name alone
// is ambiguous. The rules, by convention:
//
//   - C++ and Rust ("std::vector<int>::push_back", "core::ptr::drop_in_place<T>"): the
//     outermost namespace or crate, "std", "core"; "(anonymous namespace)" counts as one.
//   - Java with slashes ("java/util/HashMap.get", the JVM's internal form) or dots
//     ("java.util.HashMap.get"): the class's package, "java.util", written with dots.
//   - Go ("net/http.(*conn).serve", "main.main.func1", "gopkg.in/yaml%2ev3.parse"): the
//     import path, up to the first dot after the last slash ("net/http", "main"), as the Go
//     runtime names symbols.
//   - Anything else (C functions, kernel symbols, "<unknown>"): "".
func PackageOf(name, frameType string) string {
	// Parameters, template or generic arguments and receivers are not part of the path;
	// they may hold slashes, dots and colons of their own.
	head := name
	if i := strings.IndexAny(head, "(<["); i >= 0 {
		head = head[:i]
	}
	if strings.HasPrefix(name, "(anonymous namespace)::") {
		return "(anonymous namespace)"
	}
	if i := strings.Index(head, "::"); i > 0 {
		return head[:i]
	}
	if frameType == "jvm" || (frameType == "" && javaLike(name)) {
		if p, ok := javaPackage(name); ok {
			return p
		}
	}
	slash := strings.LastIndexByte(head, '/')
	if dot := strings.IndexByte(head[slash+1:], '.'); dot > 0 {
		return head[:slash+1+dot]
	}
	return ""
}

// javaLike says whether name reads as a Java method rather than a Go function: either the
// JVM's slash form whose last path element is a class ("java/util/HashMap.get"; Go import
// paths end in lower case by convention), or a dotted name of identifiers only with a
// capitalised class after the first element ("com.example.Foo.bar"; Go names with a
// receiver carry parentheses, and "pkg.Type.Method" gives the same package either way).
func javaLike(name string) bool {
	if slash := strings.LastIndexByte(name, '/'); slash >= 0 {
		rest := name[slash+1:]
		return rest != "" && rest[0] >= 'A' && rest[0] <= 'Z' && strings.IndexByte(rest, '.') > 0
	}
	for _, r := range name {
		if !(r == '.' || r == '_' || r == '$' || r == '<' || r == '>' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return strings.Count(name, ".") >= 2
}

// javaPackage returns the package of a Java method name: the elements before the first
// capitalised one (the class), joined with dots. ok is false when no element is a class.
func javaPackage(name string) (string, bool) {
	if i := strings.IndexAny(name, "(<"); i > 0 {
		// "Foo.<init>", "Foo.bar(I)V": the method's own decoration.
		name = name[:i]
	}
	parts := strings.FieldsFunc(name, func(r rune) bool { return r == '.' || r == '/' })
	for i, p := range parts {
		if p[0] >= 'A' && p[0] <= 'Z' {
			if i == 0 {
				// A class in the default package: the class is the best group there is.
				return p, true
			}
			return strings.Join(parts[:i], "."), true
		}
	}
	return "", false
}

// framePackage is the package of a flame frame: its function's, else the directory of its
// file (files granularity), else its binary (frames without symbols).
func framePackage(f *Frame) string {
	switch {
	case f.Function != "":
		return PackageOf(f.Function, f.FrameType)
	case f.File != "":
		if d := path.Dir(f.File); d != "." {
			return d
		}
		return f.File
	case f.Object != "":
		return path.Base(f.Object)
	}
	return ""
}
