//go:build unix

package cli

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// dupDescriptor returns a file of its own on descriptor fd: writes through it go where fd's
// go (the same offset, appending where fd appends), and closing it leaves fd open. A
// descriptor that is not open, or open for reading only (standard input from a file), is
// refused before anything is written.
func dupDescriptor(fd int, name string) (*os.File, error) {
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return nil, fmt.Errorf("descriptor %d is not open", fd)
	}
	if flags&unix.O_ACCMODE == unix.O_RDONLY {
		return nil, fmt.Errorf("descriptor %d is open for reading only", fd)
	}
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(d), name), nil
}
