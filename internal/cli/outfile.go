package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// atomicFile is an output file (-o, --report). A regular file, new or not, is written under a
// temporary name in its directory and renamed into place only when complete, so that readers
// never see a partial report and a failed run leaves the previous file as it was. What is not
// a regular file is never replaced:
//
//   - a device, a FIFO or a socket (/dev/null, a named pipe) is written in place;
//   - standard output or standard error named as a descriptor (/dev/stdout, /dev/fd/1,
//     /proc/self/fd/2, or a link to one) is written through that descriptor, as the shell
//     set it up: appending where it appends (profq top -o /dev/stdout >> log.txt adds to
//     log.txt), never replacing the file it is open on; standard input and other
//     descriptors are refused;
//   - a symbolic link stays a link: the file it points to is written, atomically in that
//     file's directory;
//   - an existing file keeps its permissions; a new one gets 0666 less the umask, as any new
//     file does.
type atomicFile struct {
	f *os.File
	// path is the path as given, for messages; target is where the report lands: path, or
	// the file the links of path lead to.
	path, target string
	// direct is true for a file written in place (a device, a FIFO, a socket).
	direct bool
	// mode is an existing file's permissions, which keep is true to give the new file.
	mode os.FileMode
	keep bool
	done bool
	// run is the run writing the file: its temporary files (runState.temps) hold f until
	// it is renamed into place.
	run *runState
}

// createAtomic creates the output file path for the run of stdio.
func createAtomic(stdio IO, path string) (*atomicFile, error) {
	fail := func(err error) (*atomicFile, error) { return nil, fmt.Errorf("writing %s: %w", path, err) }
	target, fd, err := followLinks(path)
	if err != nil {
		return fail(err)
	}
	if fd > 2 {
		// Past the standard streams, a descriptor may be one profq opened itself (an input,
		// the runtime's own) rather than one the shell set up.
		return fail(fmt.Errorf("descriptor %d is not standard output or standard error: redirect in the shell instead (profq ... >> FILE)", fd))
	}
	if fd >= 0 {
		f, err := dupDescriptor(fd, path)
		if err != nil {
			return fail(err)
		}
		return &atomicFile{f: f, path: path, target: path, direct: true}, nil
	}
	fi, err := os.Stat(path) // through links
	switch {
	case err == nil && fi.IsDir():
		return fail(errors.New("is a directory"))
	case err == nil && !fi.Mode().IsRegular():
		// Not a file to replace: write to it, as a shell redirection would.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fail(err)
		}
		return &atomicFile{f: f, path: path, target: path, direct: true}, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fail(err)
	}
	a := &atomicFile{path: path, target: target, run: stdio.run}
	if fi != nil {
		a.mode, a.keep = fi.Mode().Perm(), true
	}
	// Registered, so that a signal that ends profq removes it (exitOnSignal).
	if a.f, err = stdio.run.temps.create(filepath.Dir(target), "."+filepath.Base(target)+".tmp"); err != nil {
		return fail(err)
	}
	return a, nil
}

// maxLinks is how many symbolic links followLinks follows before it gives up, as the kernel
// does (ELOOP).
const maxLinks = 40

// followLinks returns the path that the chain of symbolic links starting at path leads to:
// path itself when it is not a link, and the missing file a dangling link names. When the
// chain passes through one of profq's own descriptors (descriptorOf), it stops there and
// returns the descriptor's number; fd is -1 otherwise.
func followLinks(path string) (target string, fd int, err error) {
	for range maxLinks {
		if fd, ok := descriptorOf(path); ok {
			return path, fd, nil
		}
		fi, err := os.Lstat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return path, -1, nil
		case err != nil:
			return "", -1, err
		case fi.Mode()&os.ModeSymlink == 0:
			return path, -1, nil
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", -1, err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return "", -1, errors.New("too many levels of symbolic links")
}

// descriptorOf says whether path names a descriptor of this process, and which: /dev/stdin,
// /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N or
// /proc/PID/fd/N with profq's PID, through whatever links its directories are. Opening such
// a path opens the file the descriptor is open on anew, from its start and without its
// O_APPEND; following it as a link leads to that file's name, which an atomic write would
// replace. Either loses what the shell meant to keep.
func descriptorOf(path string) (int, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, false
	}
	switch abs {
	case "/dev/stdin":
		return 0, true
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	dir, name := filepath.Split(abs)
	n, err := strconv.Atoi(name)
	if err != nil || n < 0 || strconv.Itoa(n) != name {
		return 0, false
	}
	dir = filepath.Clean(dir)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real // /dev/fd is a link to /proc/self/fd, /proc/self one to /proc/PID
	}
	pid := strconv.Itoa(os.Getpid())
	switch {
	case dir == "/dev/fd", dir == "/proc/self/fd", dir == "/proc/thread-self/fd", dir == "/proc/"+pid+"/fd":
		return n, true
	case strings.HasPrefix(dir, "/proc/"+pid+"/task/") && strings.HasSuffix(dir, "/fd"):
		return n, true
	}
	return 0, false
}

