package bench

import (
	"compress/gzip"
	"io"
	"os"
)

// gzipFile compresses path into path.gz, removes path, and returns the new name: callgrind
// writes text several times the size of a profile.
func gzipFile(path string) (string, error) {
	in, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.Create(path + ".gz")
	if err != nil {
		return "", err
	}
	z := gzip.NewWriter(out)
	if _, err := io.Copy(z, in); err != nil {
		out.Close()
		return "", err
	}
	if err := z.Close(); err != nil {
		out.Close()
		return "", err
	}
	if err := out.Close(); err != nil {
		return "", err
	}
	return path + ".gz", os.Remove(path)
}
