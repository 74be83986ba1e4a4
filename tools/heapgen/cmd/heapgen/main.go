// Command heapgen writes a real Go heap profile with hundreds of thousands of distinct
// allocation stacks, for profq's benchmarks.
//
// Usage:
//
//	heapgen [-stacks N] [-o FILE]
//
// The profile is gzip-compressed protobuf, as the runtime writes it. With -o the file is
// replaced atomically; without it the profile goes to standard output.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/profq/profq/tools/heapgen"
)

func main() {
	// First, so that every allocation from here on is recorded.
	runtime.MemProfileRate = 1
	out := flag.String("o", "", "write the profile to `file` instead of standard output")
	stacks := flag.Int("stacks", heapgen.DefaultStacks, "number of distinct allocation stacks")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: heapgen [-stacks N] [-o FILE]")
		os.Exit(2)
	}
	if err := run(*out, *stacks); err != nil {
		fmt.Fprintf(os.Stderr, "heapgen: %v\n", err)
		os.Exit(1)
	}
}

func run(out string, stacks int) error {
	if out == "" {
		bw := bufio.NewWriter(os.Stdout)
		if err := heapgen.Run(bw, stacks); err != nil {
			return err
		}
		return bw.Flush()
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), filepath.Base(out)+".tmp*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(tmp)
	err = tmp.Chmod(0o644) // CreateTemp's 0600 is for secrets; this is a shared input
	if err == nil {
		err = heapgen.Run(bw, stacks)
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), out)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return nil
}
