package source

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/profq/profq/internal/source/format"
)

// TestV8SamplesCountedFirst reads a .cpuprofile of one sample more than --max-samples: it is
// refused from the count of its samples, before they are decoded, having allocated less than
// its input's size twice over (decoded and weighed, they would take ten times that).
func TestV8SamplesCountedFirst(t *testing.T) {
	const limit = 100_000
	var b bytes.Buffer
	b.WriteString(`{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"children":[2]},`)
	b.WriteString(`{"id":2,"callFrame":{"functionName":"work","scriptId":"1","url":"app.js","lineNumber":1,"columnNumber":1}}],`)
	fmt.Fprintf(&b, `"startTime":0,"endTime":%d,"samples":[2`, limit+1)
	b.Write(bytes.Repeat([]byte(",2"), limit))
	b.WriteString(`],"timeDeltas":[1`)
	b.Write(bytes.Repeat([]byte(",1"), limit))
	b.WriteString("]}")
	data := b.Bytes()
	for _, samples := range []int{limit, limit + 1} {
		var err error
		alloc := allocated(func() {
			_, _, err = Options{MaxSamples: samples}.LoadBytes([]string{"x.cpuprofile"}, [][]byte{data})
		})
		if samples > limit {
			if err != nil {
				t.Errorf("--max-samples %d: %v", samples, err)
			}
			continue
		}
		var se *format.SampleLimitError
		if !errors.As(err, &se) {
			t.Errorf("--max-samples %d: %v, want more than %d samples", samples, err, samples)
		}
		if alloc > 2*uint64(len(data)) {
			t.Errorf("--max-samples %d: %d MB allocated for %d MB of input", samples, alloc>>20, len(data)>>20)
		}
	}
}

// nestedOpens is an evented speedscope profile of n frames, f and g in turn, opened one
// inside the other one time unit apart, none closed.
func nestedOpens(n int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"f"},{"name":"g"}]},"profiles":[{"type":"evented","name":"p","unit":"nanoseconds","startValue":0,"endValue":%d,"events":[`, n)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"O","frame":%d,"at":%d}`, i%2, i)
	}
	b.WriteString("]}]}")
	return b.Bytes()
}

// TestSpeedscopeNestedOpens reads 20,000 nested opens: refused at the 10,001st, having held
// the stacks open so far as a tree of 10,000 nodes (as lists, the 10,000 stacks sampled took
// 50 million frame indices, 400 MB); and 2,000 with the depth limit at 2,000, a sample of
// each depth, its frames leaf first.
func TestSpeedscopeNestedOpens(t *testing.T) {
	data := nestedOpens(20_000)
	var err error
	alloc := allocated(func() {
		_, _, err = Options{}.LoadBytes([]string{"x.speedscope.json"}, [][]byte{data})
	})
	var de *format.DepthLimitError
	if !errors.As(err, &de) {
		t.Fatalf("%v, want more than 10000 frames", err)
	}
	if alloc > 32<<20 {
		t.Errorf("%d MB allocated, want at most 32", alloc>>20)
	}
	const n = 2000
	p, _, err := Options{MaxStackDepth: n}.LoadBytes([]string{"x.speedscope.json"}, [][]byte{nestedOpens(n)})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != n {
		t.Fatalf("%d samples, want %d", len(p.Sample), n)
	}
	for _, s := range p.Sample {
		d := len(s.Location)
		if s.Value[0] != 1 {
			t.Fatalf("the sample of %d frames is worth %d, want 1", d, s.Value[0])
		}
		// Leaf first: the leaf is f or g as the depth is odd or even.
		for j, l := range s.Location {
			if want := []string{"f", "g"}[(d-1-j)%2]; l.Line[0].Function.Name != want {
				t.Fatalf("frame %d of the sample of %d frames is %s, want %s", j, d, l.Line[0].Function.Name, want)
			}
		}
	}
}
