package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/tools/benchapps"
)

// capture is one variant's measurements: each callgrind capture's self instructions and each
// heap profile's allocated objects, per function of the app's module.
type capture struct {
	instr   []map[string]int64
	totals  []int64
	seconds []float64
	allocs  []map[string]int64
}

func calibrate(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	dir := fs.String("dir", ".bench/bencheval/calibrate", "the captures: DIR/APP/VARIANT/callgrind.N.out and mem.N.pb.gz")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p := &printer{w: stdout}
	found := false
	for _, app := range benchapps.Apps {
		caps := map[string]*capture{}
		for _, v := range benchapps.Variants {
			c, err := loadCapture(filepath.Join(*dir, app.Name, v), app.Module)
			if err != nil {
				return fmt.Errorf("%s %s: %w", app.Name, v, err)
			}
			if c != nil {
				caps[v] = c
			}
		}
		if caps[benchapps.Base] == nil {
			continue
		}
		found = true
		writeCalibration(p, app, caps)
	}
	if p.err != nil {
		return p.err
	}
	if !found {
		return fmt.Errorf("no captures of a base in %s", *dir)
	}
	return nil
}

// loadCapture reads a variant's captures, nil if there are none.
func loadCapture(dir, module string) (*capture, error) {
	outs, err := filepath.Glob(filepath.Join(dir, "callgrind.*.out"))
	if err != nil {
		return nil, err
	}
	mems, err := filepath.Glob(filepath.Join(dir, "mem.*.pb.gz"))
	if err != nil {
		return nil, err
	}
	if len(outs) == 0 && len(mems) == 0 {
		return nil, nil
	}
	byNumber := func(a, b string) int { return compareNatural(strings.Split(a, ".")[1], strings.Split(b, ".")[1]) }
	slices.SortFunc(outs, func(a, b string) int { return byNumber(filepath.Base(a), filepath.Base(b)) })
	slices.SortFunc(mems, func(a, b string) int { return byNumber(filepath.Base(a), filepath.Base(b)) })
	c := &capture{}
	for _, out := range outs {
		text, err := exec.Command("callgrind_annotate", "--threshold=100", "--inclusive=no", "--auto=no", out).Output()
		if err != nil {
			return nil, fmt.Errorf("callgrind_annotate %s: %w", out, err)
		}
		self, total, err := parseAnnotate(bytes.NewReader(text))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", out, err)
		}
		c.instr = append(c.instr, ofModule(self, module))
		c.totals = append(c.totals, total)
		s := math.NaN()
		if data, err := os.ReadFile(strings.TrimSuffix(out, ".out") + ".seconds"); err == nil {
			if v, err := strconv.ParseFloat(strings.TrimSpace(string(data)), 64); err == nil {
				s = v
			}
		}
		c.seconds = append(c.seconds, s)
	}
	for _, mem := range mems {
		allocs, err := allocObjects(mem)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mem, err)
		}
		c.allocs = append(c.allocs, ofModule(allocs, module))
	}
	return c, nil
}

// annotateLine is a line of callgrind_annotate's function list: the count, maybe its
// percentage, then "file:function", maybe followed by " [object]".
var annotateLine = regexp.MustCompile(`^\s*([0-9,]+)\s+(?:\([^)]*\)\s+)?(.*?)(?: \[[^\]]*\])?$`)

// recursionLevel is callgrind's suffix of a function's recursion level ("walk'2").
var recursionLevel = regexp.MustCompile(`'[0-9]+$`)

// parseAnnotate reads callgrind_annotate's output (--inclusive=no) into self instructions
// per function, summed over the files it is listed under (inlined code is listed under the
// inlined function's file) and its recursion levels; and the program's total.
func parseAnnotate(r io.Reader) (map[string]int64, int64, error) {
	self := map[string]int64{}
	var total int64 = -1
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		m := annotateLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		if err != nil {
			continue
		}
		name := m[2]
		if name == "PROGRAM TOTALS" {
			total = n
			continue
		}
		_, fn, ok := strings.Cut(name, ":")
		if !ok {
			continue
		}
		self[recursionLevel.ReplaceAllString(fn, "")] += n
	}
	if err := sc.Err(); err != nil {
		return nil, 0, err
	}
	if total < 0 {
		return nil, 0, fmt.Errorf("no PROGRAM TOTALS: not callgrind_annotate's output")
	}
	return self, total, nil
}

// allocObjects reads a heap profile's allocated objects per function, each allocation
// counted at the function that made it (the innermost frame, as pprof's flat).
func allocObjects(path string) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, err
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "alloc_objects" {
			idx = i
		}
	}
	if idx < 0 {
		return nil, fmt.Errorf("no alloc_objects: not a heap profile")
	}
	out := map[string]int64{}
	for _, s := range p.Sample {
		if len(s.Location) == 0 || len(s.Location[0].Line) == 0 || s.Location[0].Line[0].Function == nil {
			continue
		}
		out[s.Location[0].Line[0].Function.Name] += s.Value[idx]
	}
	return out, nil
}

// ofModule keeps the module's functions: their names start with its path and a dot.
func ofModule(m map[string]int64, module string) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		if strings.HasPrefix(k, module+".") {
			out[k] = v
		}
	}
	return out
}

