package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"syscall"

	"github.com/google/pprof/third_party/svgpan"
)

// This file draws profq graph's DOT as an image through Graphviz's dot, as pprof's -svg,
// -png, -pdf, -gif, -ps and -web do, and opens an SVG in a browser.

// imageFormats are the formats profq graph draws through dot: pprof's image reports.
var imageFormats = []string{"svg", "png", "pdf", "gif", "ps"}

// binaryImage says whether an image in format is binary data, which is not written to a
// terminal (SVG is text).
func binaryImage(format string) bool { return format != "svg" }

// drawDOT runs dot -T<format> on the DOT text dot, as pprof does, and returns the image. An
// SVG is made to pan and zoom in a browser, as pprof's (massageSVG). flag is the option that
// asked for it, for the message without Graphviz.
func drawDOT(format, flag string, dot []byte) ([]byte, error) {
	path, err := exec.LookPath("dot")
	if err != nil {
		return nil, fmt.Errorf("%s draws the graph with Graphviz's dot, which is not on PATH: install Graphviz (Debian/Ubuntu: apt-get install graphviz; Fedora: dnf install graphviz; macOS: brew install graphviz), or write DOT without %s", flag, flag)
	}
	cmd := exec.Command(path, "-T"+format)
	var out, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(dot), &out, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		if msg != "" {
			msg = ": " + msg
		}
		return nil, fmt.Errorf("drawing the graph with %s -T%s: %v%s", path, format, err, msg)
	}
	if format == "svg" {
		return []byte(massageSVG(out.String())), nil
	}
	return out.Bytes(), nil
}

// The parts of dot's SVG that massageSVG changes.
var (
	svgViewBox = regexp.MustCompile(`<svg\s*width="[^"]+"\s*height="[^"]+"\s*viewBox="[^"]+"`)
	svgGraphID = regexp.MustCompile(`<g id="graph\d"`)
	svgClose   = regexp.MustCompile(`</svg>`)
)

// massageSVG is pprof's (internal/driver/svg.go), so that profq's SVG is pprof's: it repairs
// the ampersands dot leaves unquoted (which make the SVG unparsable), makes the picture fill
// the window instead of its fixed size, and adds svgpan's script (the copy pprof embeds), in
// a viewport group, so that the graph pans and zooms in a browser.
func massageSVG(svg string) string {
	svg = strings.ReplaceAll(svg, "&;", "&amp;;")
	if loc := svgViewBox.FindStringIndex(svg); loc != nil {
		svg = svg[:loc[0]] + `<svg width="100%" height="100%"` + svg[loc[1]:]
	}
	if loc := svgGraphID.FindStringIndex(svg); loc != nil {
		svg = svg[:loc[0]] +
			`<script type="text/ecmascript"><![CDATA[` + svgpan.JSSource + `]]></script>` +
			`<g id="viewport" transform="scale(0.5,0.5) translate(0,0)">` +
			svg[loc[0]:]
	}
	if loc := svgClose.FindStringIndex(svg); loc != nil {
		svg = svg[:loc[0]] + `</g>` + svg[loc[0]:]
	}
	return svg
}

// writeImage writes an image to path, atomically, or to standard output for "" and "-". A
// reader that closed standard output early has what it wanted, as for every report.
func writeImage(stdio IO, path string, data []byte) error {
	if path != "" && path != "-" {
		return writeFileAtomic(stdio, path, data)
	}
	if _, err := stdio.Out.Write(data); err != nil {
		if errors.Is(err, syscall.EPIPE) {
			return nil
		}
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}

// openInBrowser writes the SVG svg to a new file in the temporary directory and opens it
// with $BROWSER when it is set, else the system's opener (xdg-open, open); the file stays,
// for the browser to read after profq exits. Which file it is goes to stderr, with what to
// do when no browser could be opened.
func openInBrowser(stdio IO, svg []byte) error {
	f, err := os.CreateTemp("", "profq-graph-*.svg")
	if err != nil {
		return fmt.Errorf("writing the graph for the browser: %w", err)
	}
	_, err = f.Write(svg)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", f.Name(), err)
	}
	viewer, err := startViewer(browserCommand(), f.Name())
	if err != nil {
		fmt.Fprintf(stdio.Err, "profq: the graph is in %s; no browser could be opened (%v): open it in one, or set $BROWSER\n", f.Name(), err)
		return nil
	}
	fmt.Fprintf(stdio.Err, "profq: the graph is in %s, opened with %s\n", f.Name(), viewer)
	return nil
}

// browserCommand is the command line that opens a file in a browser: $BROWSER when it is set
// (a command and its arguments, as pprof reads it), else the system's opener.
func browserCommand() []string {
	if b := strings.Fields(os.Getenv("BROWSER")); len(b) > 0 {
		return b
	}
	switch runtime.GOOS {
	case "darwin":
		return []string{"open"}
	case "windows":
		return []string{"cmd", "/c", "start", ""}
	}
	return []string{"xdg-open"}
}

// startViewer runs the command line viewer on file and waits for it (an opener returns at
// once), returning the program that opened it.
func startViewer(viewer []string, file string) (string, error) {
	path, err := exec.LookPath(viewer[0])
	if err != nil {
		return "", err
	}
	cmd := exec.Command(path, append(viewer[1:], file)...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %v", viewer[0], err)
	}
	return viewer[0], nil
}
