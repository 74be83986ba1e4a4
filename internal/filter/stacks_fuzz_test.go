package filter_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/filter"
	"github.com/profq/profq/internal/stacks"
)

// FuzzApplyStacks holds ApplyStacks to Apply on samples (compareApply) for any filter
// expressions, one a line in the order of Options.Fields (focus, ignore, hide, show,
// show_from, tagfocus, tagignore, prune_from, tagshow, taghide), on any profile: data when
// pprof's parser reads it, else one of the profiles that which picks.
func FuzzApplyStacks(f *testing.F) {
	var files [][]byte
	for _, rel := range []string{"profiles/labels.pb.gz", "profiles/heap.pb.gz", "profiles/cpu.pb.gz"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", filepath.FromSlash(rel)))
		if err != nil {
			f.Fatal(err)
		}
		files = append(files, b)
	}
	for i, seed := range []string{
		"main\n\n\n\n\n\n\n\n\n",
		"\nruntime\\.\nmallocgc\n\n\n\n\n\n\n",
		"\n\njson\nmain|index\nServer\nhandler=/api/a\n\nindex\n\n",
		"index\nvector\n\n\nmain\nbytes=1kb:\nlatency=1s:2s\nhandle\n^h\ntenant",
		"\n\n\n\n\n:64kb\nhandler=zzz,/api/b\n\n.\n",
		".\n\n.\n\n.\n\n\n.\n\n",
		"libc\n\nlibc\napp\n\nhandler:/api/a,tenant:t1\n\n\\(anonymous\n\n",
	} {
		f.Add(uint8(i), seed, []byte(nil))
	}
	f.Add(uint8(0), "alloc\n\n\n\n\n\n\n\n\n", files[0])
	f.Fuzz(func(t *testing.T, which uint8, exprs string, data []byte) {
		var o filter.Options
		fields := o.Fields()
		for i, e := range strings.SplitN(exprs, "\n", len(fields)) {
			*fields[i].Value = e
		}
		if _, err := filter.Compile(o); err != nil {
			return
		}
		var load loader
		if _, err := profile.ParseData(data); len(data) > 0 && err == nil {
			load = func(tb testing.TB) (*profile.Profile, *stacks.Stacks) {
				p, err := profile.ParseData(data)
				if err != nil {
					tb.Fatal(err)
				}
				return p, stacks.FromProfile(p)
			}
		} else if k := int(which) % (len(files) + 1); k == len(files) {
			load = builtProfile
		} else {
			load = func(tb testing.TB) (*profile.Profile, *stacks.Stacks) { return loadBytes(tb, files[k]) }
		}
		for _, readOnly := range []bool{false, true} {
			if differ := compareApply(t, load, o, readOnly); differ != "" {
				t.Fatalf("%+v, read-only %v:\n%s", o, readOnly, differ)
			}
		}
	})
}
