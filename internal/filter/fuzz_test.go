package filter

import "testing"

// FuzzCompile feeds arbitrary expressions to every filter: compiling either fails with an
// ExprError or yields a filter that applies to a profile without panicking.
func FuzzCompile(f *testing.F) {
	for _, seed := range []string{
		"", "main", "(", "bytes=1kb", "bytes=1kb:4mb", ":64", "64kb:", "key=a,b", "a:b,c:d",
		"99999999999999999999", "1:99999999999999999999kb", "-5ms:+7ms", "=", "x=", "1kb:2s",
	} {
		f.Add(seed, seed)
	}
	f.Fuzz(func(t *testing.T, name, tag string) {
		s, err := Compile(Options{Focus: name, Hide: name, ShowFrom: name, PruneFrom: name, TagFocus: tag, TagIgnore: tag})
		if err != nil {
			if _, ok := err.(*ExprError); !ok {
				t.Fatalf("error %v is not an ExprError", err)
			}
			return
		}
		p := labelled()
		s.Apply(p)
		if err := p.CheckValid(); err != nil {
			t.Fatalf("filtered profile is invalid: %v", err)
		}
	})
}
