package symbolize

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/google/pprof/profile"
)

// errNotFound is the error of a mapping whose binary is nowhere.
var errNotFound = errors.New("binary not found")

// candidates lists where m's binary may be under the search path dirs, in the order pprof
// tries them (driver's locateBinaries): by build ID (dir/ID/name, every file in dir/ID,
// perf's dir/path/ID, LLVM's dir/ID[:2]/ID[2:].debug), then by name (dir/name, dir/path, and
// GDB's separate debug files: dir/path.debug, dir/dirname/.debug/name.debug,
// dir/usr/lib/debug/dirname/name.debug), one directory after another.
func candidates(m *profile.Mapping, dirs []string) []string {
	var noVolume, base, dir string
	if m.File != "" {
		noVolume = strings.TrimPrefix(m.File, filepath.VolumeName(m.File))
		base = filepath.Base(m.File)
		dir = filepath.Dir(noVolume)
	}
	var out []string
	for _, d := range dirs {
		if m.BuildID != "" {
			out = append(out, filepath.Join(d, m.BuildID, base))
			if matches, err := filepath.Glob(filepath.Join(d, m.BuildID, "*")); err == nil {
				out = append(out, matches...)
			}
			out = append(out, filepath.Join(d, noVolume, m.BuildID))
			if len(m.BuildID) >= 2 {
				out = append(out, filepath.Join(d, m.BuildID[:2], m.BuildID[2:]+".debug"))
			}
		}
		if m.File != "" {
			out = append(out,
				filepath.Join(d, base),
				filepath.Join(d, noVolume),
				filepath.Join(d, noVolume+".debug"),
				filepath.Join(d, dir, ".debug", base+".debug"),
				filepath.Join(d, "usr", "lib", "debug", dir, base+".debug"))
		}
	}
	return out
}

// locate opens m's binary: the first candidate under the search path that is a readable
// ELF file whose build ID, when both have one, is m's; else the mapping's own file. Like
// pprof, candidates that cannot be read are passed over silently.
func locate(m *profile.Mapping, dirs []string, maxDebug int64) (*objFile, error) {
	for _, name := range candidates(m, dirs) {
		b, err := open(name, maxDebug)
		if err != nil {
			continue
		}
		if m.BuildID != "" && b.buildID != m.BuildID {
			b.close()
			continue
		}
		return b, nil
	}
	if m.File == "" {
		if m.ID == 1 || m.BuildID == "" {
			return nil, fmt.Errorf("%w: the profile does not name the binary (give it with --binary)", errNotFound)
		}
		return nil, fmt.Errorf("%w on the search path", errNotFound)
	}
	b, err := open(m.File, maxDebug)
	if errors.Is(err, errMissing) {
		return nil, fmt.Errorf("%w: no file %s, nor on the search path", errNotFound, m.File)
	}
	return b, err
}
