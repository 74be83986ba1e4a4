package mcp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/profq/profq/internal/redact"
	"github.com/profq/profq/internal/source/fetch"
)

// listSeparator separates the directories of --source-path.
const listSeparator = filepath.ListSeparator

// profileArg checks a profile argument and returns what the command line gets: a URL or
// fleet query as it is, where the server allows it; a file as its real path (links
// resolved), which must be inside a root. With weights (pgo), PROFILE@WEIGHT is a file with
// its weight when no file has the whole name.
func (s *Server) profileArg(arg string, weights bool) (string, error) {
	switch {
	case arg == "" || arg == "-":
		return "", fmt.Errorf("%q: name a profile file: standard input carries the protocol", arg)
	case fetch.IsFleetURL(arg):
		if !s.cfg.AllowFleet {
			return "", fmt.Errorf("%s: fleet queries are off in this server (profq mcp --allow-fleet turns them on)", redact.URL(arg))
		}
		return arg, nil
	case strings.Contains(arg, "://"):
		if !s.cfg.AllowURLs {
			return "", fmt.Errorf("%s: URLs are off in this server (profq mcp --allow-urls turns them on)", redact.URL(arg))
		}
		if !fetch.IsURL(arg) {
			return "", fmt.Errorf("%s: not an http or https URL", redact.URL(arg))
		}
		return arg, nil
	}
	path, err := s.inRoots(arg)
	if err == nil || !weights {
		return path, err
	}
	at := strings.LastIndexByte(arg, '@')
	if at <= 0 {
		return "", err
	}
	if _, werr := strconv.ParseFloat(arg[at+1:], 64); werr != nil {
		return "", err
	}
	path, perr := s.inRoots(arg[:at])
	if perr != nil {
		return "", perr
	}
	return path + arg[at:], nil
}

// serverArg checks targets' SERVER: a fleet server, where fleet queries are on.
func (s *Server) serverArg(arg string) error {
	if !s.cfg.AllowFleet {
		return fmt.Errorf("%s: fleet queries are off in this server (profq mcp --allow-fleet turns them on)", redact.URL(arg))
	}
	return nil
}

// inRoots resolves a path (relative ones from the first root) to the real path of an
// existing file or directory inside one of the roots.
func (s *Server) inRoots(arg string) (string, error) {
	p := arg
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.cfg.Roots[0], p)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(p))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", &inputError{fmt.Errorf("%s: no such file in the roots", arg)}
		}
		return "", &inputError{fmt.Errorf("%s: %w", arg, err)}
	}
	for _, root := range s.cfg.Roots {
		if within(real, root) {
			return real, nil
		}
	}
	return "", fmt.Errorf("%s: outside the roots this server reads (%s): refused", arg, strings.Join(s.cfg.Roots, ", "))
}

// inputError is a path that cannot be read (it does not exist), as the command line's
// input errors are: exit 3. Every other refusal of a call's arguments is a usage error.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// within reports whether path is root or inside it; both are absolute and clean.
func within(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// weightArg checks pgo's --weight PROFILE=WEIGHT: PROFILE as a profile argument.
func (s *Server) weightArg(spec string) (string, error) {
	eq := strings.LastIndexByte(spec, '=')
	if eq <= 0 {
		return spec, nil // the command says what is wrong
	}
	p, err := s.profileArg(spec[:eq], false)
	if err != nil {
		return "", err
	}
	return p + spec[eq:], nil
}

// dirList checks a list of directories (--source-path): each inside the roots.
func (s *Server) dirList(list string) (string, error) {
	var out []string
	for _, dir := range filepath.SplitList(list) {
		if dir == "" {
			continue
		}
		p, err := s.inRoots(dir)
		if err != nil {
			return "", err
		}
		out = append(out, p)
	}
	return strings.Join(out, string(listSeparator)), nil
}

// fileName checks the name of a file to write into the output directory: a name, no path.
func fileName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		return fmt.Errorf("file: %q is not a file name: the file is written into the server's output directory, under a name without a path", name)
	}
	return nil
}

// outputFile is the path in the output directory of a file the tool writes: name, or the
// next default name (flame-1.html, ...).
func (s *Server) outputFile(kind, name, format string) (string, error) {
	s.filesMu.Lock()
	defer s.filesMu.Unlock()
	if s.cfg.OutputDir == "" {
		dir, err := os.MkdirTemp("", "profq-mcp-")
		if err != nil {
			return "", fmt.Errorf("making the output directory: %w", err)
		}
		s.cfg.OutputDir = dir
	}
	dir := s.cfg.OutputDir
	if name == "" {
		ext := defaultExt(kind)
		if kind == "flame" {
			ext = format
		}
		for {
			s.files[kind]++
			name = fmt.Sprintf("%s-%d.%s", kind, s.files[kind], ext)
			if _, err := os.Lstat(filepath.Join(dir, name)); errors.Is(err, os.ErrNotExist) {
				break
			}
		}
	}
	path := filepath.Join(dir, name)
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return "", fmt.Errorf("file: %s is not a regular file: not replaced", path)
	}
	return path, nil
}

// writeFile writes a file of the output directory whole, under a temporary name renamed
// into place, never through a link.
func writeFile(path string, write func(io.Writer) error) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file: not replaced", path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".profq-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
