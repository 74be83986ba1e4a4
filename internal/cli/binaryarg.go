package cli

import (
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/profq/profq/internal/symbolize"
)

// binaryArgument takes pprof's binary argument: "pprof BINARY PROFILE..." names the
// program before its profiles, and pprof recognizes it by opening it as an object file.
// When the first of several arguments is an executable, it becomes --binary (which turns
// --symbolize local on unless --symbolize none is given) and the rest are the profiles. A
// lone executable is an input that is not a profile (exit 3), and one with --binary as well
// a usage error; each says why.
func binaryArgument(args []string, o *symbolize.Options) ([]string, error) {
	if len(args) == 0 {
		return args, nil
	}
	kind := objectFile(args[0])
	switch {
	case kind == "":
		return args, nil
	case len(args) == 1:
		return nil, fmt.Errorf("%s: an executable (%s), not a profile: name the profile after it (pprof's binary argument) or give the binary with --binary", args[0], kind)
	case o.Binary != "":
		return nil, usageErrorf("two binaries: %s before the profiles and --binary %s; give one", args[0], o.Binary)
	}
	o.Binary = args[0]
	return args[1:], nil
}

// objectFile names the kind of object file at path, "" when it is none (or no regular file:
// "-", a URL or a FIFO are never read here). The headers are parsed, as pprof opens the
// file, so that a text profile whose first bytes happen to be a magic number stays one.
func objectFile(path string) string {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return ""
	}
	for _, o := range []struct {
		kind string
		open func(string) (io.Closer, error)
	}{
		{"ELF", func(p string) (io.Closer, error) { return elf.Open(p) }},
		{"Mach-O", func(p string) (io.Closer, error) { return macho.Open(p) }},
		{"Mach-O universal", func(p string) (io.Closer, error) { return macho.OpenFat(p) }},
		{"PE", openPE},
	} {
		if f, err := o.open(path); err == nil {
			f.Close()
			return o.kind
		}
	}
	return ""
}

// openPE opens a PE executable: debug/pe also takes any file as a COFF object without the
// DOS header (a legacy pprof CPU profile among them), so the "MZ" stub and the "PE\0\0"
// signature it points to are checked first.
func openPE(path string) (io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var dos [0x40]byte
	if _, err := io.ReadFull(f, dos[:]); err != nil || dos[0] != 'M' || dos[1] != 'Z' {
		return nil, errors.New("no DOS header")
	}
	var sig [4]byte
	if _, err := f.ReadAt(sig[:], int64(binary.LittleEndian.Uint32(dos[0x3c:]))); err != nil || string(sig[:]) != "PE\x00\x00" {
		return nil, errors.New("no PE signature")
	}
	return pe.Open(path)
}
