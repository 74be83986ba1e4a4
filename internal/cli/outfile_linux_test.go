package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Outputs that are not regular files are never replaced: a device, a FIFO and a symlink stay
// what they are, an existing file keeps its mode, and a new one honours the umask. Every file
// is made in a temporary directory; the device is one made there (as root), never /dev's own.
func TestOutputsNeverDestroy(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join("..", "..", "testdata", "profiles", "cpu.pb.gz")
	run := func(t *testing.T, out string) {
		t.Helper()
		var stderr bytes.Buffer
		if code := Run([]string{"top", "--format", "csv", "-o", out, profile}, IO{Out: io.Discard, Err: &stderr}); code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	}
	isReport := func(t *testing.T, path string) {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil || !strings.HasPrefix(string(data), "name,flat,") {
			t.Fatalf("%s: %q, %v", path, data, err)
		}
	}
	mode := func(t *testing.T, path string) os.FileMode {
		t.Helper()
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode()
	}

	t.Run("device", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("making a device node needs root")
		}
		null := filepath.Join(dir, "null")
		// The null device: major 1, minor 3.
		if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			t.Skipf("mknod: %v (a container may forbid device nodes)", err)
		}
		run(t, null)
		if m := mode(t, null); m&os.ModeCharDevice == 0 {
			t.Errorf("the device became %v", m)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("files left beside the device: %v", entries)
		}
	})

	t.Run("FIFO", func(t *testing.T) {
		fifo := filepath.Join(dir, "fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		got := make(chan []byte, 1)
		go func() {
			f, err := os.Open(fifo)
			if err != nil {
				got <- nil
				return
			}
			defer f.Close()
			data, _ := io.ReadAll(f)
			got <- data
		}()
		run(t, fifo)
		if data := <-got; !strings.HasPrefix(string(data), "name,flat,") {
			t.Errorf("read from the FIFO: %q", data)
		}
		if m := mode(t, fifo); m&os.ModeNamedPipe == 0 {
			t.Errorf("the FIFO became %v", m)
		}
	})

	t.Run("symlink to a file with mode 0600", func(t *testing.T) {
		sub := filepath.Join(dir, "sub")
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		real := filepath.Join(sub, "real.csv")
		if err := os.WriteFile(real, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, "link.csv")
		if err := os.Symlink("sub/real.csv", link); err != nil {
			t.Fatal(err)
		}
		run(t, link)
		if m := mode(t, link); m&os.ModeSymlink == 0 {
			t.Errorf("the link became %v", m)
		}
		isReport(t, real)
		if m := mode(t, real); m.Perm() != 0o600 {
			t.Errorf("the file's mode became %v", m)
		}
	})

	t.Run("dangling symlink", func(t *testing.T) {
		link := filepath.Join(dir, "dangling.csv")
		if err := os.Symlink("made-by-profq.csv", link); err != nil {
			t.Fatal(err)
		}
		run(t, link)
		if m := mode(t, link); m&os.ModeSymlink == 0 {
			t.Errorf("the link became %v", m)
		}
		isReport(t, filepath.Join(dir, "made-by-profq.csv"))
	})

	t.Run("new file honours the umask", func(t *testing.T) {
		old := syscall.Umask(0o027)
		defer syscall.Umask(old)
		path := filepath.Join(dir, "new.csv")
		run(t, path)
		isReport(t, path)
		if m := mode(t, path); m.Perm() != 0o640 {
			t.Errorf("mode %v with umask 027, want -rw-r-----", m)
		}
	})

	t.Run("an input as the output", func(t *testing.T) {
		in := filepath.Join(dir, "in.pb.gz")
		data, err := os.ReadFile(profile)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(in, data, 0o644); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, "in-link.pb.gz")
		if err := os.Symlink(in, link); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"top", "-o", in, in},
			{"top", "-o", link, in},
			{"diff", "--report", "json=" + in, in, profile},
			{"top", "--diff-base", in, "-o", in, profile},
			{"merge", "-o", in, profile, in},
		} {
			var stderr bytes.Buffer
			if code := Run(args, IO{Out: io.Discard, Err: &stderr}); code != ExitUsage || !strings.Contains(stderr.String(), "is an input and the output") {
				t.Errorf("%v: exit %d, %s", args, code, stderr.String())
			}
			if now, _ := os.ReadFile(in); !bytes.Equal(now, data) {
				t.Fatalf("%v changed the input", args)
			}
		}
	})
}
