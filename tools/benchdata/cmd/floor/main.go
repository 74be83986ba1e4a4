// Command floor is the least work any report on a pprof profile must do: it gunzips the
// profile (when gzipped) and scans its protobuf with protowire, adding up one value of every
// sample. docs/performance.md measures profq top against it: `floor FILE` prints the number
// of samples and the sum of their first values.
//
// `floor -frames FILE` also decodes every location ID of every sample and adds them up: the
// least work a report that reads stacks must do besides.
//
// `floor -inflate FILE` only gunzips the profile and counts its bytes: the part of the floor
// that no reader can spread over several cores, since a gzip stream is inflated in order.
//
// `floor -calltree FILE` is -frames that also counts the nodes of the profile's call tree
// (the distinct paths from a root to a frame, samples sharing their callers) and the
// distinct stacks: how much of the per-frame work of a report a tree of calls would share.
// It is a measurement, not a floor: it holds a map of every node.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
	"google.golang.org/protobuf/encoding/protowire"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs floor with args, and returns its exit code.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	frames := fs.Bool("frames", false, "also decode every location ID of every sample")
	inflateOnly := fs.Bool("inflate", false, "only gunzip the profile and count its bytes")
	callTree := fs.Bool("calltree", false, "-frames, and count the call tree's nodes and the distinct stacks")
	if fs.Parse(args) != nil || fs.NArg() != 1 || *frames && *inflateOnly || *callTree && *inflateOnly {
		fmt.Fprintln(stderr, "usage: floor [-frames | -calltree | -inflate] PROFILE")
		return 2
	}
	if *inflateOnly {
		n, err := inflate(fs.Arg(0))
		if err != nil {
			fmt.Fprintln(stderr, "floor:", err)
			return 1
		}
		fmt.Fprintf(stdout, "%d bytes\n", n)
		return 0
	}
	var ids *idSum
	if *frames || *callTree {
		ids = &idSum{}
	}
	if *callTree {
		ids.tree = &callTreeCount{nodes: map[treeKey]int32{}, leaves: map[int32]bool{}}
	}
	samples, sum, err := scan(fs.Arg(0), ids)
	if err != nil {
		fmt.Fprintln(stderr, "floor:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%d samples, sum of first values %d\n", samples, sum)
	if ids != nil {
		fmt.Fprintf(stdout, "%d location IDs, sum %d\n", ids.n, ids.sum)
	}
	if ids != nil && ids.tree != nil {
		t := ids.tree
		fmt.Fprintf(stdout, "%d call-tree nodes (%.1f%% of the location IDs), %d distinct stacks\n", len(t.nodes), 100*float64(len(t.nodes))/float64(max(ids.n, 1)), len(t.leaves))
	}
	return 0
}

// callTreeCount numbers the nodes of a call tree as samples add their stacks, root first.
type callTreeCount struct {
	nodes  map[treeKey]int32
	leaves map[int32]bool // the nodes that end a stack
	stack  []uint64       // the sample being read, leaf first
}

// treeKey is a node: its parent (0 for a root) and its location ID.
type treeKey struct {
	parent int32
	id     uint64
}

// add adds the stack of one sample.
func (t *callTreeCount) add(stack []uint64) {
	node := int32(0)
	for i := len(stack) - 1; i >= 0; i-- {
		k := treeKey{node, stack[i]}
		id, ok := t.nodes[k]
		if !ok {
			id = int32(len(t.nodes) + 1)
			t.nodes[k] = id
		}
		node = id
	}
	if len(stack) > 0 {
		t.leaves[node] = true
	}
}

// idSum adds up the location IDs of samples, and with tree counts their call tree.
type idSum struct {
	n    int
	sum  uint64
	tree *callTreeCount
}

