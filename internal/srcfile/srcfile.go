// Package srcfile finds and reads the source files a profile names, for the reports that
// show source lines (profq list). It looks where pprof looks (the search path and its
// parents, with the trim path and pprof's heuristic), then, for Go, where the files of a
// Go toolchain and of Go modules live on this machine: a profile made elsewhere names
// GOROOT and module cache paths of that machine. A profile can name any file, so it reads
// only files inside the directories the user allows (Finder.allowed).
package srcfile

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// maxFileBytes is the largest source file read: a profile can name any file.
const maxFileBytes = 64 << 20

// Finder finds and reads source files, each once.
type Finder struct {
	// SearchPath is a list of directories (filepath.ListSeparator between them) where
	// relative paths are looked up, each directory and its parents; "" means the current
	// directory.
	SearchPath string
	// TrimPath is a list of prefixes to remove from absolute paths before they are looked
	// up; "" lets pprof's heuristic guess one from the search path.
	TrimPath string
	// GOROOT and ModCache are where Go's own sources and the module cache are, "" for none.
	GOROOT, ModCache string
	// Allow are more directories whose files may be read, besides the search path's, their
	// modules', GOROOT and ModCache (allowed).
	Allow []string
	// Confine, when not empty, are the only directories whose files may be read: a file
	// must be inside one of them as well as inside the directories above (profq mcp's
	// roots).
	Confine []string

	files   map[string]*File
	roots   []string // where files may be read from (allowed), made on first use
	confine []string // Confine, links resolved, made with roots
}

// File is a source file as the Finder read it.
type File struct {
	// Path is where it was found, "" when it was not.
	Path string
	// Lines are its lines, Lines[0] line 1.
	Lines []string
	// Err says why it could not be read.
	Err error
}

// Line returns line n (from 1) and whether the file has it.
func (f *File) Line(n int64) (string, bool) {
	if n < 1 || n > int64(len(f.Lines)) {
		return "", false
	}
	return f.Lines[n-1], true
}

// Read finds and reads the file a profile names.
func (fd *Finder) Read(name string) *File {
	if f, ok := fd.files[name]; ok {
		return f
	}
	if fd.files == nil {
		fd.files = map[string]*File{}
	}
	f := fd.read(name)
	fd.files[name] = f
	return f
}

func (fd *Finder) read(name string) *File {
	path, err := fd.find(name)
	if err != nil {
		return &File{Err: err}
	}
	lines, err := readLines(path)
	if err != nil {
		return &File{Path: path, Err: err}
	}
	return &File{Path: path, Lines: lines}
}

// find locates name as pprof does, then in GOROOT and the module cache, and returns the
// first file found that may be read (allowed). A file found only outside is refused.
func (fd *Finder) find(name string) (string, error) {
	search, err := fd.search()
	if err != nil {
		return "", err
	}
	var outside string // a file found where it may not be read
	found := func(c string) bool {
		if !isFile(c) {
			return false
		}
		if fd.allowed(c) {
			return true
		}
		if outside == "" {
			outside = c
		}
		return false
	}
	p := TrimPath(name, fd.TrimPath, search)
	var absErr error // what opening an absolute path said, as pprof says it
	if filepath.IsAbs(p) {
		if found(p) {
			return p, nil
		}
		if f, err := os.Open(p); err != nil {
			absErr = err
		} else {
			f.Close()
			absErr = fmt.Errorf("%s is not a regular file", p)
		}
	} else {
		for _, dir := range filepath.SplitList(search) {
			for {
				if c := filepath.Join(dir, p); found(c) {
					return c, nil
				}
				parent := filepath.Dir(dir)
				if parent == dir {
					break
				}
				dir = parent
			}
		}
	}
	if c := fd.goFile(name); c != "" && found(c) {
		return c, nil
	}
	switch {
	case outside != "":
		return "", &OutsideError{Path: outside}
	case absErr != nil:
		return "", absErr
	}
	return "", fmt.Errorf("could not find file %s on path %s", p, search)
}

// search is the search path: SearchPath, or the current directory.
func (fd *Finder) search() (string, error) {
	if fd.SearchPath != "" {
		return fd.SearchPath, nil
	}
	return os.Getwd()
}

// OutsideError is a source file that a profile names and that exists, but outside the
// directories files are read from: profq list does not print it.
type OutsideError struct {
	// Path is where the file is.
	Path string
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("%s is outside the source path (--source-path, else the current directory and its module; GOROOT; the module cache): not read; add its directory to --source-path to read it", e.Path)
}

