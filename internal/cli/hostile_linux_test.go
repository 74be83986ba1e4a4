package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/profq/profq/internal/report"

	"github.com/profq/profq/internal/testkit/proftest"
)

// Hostile inputs that are special files rather than special bytes: a FIFO, a file removed
// while profq has it open, a file cut short after it was opened. Linux shows open files,
// removed or not, as /proc/self/fd/N, which lets a test hand profq a file it holds open.

func TestHostileFiles(t *testing.T) {
	dir := t.TempDir()
	small := newSmallProfile().encode() // main 10 flat, f 5: total 15
	want := wantRows(15, report.Row{Name: "main", Flat: 10, Cum: 15}, report.Row{Name: "f", Flat: 5, Cum: 5})
	top := func(path string) []string { return []string{"top", "--format", "json", path} }

	// A FIFO is read to its end like a pipe, its size being unknown. (One without a
	// writer blocks the open, as it does for any reader: profq waits like cat would.)
	t.Run("FIFO with a writer", func(t *testing.T) {
		fifo := filepath.Join(dir, "fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				done <- err
				return
			}
			// Written in small pieces, so that profq sees several reads.
			for i := 0; i < len(small); i += 7 {
				if _, err := f.Write(small[i:min(i+7, len(small))]); err != nil {
					f.Close()
					done <- err
					return
				}
			}
			done <- f.Close()
		}()
		runHostile(t, hostileRow{args: top(fifo), code: ExitOK, check: want})
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})

	// Removing a file removes its name; profq, which opened it, reads it whole.
	t.Run("file removed while open", func(t *testing.T) {
		path := proftest.WriteFile(t, dir, "removed.pb", small)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		runHostile(t, hostileRow{args: top(procFD(f)), code: ExitOK, check: want})
	})

	// A file cut short after profq's caller opened it, and so after its size was known:
	// profq reads what is there and says what is wrong with it.
	t.Run("file truncated while open", func(t *testing.T) {
		cpu, err := os.ReadFile(filepath.Join("..", "..", "testdata", "profiles", "cpu.pb.gz"))
		if err != nil {
			t.Fatal(err)
		}
		path := proftest.WriteFile(t, dir, "truncated.pb.gz", cpu)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := os.Truncate(path, int64(len(cpu)/3)); err != nil {
			t.Fatal(err)
		}
		runHostile(t, hostileRow{args: top(procFD(f)), code: ExitInput, msg: "unexpected EOF"})
	})
}

func procFD(f *os.File) string { return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())) }
