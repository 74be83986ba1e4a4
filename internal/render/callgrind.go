package render

import (
	"bufio"
	"fmt"
	"io"

	"github.com/profq/profq/internal/report"
)

// Callgrind writes c in the callgrind format KCachegrind and QCachegrind read, as pprof
// -callgrind writes it: objects, files and functions named once and then by number,
// addresses relative to the previous node's where that is shorter.
func Callgrind(w io.Writer, c *report.Callgrind) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "positions: instr line")
	fmt.Fprintln(bw, "events:", c.Event)
	objfiles, files, names := callgrindNames{}, callgrindNames{}, callgrindNames{}
	var prev *report.CallgrindNode
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if prev == nil || n.Objfile != prev.Objfile || n.File != prev.File || n.Name != prev.Name {
			fmt.Fprintln(bw)
			fmt.Fprintln(bw, "ob="+objfiles.name(n.Objfile))
			fmt.Fprintln(bw, "fl="+files.name(n.File))
			fmt.Fprintln(bw, "fn="+names.name(n.Name))
		}
		fmt.Fprintf(bw, "%s %d %d\n", callgrindAddress(prev, n.Address), n.Line, n.Flat)
		for _, call := range n.Calls {
			fmt.Fprintln(bw, "cfl="+files.name(call.File))
			fmt.Fprintln(bw, "cfn="+names.name(call.Name))
			// A call has no flat weight of its own: 0, as pprof writes it.
			fmt.Fprintf(bw, "calls=0 %s %d\n", callgrindAddress(prev, call.Address), call.Line)
			fmt.Fprintf(bw, "* * %d\n", call.Weight)
		}
		prev = n
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing callgrind: %w", err)
	}
	return nil
}

// callgrindNames numbers the names of one kind (objects, files, functions) as they come.
type callgrindNames map[string]int

// name is "(id) name" the first time, "(id)" after, "" for no name.
func (c callgrindNames) name(s string) string {
	if s == "" {
		return ""
	}
	if id, ok := c[s]; ok {
		return fmt.Sprintf("(%d)", id)
	}
	id := len(c) + 1
	c[s] = id
	return fmt.Sprintf("(%d) %s", id, s)
}

// callgrindAddress is addr in callgrind's compressed form: "*" for the previous node's
// address, a signed offset from it when shorter than the address itself.
func callgrindAddress(prev *report.CallgrindNode, addr uint64) string {
	abs := fmt.Sprintf("%#x", addr)
	if prev == nil {
		return abs
	}
	if prev.Address == addr {
		return "*"
	}
	if rel := fmt.Sprintf("%+d", int64(addr-prev.Address)); len(rel) < len(abs) {
		return rel
	}
	return abs
}