func (a *atomicFile) commit() error {
	a.run.testHook("output")
	if a.direct {
		a.done = true
		if err := a.f.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", a.path, err)
		}
		return nil
	}
	if a.keep {
		if err := a.f.Chmod(a.mode); err != nil {
			return fmt.Errorf("writing %s: %w", a.path, err)
		}
	}
	if err := a.f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", a.path, err)
	}
	if err := a.run.temps.rename(a.f.Name(), a.target); err != nil {
		return fmt.Errorf("writing %s: %w", a.path, err)
	}
	a.done = true
	return nil
}

func (a *atomicFile) abort() {
	if a.done {
		return
	}
	a.f.Close()
	if !a.direct {
		a.run.temps.remove(a.f.Name())
	}
}

// inputFlags are the flags whose values are input files, besides the arguments.
var inputFlags = []string{"base", "diff-base", "base-bench", "new-bench"}

// checkOutputs refuses an output (-o, --report FORMAT=PATH) that is a directory, or the same
// file as one of the command's inputs: the report would replace what it is made from. It runs
// before the command, as a usage error. Outputs and inputs that are not regular files (a device,
// standard input, a URL, a file that does not exist yet) cannot be the same file.
func checkOutputs(cmd *cobra.Command, args []string, stdin io.Reader) error {
	var outputs []string
	if f := cmd.Flags().Lookup("output"); f != nil && f.Value.String() != "" {
		if isDir(f.Value.String()) {
			return usageErrorf("--output %s is a directory: give the path of a file", f.Value.String())
		}
		outputs = append(outputs, f.Value.String())
	}
	if f := cmd.Flags().Lookup("report"); f != nil {
		for _, spec := range flagValues(f) {
			if _, path, ok := strings.Cut(spec, "="); ok {
				if isDir(path) {
					return usageErrorf("--report %s: %s is a directory: give the path of a file", spec, path)
				}
				outputs = append(outputs, path)
			}
		}
	}
	if err := distinctOutputs(outputs); err != nil {
		return err
	}
	inputs := slices.Clone(args)
	for _, name := range inputFlags {
		if f := cmd.Flags().Lookup(name); f != nil {
			inputs = append(inputs, flagValues(f)...)
		}
	}
	for _, out := range outputs {
		ofi, err := os.Stat(out)
		if err != nil {
			continue
		}
		for _, in := range inputs {
			var ifi fs.FileInfo
			switch {
			case in == "-":
				// Standard input, whatever it is (a file, a pipe), is the same as an output
				// that names it (/dev/stdin, /proc/self/fd/0) or the file it was opened on.
				f, ok := stdin.(*os.File)
				if !ok {
					continue
				}
				if ifi, err = f.Stat(); err != nil {
					continue
				}
			case strings.Contains(in, "://") || !ofi.Mode().IsRegular():
				continue
			default:
				if ifi, err = os.Stat(in); err != nil {
					continue
				}
			}
			if os.SameFile(ofi, ifi) {
				return usageErrorf("%s is an input and the output: writing the report would destroy it", out)
			}
		}
	}
	return nil
}

// distinctOutputs refuses two outputs (-o, --report) that are one file: by name, or through
// links and hard links. One would silently replace the other. Standard output ("-") and
// devices are not files to replace.
func distinctOutputs(outputs []string) error {
	for i, a := range outputs {
		for _, b := range outputs[:i] {
			if a == "-" || b == "-" {
				continue
			}
			same := filepath.Clean(a) == filepath.Clean(b)
			if fa, err := os.Stat(a); err == nil && fa.Mode().IsRegular() {
				if fb, err := os.Stat(b); err == nil {
					same = same || os.SameFile(fa, fb)
				}
			} else if err == nil {
				same = false // a device or a FIFO: written in place, as often as asked
			}
			if same {
				return usageErrorf("%s and %s are the same file: give each output its own", b, a)
			}
		}
	}
	return nil
}

// isDir reports whether path is a directory (through links), which no report can replace.
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// flagValues returns a flag's values: each of a repeatable flag's, or the one of another.
func flagValues(f *pflag.Flag) []string {
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		return sv.GetSlice()
	}
	if v := f.Value.String(); v != "" {
		return []string{v}
	}
	return nil
}

// writeProfile writes p, gzipped profile.proto, atomically to path, or to standard output
// when path is "" or "-", and returns its size. A reader that closed standard output early
// has what it wanted (see Main).
func writeProfile(stdio IO, path string, p *profile.Profile) (int64, error) {
	if path == "" || path == "-" {
		sink := &pipeSink{w: stdio.Out}
		c := &countingWriter{w: sink}
		if err := p.Write(c); err != nil && !sink.closed {
			return 0, fmt.Errorf("writing output: %w", err)
		}
		return c.n, nil
	}
	f, err := createAtomic(stdio, path)
	if err != nil {
		return 0, err
	}
	defer f.abort() // no-op once committed
	c := &countingWriter{w: f.f}
	if err := p.Write(c); err != nil {
		return 0, fmt.Errorf("writing %s: %w", path, err)
	}
	return c.n, f.commit()
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