// add decodes the location IDs of an encoded Sample message (field 1, packed or not). With
// the call tree it decodes them again into the tree's stack: -frames pays nothing for it.
func (s *idSum) add(msg []byte) {
	if t := s.tree; t != nil {
		t.stack = appendIDs(t.stack[:0], msg)
		t.add(t.stack)
	}
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return
		}
		msg = msg[n:]
		if num == 1 && typ == protowire.BytesType {
			packed, n := protowire.ConsumeBytes(msg)
			if n < 0 {
				return
			}
			msg = msg[n:]
			for len(packed) > 0 {
				v, k := protowire.ConsumeVarint(packed)
				if k < 0 {
					return
				}
				s.n++
				s.sum += v
				packed = packed[k:]
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, msg)
		if n < 0 {
			return
		}
		if num == 1 && typ == protowire.VarintType {
			v, _ := protowire.ConsumeVarint(msg)
			s.n++
			s.sum += v
		}
		msg = msg[n:]
	}
}

// appendIDs appends the location IDs of an encoded Sample message to stack, as add reads
// them (a malformed message ends them).
func appendIDs(stack []uint64, msg []byte) []uint64 {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return stack
		}
		msg = msg[n:]
		n = protowire.ConsumeFieldValue(num, typ, msg)
		if n < 0 {
			return stack
		}
		field := msg[:n]
		msg = msg[n:]
		switch {
		case num == 1 && typ == protowire.BytesType:
			packed, _ := protowire.ConsumeBytes(field)
			for len(packed) > 0 {
				v, k := protowire.ConsumeVarint(packed)
				if k < 0 {
					return stack
				}
				stack = append(stack, v)
				packed = packed[k:]
			}
		case num == 1 && typ == protowire.VarintType:
			v, _ := protowire.ConsumeVarint(field)
			stack = append(stack, v)
		}
	}
	return stack
}

// open opens the profile at path, gunzipped when it is gzipped.
func open(path string) (io.Reader, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		return zr, f, nil
	}
	return br, f, nil
}

// inflate reads the profile at path to its end and returns its length, gunzipped.
func inflate(path string) (int64, error) {
	r, c, err := open(path)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return io.Copy(io.Discard, r)
}

// scan reads the profile at path as a stream: one top-level field at a time, each sample's
// values (field 2 of Sample, packed or not) read for its first value, and its location IDs
// with ids.
func scan(path string, ids *idSum) (samples int, sum int64, err error) {
	r, c, err := open(path)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	in := bufio.NewReaderSize(r, 1<<20)
	var buf []byte
	for {
		tag, err := binaryUvarint(in)
		if errors.Is(err, io.EOF) {
			return samples, sum, nil
		}
		if err != nil {
			return 0, 0, err
		}
		num, typ := protowire.DecodeTag(tag)
		switch typ {
		case protowire.VarintType:
			if _, err := binaryUvarint(in); err != nil {
				return 0, 0, err
			}
			continue
		case protowire.BytesType:
		default:
			return 0, 0, fmt.Errorf("unexpected wire type %d", typ)
		}
		n, err := binaryUvarint(in)
		if err != nil {
			return 0, 0, err
		}
		if uint64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(in, buf); err != nil {
			return 0, 0, err
		}
		if num == 2 {
			samples++
			sum += firstValue(buf)
			if ids != nil {
				ids.add(buf)
			}
		}
	}
}

// firstValue returns the first value of an encoded Sample message.
func firstValue(msg []byte) int64 {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return 0
		}
		msg = msg[n:]
		if num == 2 && typ == protowire.BytesType {
			packed, n := protowire.ConsumeBytes(msg)
			if n < 0 {
				return 0
			}
			v, _ := protowire.ConsumeVarint(packed)
			return int64(v)
		}
		if num == 2 && typ == protowire.VarintType {
			v, _ := protowire.ConsumeVarint(msg)
			return int64(v)
		}
		n = protowire.ConsumeFieldValue(num, typ, msg)
		if n < 0 {
			return 0
		}
		msg = msg[n:]
	}
	return 0
}

func binaryUvarint(r *bufio.Reader) (uint64, error) {
	var x uint64
	for s := uint(0); s < 70; s += 7 {
		b, err := r.ReadByte()
		if err != nil {
			if s > 0 && errors.Is(err, io.EOF) {
				return 0, io.ErrUnexpectedEOF
			}
			return 0, err
		}
		x |= uint64(b&0x7f) << s
		if b < 0x80 {
			return x, nil
		}
	}
	return 0, errors.New("varint overflows 64 bits")
}
