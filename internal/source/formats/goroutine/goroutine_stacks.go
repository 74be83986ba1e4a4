package goroutine

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/pprof/profile"
)

// goroutineStack is one debug=2 goroutine as it is read.
type goroutineStack struct {
	state   string
	wait    int64 // minutes; -1 when the dump prints none
	labels  map[string][]string
	creator string
	elided  bool
	// locs are the locations read so far; pending the inlined frames not yet closed by
	// the frame of their physical caller.
	locs    []*profile.Location
	pending []frame
	frames  int
}

// parseGoroutineStacks reads a debug=2 dump: every goroutine's traceback, goroutines with
// the same stack, state, wait, creator and labels merged into one sample.
func parseGoroutineStacks(src format.LineSource, lim format.Limits) (*profile.Profile, []string, error) {
	b := newGoroutineBuilder("goroutine", lim)
	var (
		g *goroutineStack
		// fn is the function line waiting for its position line; creator says it was a
		// "created by" line; ancestors that the lines belong to an ancestor's traceback,
		// which is not the goroutine's stack.
		fn        []byte
		fnLine    int
		creator   bool
		ancestors bool
	)
	finish := func() error {
		if g == nil {
			return nil
		}
		if err := locationOf(b, g, nil); err != nil {
			return err
		}
		labels := map[string][]string{StateLabel: {g.state}}
		for k, v := range g.labels {
			labels[k] = v
		}
		if g.creator != "" {
			labels[CreatorLabel] = []string{g.creator}
		}
		if g.elided {
			labels[ElidedLabel] = []string{"true"}
		}
		var num map[string][]int64
		if g.wait >= 0 {
			num = map[string][]int64{WaitLabel: {g.wait}}
		}
		var key strings.Builder
		for _, l := range g.locs {
			fmt.Fprintf(&key, "%d,", l.ID)
		}
		key.WriteString(labelKey(labels, num))
		err := b.add(key.String(), 1, g.locs, labels, num)
		g = nil
		return err
	}
	for n := 1; ; n++ {
		line, err := nextLine(src)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("goroutine dump: line %d: %w", n, err)
		}
		if fn != nil {
			// The position of the function line before: "\tfile:line +0xoff".
			name, fnl := fn, fnLine
			fn = nil
			if len(line) > 0 && line[0] == '\t' {
				if err := stackPosition(b, g, n, name, line[1:], creator); err != nil {
					return nil, nil, err
				}
				creator = false
				continue
			}
			b.skip(fnl, name)
			creator = false
		}
		trimmed := bytes.TrimRight(line, " \t")
		switch {
		case len(trimmed) == 0:
			if err := finish(); err != nil {
				return nil, nil, err
			}
			ancestors = false
		case bytes.HasPrefix(trimmed, []byte("goroutine ")) && trimmed[len(trimmed)-1] == ':':
			if err := finish(); err != nil {
				return nil, nil, err
			}
			ancestors = false
			if g = parseGoroutineHeader(string(trimmed)); g == nil {
				b.skip(n, line)
			}
		case g == nil || ancestors:
			if g == nil && len(b.p.Sample) == 0 && n == 1 {
				return nil, nil, fmt.Errorf("goroutine dump: line 1: want \"goroutine N [state]:\"")
			}
			if g == nil {
				b.skip(n, line)
			}
		case bytes.HasPrefix(trimmed, []byte("[originating from goroutine ")):
			// GODEBUG=tracebackancestors: the stacks of the goroutines that created this one.
			ancestors = true
		case bytes.HasPrefix(trimmed, []byte("...")) && bytes.HasSuffix(trimmed, []byte("elided...")):
			g.elided = true
		case bytes.HasPrefix(trimmed, []byte("created by ")):
			fn, fnLine, creator = bytes.Clone(trimmed[len("created by "):]), n, true
		case bytes.HasPrefix(trimmed, []byte("\tgoroutine running on other thread")):
		case bytes.HasPrefix(trimmed, []byte("non-Go function at pc=0x")):
			pc, err := strconv.ParseUint(string(trimmed[len("non-Go function at pc=0x"):]), 16, 64)
			if err != nil {
				b.skip(n, line)
				continue
			}
			if err := locationOf(b, g, nil); err != nil {
				return nil, nil, err
			}
			l, err := b.location(strconv.FormatUint(pc, 16), pc, nil)
			if err != nil {
				return nil, nil, err
			}
			g.locs = append(g.locs, l)
			if err := g.count(lim); err != nil {
				return nil, nil, err
			}
		case trimmed[0] != '\t' && trimmed[len(trimmed)-1] == ')':
			fn, fnLine = bytes.Clone(trimmed), n
		default:
			b.skip(n, line)
		}
	}
	if fn != nil {
		b.skip(fnLine, fn)
	}
	if err := finish(); err != nil {
		return nil, nil, err
	}
	if len(b.p.Sample) == 0 {
		return nil, nil, fmt.Errorf("goroutine dump: no goroutines in the input")
	}
	return b.p, b.warnings("debug=2"), nil
}

