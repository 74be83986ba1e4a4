package render

import (
	"strings"
)

// shortFunctionName shortens a function name for a graph box as pprof's dot output does, so
// that boxes stay narrow: a Go function loses its package path but keeps its package name
// ("net/http.(*conn).serve" is "http.(*conn).serve"), a Java method its package and
// arguments ("java.util.HashMap.get(Object)" is "HashMap.get"), a C++ method its namespaces
// ("std::vector<int>::push_back" stays, "ns::Foo::bar(int)" is "Foo::bar").
func shortFunctionName(f string) string {
	f = strings.TrimPrefix(f, "(anonymous namespace)::")
	f = dropGoMajorVersion(f)
	for _, short := range []func(string) (string, bool){shortGoName, shortJavaName, shortCppName} {
		if s, ok := short(f); ok {
			return s
		}
	}
	return f
}

// dropGoMajorVersion removes the first module major version ("/v2", "/v10") that is followed
// by a package path or a name: "example.com/m/v2/pkg.F" becomes "example.com/m/pkg.F".
func dropGoMajorVersion(f string) string {
	for i := 0; i+2 < len(f); i++ {
		if f[i] != '/' || f[i+1] != 'v' {
			continue
		}
		j := i + 2
		for j < len(f) && isDigit(f[j]) {
			j++
		}
		digits := f[i+2 : j]
		major := (len(digits) == 1 && digits[0] >= '2') || (len(digits) > 1 && digits[0] != '0')
		if major && j < len(f) && (f[j] == '.' || f[j] == '/') {
			return f[:i] + f[j:]
		}
	}
	return f
}

// shortGoName drops the directories of a Go package path: the name must start with one or
// more path elements (letters, digits, '_', '-', '.') each followed by '/', and what follows
// the chosen '/' must be a dot-free package name, a dot and more. The last such '/' wins.
func shortGoName(f string) (string, bool) {
	end := 0 // f[:end] holds only path characters
	for end < len(f) && (isWord(f[end]) || f[end] == '-' || f[end] == '.' || f[end] == '/') {
		end++
	}
	for i := min(end, len(f)) - 1; i > 0; i-- {
		if f[i] != '/' || !pathElementsBefore(f[:i+1]) {
			continue
		}
		rest := f[i+1:]
		if dot := strings.IndexByte(rest, '.'); dot > 0 && dot < len(rest)-1 {
			return rest, true
		}
	}
	return f, false
}

// pathElementsBefore reports whether p is one or more non-empty path elements each ending
// in '/'.
func pathElementsBefore(p string) bool {
	if p == "" || p[0] == '/' {
		return false
	}
	return !strings.Contains(p, "//")
}

// shortJavaName keeps "Class.method" of a Java method name: lower-case package elements, a
// class starting with an upper-case letter, a method starting with a lower-case letter (or
// "<init>"), then the argument list or the end of the name.
func shortJavaName(f string) (string, bool) {
	body := f
	if i := strings.IndexByte(f, '('); i >= 0 {
		body = f[:i]
	}
	parts := strings.Split(body, ".")
	if len(parts) < 2 {
		return f, false
	}
	for _, pkg := range parts[:len(parts)-2] {
		if pkg == "" || !isLower(pkg[0]) || !allWord(pkg) {
			return f, false
		}
	}
	class, method := parts[len(parts)-2], parts[len(parts)-1]
	if class == "" || !isUpper(class[0]) || !allWordOrDollar(class) {
		return f, false
	}
	if method != "<init>" && (method == "" || !isLower(method[0]) || !allWordOrDollar(method)) {
		return f, false
	}
	return class + "." + method, true
}

// shortCppName keeps "Class::method" (and its template arguments) of a C++ name, dropping
// the namespaces before it: the class starts with an upper-case letter after any
// underscores, and at least one namespace precedes it. The last such class wins.
func shortCppName(f string) (string, bool) {
	// Split the leading "a::b::c" run into identifiers with their offsets.
	type ident struct{ start, end int }
	var ids []ident
	for pos := 0; ; {
		start := pos
		if pos < len(f) && f[pos] == '~' && len(ids) > 0 {
			pos++ // a destructor, only as a method
		}
		if pos >= len(f) || !(isLetter(f[pos]) || f[pos] == '_') {
			break
		}
		for pos < len(f) && isWord(f[pos]) {
			pos++
		}
		ids = append(ids, ident{start, pos})
		if !strings.HasPrefix(f[pos:], "::") {
			break
		}
		pos += 2
	}
	for k := len(ids) - 2; k >= 1; k-- {
		class, method := f[ids[k].start:ids[k].end], f[ids[k+1].start:ids[k+1].end]
		if f[ids[k].start] == '~' || !cppClass(class) {
			continue
		}
		for _, ns := range ids[:k] {
			if f[ns.start] == '~' {
				return f, false
			}
		}
		end := ids[k+1].end
		if end < len(f) && f[end] == '<' {
			if last := strings.LastIndexByte(f, '>'); last > end {
				end = last + 1
			}
		}
		return class + "::" + method + f[ids[k+1].end:end], true
	}
	return f, false
}

// cppClass reports whether s looks like a class name: underscores, then an upper-case letter.
func cppClass(s string) bool {
	s = strings.TrimLeft(s, "_")
	return s != "" && isUpper(s[0])
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLower(c byte) bool  { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool  { return c >= 'A' && c <= 'Z' }
func isLetter(c byte) bool { return isLower(c) || isUpper(c) }
func isWord(c byte) bool   { return isLetter(c) || isDigit(c) || c == '_' }

func allWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isWord(s[i]) {
			return false
		}
	}
	return true
}

func allWordOrDollar(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isWord(s[i]) && s[i] != '$' {
			return false
		}
	}
	return true
}