// allowed reports whether the file at path, links resolved, is inside a directory that
// files may be read from: a directory of the search path (the current directory when there
// is none), the Go module each of those is in (the nearest directory above with a go.mod),
// GOROOT and the module cache. A profile can name any file (/etc/shadow, ~/.ssh/id_rsa,
// another user's secrets), and may come from anyone: a file outside these is not read.
func (fd *Finder) allowed(path string) bool {
	if fd.roots == nil {
		fd.roots = fd.allowedRoots()
		fd.confine = resolveDirs(fd.Confine)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	if real, err = filepath.Abs(real); err != nil {
		return false
	}
	if len(fd.Confine) > 0 && !withinAny(real, fd.confine) {
		return false
	}
	return withinAny(real, fd.roots)
}

// withinAny reports whether path is inside one of roots.
func withinAny(path string, roots []string) bool {
	for _, root := range roots {
		if within(path, root) {
			return true
		}
	}
	return false
}

// resolveDirs returns dirs absolute with their links resolved, leaving out those that do
// not exist.
func resolveDirs(dirs []string) []string {
	out := []string{}
	for _, dir := range dirs {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			if real, err = filepath.Abs(real); err == nil {
				out = append(out, real)
			}
		}
	}
	return out
}

// allowedRoots are the directories allowed reads files from, links resolved.
func (fd *Finder) allowedRoots() []string {
	roots := []string{}
	add := func(dir string) {
		if dir == "" {
			return
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			if real, err = filepath.Abs(real); err == nil {
				roots = append(roots, real)
			}
		}
	}
	search, err := fd.search()
	if err == nil {
		for _, dir := range filepath.SplitList(search) {
			add(dir)
			add(moduleRoot(dir))
		}
	}
	add(fd.GOROOT)
	add(fd.ModCache)
	for _, dir := range fd.Allow {
		add(dir)
	}
	return roots
}

// moduleRoot is the directory of the go.mod that dir is in, "" when there is none.
func moduleRoot(dir string) string {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		if isFile(filepath.Join(dir, "go.mod")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// within reports whether path is root or inside it; both are absolute and clean.
func within(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// goFile is where a Go file of another machine's toolchain or module cache is on this
// one: ".../src/runtime/proc.go" under GOROOT/src, ".../pkg/mod/MODULE@VERSION/file.go"
// under the module cache. "" when it is not there.
func (fd *Finder) goFile(name string) string {
	slash := filepath.ToSlash(name)
	if !strings.HasSuffix(slash, ".go") && !strings.HasSuffix(slash, ".s") {
		return ""
	}
	if fd.ModCache != "" {
		if i := strings.Index(slash, "/pkg/mod/"); i >= 0 {
			if c := filepath.Join(fd.ModCache, filepath.FromSlash(slash[i+len("/pkg/mod/"):])); isFile(c) {
				return c
			}
		}
	}
	if fd.GOROOT != "" {
		// The standard library's path is its package path under src: the last "/src/" of
		// an absolute path, or a relative "runtime/proc.go" as -trimpath writes it.
		rel := ""
		if i := strings.LastIndex(slash, "/src/"); i >= 0 {
			rel = slash[i+len("/src/"):]
		} else if !filepath.IsAbs(name) {
			rel = slash
		}
		if rel != "" {
			if c := filepath.Join(fd.GOROOT, "src", filepath.FromSlash(rel)); isFile(c) {
				return c
			}
		}
	}
	return ""
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// readLines reads a text file's lines, up to maxFileBytes.
func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > maxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxFileBytes)
	}
	var lines []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64<<10), maxFileBytes)
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	if err := s.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s: a line longer than %d bytes", path, maxFileBytes)
		}
		return nil, err
	}
	return lines, nil
}

// TrimPath removes from an absolute path what pprof removes before looking it up: with no
// trim given, everything up to the base name of a search directory found in it; then the
// first trim prefix that matches, /proc/self/cwd/ among them.
func TrimPath(path, trim, search string) string {
	sPath := filepath.ToSlash(path)
	if trim == "" {
		for _, dir := range filepath.SplitList(filepath.ToSlash(search)) {
			want := "/" + filepath.Base(dir) + "/"
			if i := strings.Index(sPath, want); i != -1 {
				return path[i+len(want):]
			}
		}
	}
	prefixes := append(filepath.SplitList(filepath.ToSlash(trim)), "/proc/self/cwd/./", "/proc/self/cwd/")
	for _, prefix := range prefixes {
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		if strings.HasPrefix(sPath, prefix) {
			return path[len(prefix):]
		}
	}
	return path
}