// count counts one more frame of g against the depth limit, as it is read.
func (g *goroutineStack) count(lim format.Limits) error {
	g.frames++
	if lim.Depth > 0 && g.frames > lim.Depth {
		return &format.DepthLimitError{Limit: lim.Depth}
	}
	return nil
}

// stackPosition reads the position line of a function line (or of a "created by" line).
func stackPosition(b *goroutineBuilder, g *goroutineStack, n int, fnText, pos []byte, creator bool) error {
	s := string(pos)
	if i := strings.Index(s, " fp="); i >= 0 {
		s = s[:i]
	}
	offset := false
	if i := strings.LastIndex(s, " +0x"); i >= 0 {
		s, offset = s[:i], true
	}
	file, ln, ok := splitFileLine(s)
	if !ok {
		b.skip(n, pos)
		return nil
	}
	if creator {
		name, _, _ := strings.Cut(string(fnText), " in goroutine ")
		g.creator = name
		return nil
	}
	text := string(fnText)
	open := strings.LastIndexByte(text, '(')
	if open <= 0 {
		b.skip(n-1, fnText)
		return nil
	}
	name, args := text[:open], text[open+1:len(text)-1]
	if name == "panic" {
		name = "runtime.gopanic"
	}
	if err := g.count(b.lim); err != nil {
		return err
	}
	fr := frame{name: name, file: file, line: ln}
	if args == "..." && !offset {
		// Inlined into the next frame printed.
		g.pending = append(g.pending, fr)
		return nil
	}
	return locationOf(b, g, &fr)
}

// locationOf makes the location of g's pending inlined frames and fr, their caller (nil
// when there is none: the stack ended, or a frame without a name follows).
func locationOf(b *goroutineBuilder, g *goroutineStack, fr *frame) error {
	frames := g.pending
	if fr != nil {
		frames = append(frames, *fr)
	}
	g.pending = nil
	if len(frames) == 0 {
		return nil
	}
	var key strings.Builder
	for _, f := range frames {
		fmt.Fprintf(&key, "%q %q %d\n", f.name, f.file, f.line)
	}
	l, err := b.location(key.String(), 0, frames)
	if err != nil {
		return err
	}
	g.locs = append(g.locs, l)
	return nil
}

// parseGoroutineHeader reads "goroutine N [state, M minutes, locked to thread labels:{...}]:",
// nil when it is not one.
func parseGoroutineHeader(line string) *goroutineStack {
	m := reGoroutineHdr.FindStringSubmatch(line)
	if m == nil {
		return nil
	}
	g := &goroutineStack{wait: -1}
	inside := m[2]
	if i := strings.Index(inside, " labels:{"); i >= 0 {
		if l, ok := parseLabelSet(inside[i+len(" labels:"):]); ok {
			g.labels = l
		}
		inside = inside[:i]
	}
	parts := strings.Split(inside, ", ")
	g.state = strings.ReplaceAll(parts[0], " (scan)", "")
	for _, p := range parts[1:] {
		if w := reWaitMinutes.FindStringSubmatch(p); w != nil {
			g.wait, _ = strconv.ParseInt(w[1], 10, 64)
		}
	}
	return g
}
