//go:build !unix

package cli

import (
	"errors"
	"os"
)

// dupDescriptor is not available here: profq writes to its own descriptors only on Unix.
func dupDescriptor(fd int, name string) (*os.File, error) {
	return nil, errors.New("writing to a descriptor by its name is not supported on this system: leave out -o to write to standard output")
}