// least is each function's least count over captures: what interrupts a Go program under
// callgrind (a write barrier's slow path while the collector marks, a preemption request
// seen in a function's prologue) only adds instructions.
func least(ms []map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for i, m := range ms {
		for k, v := range m {
			if old, ok := out[k]; !ok || v < old {
				out[k] = v
			}
		}
		for k := range out {
			if _, ok := m[k]; !ok && i > 0 {
				out[k] = 0
			}
		}
	}
	return out
}

// largest returns the largest change between two counts of any function but skip, as a
// cell: the change, its percentage, the function.
func largest(base, other map[string]int64, skip string) string {
	var worst string
	var worstD int64
	n := 0
	keys := slices.Sorted(maps.Keys(base))
	for k := range other {
		if _, ok := base[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if k == skip {
			continue
		}
		d := other[k] - base[k]
		if d != 0 {
			n++
		}
		if abs(d) > abs(worstD) {
			worst, worstD = k, d
		}
	}
	if n == 0 {
		return fmt.Sprintf("none of %d changed", len(keys)-1)
	}
	return fmt.Sprintf("%d of %d changed; at most %+d (%s) `%s`", n, len(keys)-1, worstD, pct(worstD, base[worst]), worst)
}

// runToRun returns the largest difference between captures of one variant, over every
// variant, of target and of the other functions.
func runToRun(caps map[string]*capture, target string, pick func(*capture) []map[string]int64) (string, string) {
	var tD, oD int64
	var tBase, oBase int64
	var oName string
	pairs := 0
	for _, v := range benchapps.Variants {
		c := caps[v]
		if c == nil {
			continue
		}
		ms := pick(c)
		for i := 1; i < len(ms); i++ {
			pairs++
			for k, x := range ms[i] {
				d := abs(x - ms[0][k])
				switch {
				case k == target && d > tD:
					tD, tBase = d, ms[0][k]
				case k != target && d > oD:
					oD, oBase, oName = d, ms[0][k], k
				}
			}
		}
	}
	if pairs == 0 {
		return "", ""
	}
	other := "0"
	if oD > 0 {
		other = fmt.Sprintf("%d (%s, `%s`)", oD, pct(oD, oBase), oName)
	}
	return fmt.Sprintf("%d (%s)", tD, pct(tD, tBase)), other
}

func writeCalibration(p *printer, app benchapps.App, caps map[string]*capture) {
	base := caps[benchapps.Base]
	p.printf("### %s: calibration\n\n", app.Name)
	bi := least(base.instr)
	if len(base.totals) > 0 {
		total := slices.Min(base.totals)
		p.printf("Target `%s`: %.2f%% of the program's instructions (%d of %d).\n\n",
			app.Target, 100*float64(bi[app.Target])/float64(total), bi[app.Target], total)
	}
	p.printf("| variant | what changes | target's self instructions | vs base | other module functions vs base | target's allocated objects | vs base | other module functions' objects vs base | program instructions | callgrind capture, s |\n")
	p.printf("|:---|:---|---:|---:|:---|---:|---:|:---|---:|---:|\n")
	ba := first(base.allocs)
	for _, v := range benchapps.Variants {
		c := caps[v]
		if c == nil {
			continue
		}
		vi, va := least(c.instr), first(c.allocs)
		row := []string{v, orDash(app.Doc[v])}
		if len(c.instr) > 0 && len(base.instr) > 0 {
			d := vi[app.Target] - bi[app.Target]
			row = append(row, strconv.FormatInt(vi[app.Target], 10), fmt.Sprintf("%+d (%s)", d, pct(d, bi[app.Target])), largest(bi, vi, app.Target))
		} else {
			row = append(row, "—", "—", "—")
		}
		if va != nil && ba != nil {
			d := va[app.Target] - ba[app.Target]
			row = append(row, strconv.FormatInt(va[app.Target], 10), fmt.Sprintf("%+d (%s)", d, pct(d, ba[app.Target])), largest(ba, va, app.Target))
		} else {
			row = append(row, "—", "—", "—")
		}
		total := "—"
		if len(c.totals) > 0 {
			total = strconv.FormatInt(slices.Min(c.totals), 10)
		}
		row = append(row, total, secondsList(c.seconds))
		p.printf("| %s |\n", strings.Join(row, " | "))
	}
	p.printf("\nInstructions are each function's least over a variant's %d callgrind captures.", len(base.instr))
	if t, o := runToRun(caps, app.Target, func(c *capture) []map[string]int64 { return c.instr }); t != "" {
		p.printf(" Run to run (captures of one binary), instructions: the target moved by at most %s, any other module function by at most %s.", t, o)
	}
	if t, o := runToRun(caps, app.Target, func(c *capture) []map[string]int64 { return c.allocs }); t != "" {
		p.printf(" Allocated objects: the target by at most %s, any other module function by at most %s.", t, o)
	}
	p.printf("\n\n")
}

func first(ms []map[string]int64) map[string]int64 {
	if len(ms) == 0 {
		return nil
	}
	return ms[0]
}

func secondsList(xs []float64) string {
	var s []string
	for _, x := range xs {
		if !math.IsNaN(x) {
			s = append(s, fmt.Sprintf("%.1f", x))
		}
	}
	return orDash(strings.Join(s, ", "))
}

func pct(d, base int64) string {
	if base == 0 {
		if d == 0 {
			return "0%"
		}
		return "new"
	}
	return fmt.Sprintf("%+.3f%%", 100*float64(d)/float64(base))
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
