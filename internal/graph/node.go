// Package graph builds pprof's call graph from a profile: one node per distinct frame
// identity, flat and cumulative values, trimming and report order.
package graph

import (
	"cmp"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// NodeInfo is a node's identity. Two frames with equal NodeInfo are the same node.
type NodeInfo struct {
	Name      string
	Address   uint64
	File      string
	StartLine int64
	Line      int64
	Column    int64
	Objfile   string
}

// nodeInfo returns the identity of one line of a location, as pprof's text reports key it;
// with objNames, as its callgrind and list reports key it: with the binary and the
// function's start line always.
func nodeInfo(l *profile.Location, line profile.Line, objNames bool) NodeInfo {
	var objfile string
	if l.Mapping != nil {
		objfile = l.Mapping.File
	}
	if line.Function == nil {
		return NodeInfo{Address: l.Address, Objfile: objfile}
	}
	ni := NodeInfo{
		Address: l.Address,
		Line:    line.Line,
		Column:  line.Column,
		Name:    line.Function.Name,
	}
	if f := line.Function.Filename; f != "" {
		ni.File = filepath.Clean(f)
	}
	if ni.Name == "" || objNames {
		// Without a name the binary and the function's start line tell functions apart, so one
		// file can yield several nodes with the same printed name.
		ni.Objfile = objfile
		ni.StartLine = line.Function.StartLine
	}
	return ni
}

// PrintableName is the node's name exactly as pprof prints it: "main.f", "main.f f.go:12",
// "0000000000401000 main.f f.go:12", "[libc.so.6]", "<unknown>".
func (i *NodeInfo) PrintableName() string {
	var b strings.Builder
	if i.Address != 0 {
		hex := strconv.FormatUint(i.Address, 16)
		b.WriteString(strings.Repeat("0", max(0, 16-len(hex))))
		b.WriteString(hex)
	}
	add := func(s string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	if i.Name != "" {
		add(i.Name)
	}
	switch {
	case i.Line != 0:
		s := i.File + ":" + strconv.FormatInt(i.Line, 10)
		if i.Column != 0 {
			s += ":" + strconv.FormatInt(i.Column, 10)
		}
		add(s)
	case i.File != "":
		add(i.File)
	case i.Name != "":
	case i.Objfile != "":
		add("[" + filepath.Base(i.Objfile) + "]")
	default:
		add("<unknown>")
	}
	return b.String()
}

// compare orders identities deterministically after their printed names are equal.
func (i *NodeInfo) compare(j *NodeInfo) int {
	return cmp.Or(
		cmp.Compare(i.Name, j.Name),
		cmp.Compare(i.File, j.File),
		cmp.Compare(i.Objfile, j.Objfile),
		cmp.Compare(i.StartLine, j.StartLine),
		cmp.Compare(i.Line, j.Line),
		cmp.Compare(i.Column, j.Column),
		cmp.Compare(i.Address, j.Address),
	)
}

// Node is one node of the graph with its accumulated values. Under a mean, FlatDiv and CumDiv
// accumulate the divisors.
type Node struct {
	Info                       NodeInfo
	Flat, FlatDiv, Cum, CumDiv int64
	// FrameType is the type of the node's frames ("kernel", "native", "jvm", ...) when the
	// inputs state it and every location of the node agrees, or "".
	FrameType string
}

// FrameType is the frame type of location l: its mapping's, in frameTypes (by mapping file),
// or "".
func FrameType(l *profile.Location, frameTypes map[string]string) string {
	if l.Mapping == nil || frameTypes == nil {
		return ""
	}
	return frameTypes[l.Mapping.File]
}

// FlatValue is the node's flat value, as a truncated mean when divisors were accumulated.
func (n *Node) FlatValue() int64 {
	if n.FlatDiv == 0 {
		return n.Flat
	}
	return n.Flat / n.FlatDiv
}

// CumValue is the node's cumulative value, as a truncated mean when divisors were accumulated.
func (n *Node) CumValue() int64 {
	if n.CumDiv == 0 {
		return n.Cum
	}
	return n.Cum / n.CumDiv
}
