package source

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source/fetch"
)

// SaveDir is where fetched profiles are saved, as pprof saves them: $PPROF_TMPDIR, else
// the directory pprof in the user's home directory.
func SaveDir() (string, error) {
	if dir := os.Getenv("PPROF_TMPDIR"); dir != "" {
		return dir, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no directory to save it in: set PPROF_TMPDIR (%w)", err)
	}
	return filepath.Join(home, "pprof"), nil
}

// maxSaved is how many files of one name SaveFetched tries before it gives up: pprof's
// numbering goes to 999 in three digits, and on past it.
const maxSaved = 100_000

// SaveFetched saves a copy of p, loaded from args and bases, when one of them was fetched
// (a URL or a fleet query) and o.NoSave is not set, as pprof does: the profile as loaded
// (merged, bases applied), gzipped profile.proto, in SaveDir, named as pprof names it,
// pprof.<binary>.<sample types>.<NNN>.pb.gz with the first number not taken. st holds p's
// samples when the loader left them compact (nil: p's own). It returns the file's path, ""
// when nothing was saved.
func (o Options) SaveFetched(args []string, bases Bases, p *profile.Profile, st *Stacks) (string, error) {
	if o.NoSave || !fetched(args) && !fetched(bases.Paths) {
		return "", nil
	}
	dir, err := SaveDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if st != nil {
		// p is left as it was: without samples, which the report reads from st.
		p.Sample = st.Samples(p.Location)
		defer func() { p.Sample = nil }()
	}
	prefix := "pprof."
	if len(p.Mapping) > 0 && p.Mapping[0].File != "" {
		prefix += filepath.Base(p.Mapping[0].File) + "."
	}
	for _, t := range p.SampleType {
		prefix += t.Type + "."
	}
	prefix = strings.ReplaceAll(prefix, string(filepath.Separator), "_")
	for i := 1; i <= maxSaved; i++ {
		path := filepath.Join(dir, fmt.Sprintf("%s%03d.pb.gz", prefix, i))
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if err := p.Write(f); err != nil {
			f.Close()
			os.Remove(path)
			return "", err
		}
		if err := f.Close(); err != nil {
			os.Remove(path)
			return "", err
		}
		return path, nil
	}
	return "", fmt.Errorf("%s has %d files named %s*.pb.gz already", dir, maxSaved, prefix)
}

// fetched says whether any of args is fetched: a URL or a fleet query.
// Fetches says whether reading args and bases fetches a profile (a URL or a fleet query),
// which SaveFetched saves unless told not to.
func (o Options) Fetches(args []string, bases Bases) bool {
	return fetched(args) || fetched(bases.Paths)
}

func fetched(args []string) bool {
	for _, a := range args {
		if fetch.IsURL(a) {
			return true
		}
	}
	return false
}
