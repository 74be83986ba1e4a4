// Package logpipe is one of the workloads of profq bench's evaluation (scripts/gate-eval.sh):
// an access-log pipeline that parses lines with a regular expression, aggregates the requests
// per route in maps, summarizes each route's latency histogram, sorts the routes and writes
// the report compressed with DEFLATE.
//
// Its target function is summarize: the evaluation's variants (tools/benchapps) make it do
// more work or allocate more, as a code change would.
package logpipe

import (
	"bytes"
	"compress/flate"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// lineRE matches a line of the combined log format with the request's duration in
// milliseconds appended: client, time, method, path (its query apart), status, size, duration.
var lineRE = regexp.MustCompile(`^(\S+) \S+ \S+ \[([^\]]+)\] "([A-Z]+) ([^ ?"]+)(?:\?[^ "]*)? HTTP/1\.[01]" (\d{3}) (\d+|-) (\d+)$`)

// histBuckets is the number of buckets of a route's latency histogram, one per millisecond;
// the last one holds every longer request too.
const histBuckets = 1000

// entry is one parsed log line.
type entry struct {
	client, method, path string
	status               int
	size                 int64
	millis               int
}

// parse reads one log line.
func parse(line string) (entry, bool) {
	m := lineRE.FindStringSubmatchIndex(line)
	if m == nil {
		return entry{}, false
	}
	e := entry{
		client: line[m[2]:m[3]],
		method: line[m[6]:m[7]],
		path:   line[m[8]:m[9]],
	}
	var err error
	if e.status, err = strconv.Atoi(line[m[10]:m[11]]); err != nil {
		return entry{}, false
	}
	if size := line[m[12]:m[13]]; size != "-" {
		if e.size, err = strconv.ParseInt(size, 10, 64); err != nil {
			return entry{}, false
		}
	}
	if e.millis, err = strconv.Atoi(line[m[14]:m[15]]); err != nil {
		return entry{}, false
	}
	return e, true
}

// normalize turns a path into its route: every segment made of digits becomes ":id", so that
// /users/42/orders and /users/7/orders are counted together.
func normalize(path string) string {
	numeric := false
	for rest := path; rest != ""; {
		seg, next, _ := strings.Cut(rest, "/")
		if isNumber(seg) {
			numeric = true
			break
		}
		rest = next
	}
	if !numeric {
		return path
	}
	var b strings.Builder
	b.Grow(len(path) + 8)
	for rest, first := path, true; ; first = false {
		seg, next, more := strings.Cut(rest, "/")
		if !first {
			b.WriteByte('/')
		}
		if isNumber(seg) {
			b.WriteString(":id")
		} else {
			b.WriteString(seg)
		}
		if !more {
			break
		}
		rest = next
	}
	return b.String()
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// routeKey identifies a route's statistics.
type routeKey struct {
	method, route string
}

// routeStat aggregates the requests of one route.
type routeStat struct {
	routeKey
	count   int
	errors  int
	bytes   int64
	clients map[string]struct{}
	hist    []uint32
}

// aggregator counts requests per route, and keeps the routes in the order first seen, so
// that nothing depends on the order of a map.
type aggregator struct {
	index map[string]map[string]*routeStat // method, then route
	order []*routeStat
	bad   int
}

func newAggregator() *aggregator {
	return &aggregator{index: make(map[string]map[string]*routeStat)}
}

func (a *aggregator) add(e entry) {
	route := normalize(e.path)
	routes := a.index[e.method]
	if routes == nil {
		routes = make(map[string]*routeStat)
		a.index[e.method] = routes
	}
	st := routes[route]
	if st == nil {
		st = &routeStat{
			routeKey: routeKey{e.method, route},
			clients:  make(map[string]struct{}),
			hist:     make([]uint32, histBuckets),
		}
		routes[route] = st
		a.order = append(a.order, st)
	}
	st.count++
	st.bytes += e.size
	if e.status >= 500 {
		st.errors++
	}
	st.clients[e.client] = struct{}{}
	b := e.millis
	if b >= len(st.hist) {
		b = len(st.hist) - 1
	}
	st.hist[b]++
}

// row is a route's line of the report.
type row struct {
	routeKey
	count int
	cols  []string
}

// cellWidth is the least width of a cell of the report: cells are padded with spaces to it, so
// that the report's columns line up. It also keeps every cell out of the tiny allocator (under
// 16 bytes), whose objects a heap profile does not count one by one: summarize's allocations
// are counted exactly.
const cellWidth = 16

// summarize makes a route's row of the report: its requests, the mean, median and 99th
// percentile of its latency, read from the histogram in one pass, each cell formatted and
// padded.
func summarize(st *routeStat) row {
	n := uint64(st.count)
	var seen, total uint64
	p50, p99 := -1, -1
	for ms := 0; ms < len(st.hist); ms++ {
		c := uint64(st.hist[ms])
		seen += c
		total += c * uint64(ms)
		if p50 < 0 && 2*seen >= n {
			p50 = ms
		}
		if p99 < 0 && 100*seen >= 99*n {
			p99 = ms
		}
	}
	mean := int64(0)
	if n > 0 {
		mean = int64(total / n)
	}
	cells := [...]struct {
		value int64
		unit  string
	}{
		{int64(st.count), " requests"},
		{mean, " ms mean"},
		{int64(p50), " ms p50"},
		{int64(p99), " ms p99"},
	}
	cols := make([]string, 0, len(cells))
	var buf [64]byte
	for _, c := range cells {
		b := strconv.AppendInt(buf[:0], c.value, 10)
		b = append(b, c.unit...)
		for len(b) < cellWidth {
			b = append(b, ' ')
		}
		cols = append(cols, string(b))
	}
	return row{routeKey: st.routeKey, count: st.count, cols: cols}
}

// order returns the indices of rows in the report's order: the busiest routes first, and
// routes as busy in the order of their names. Sorting indices moves no pointers, so its work
// is the same whatever the garbage collector is doing.
func order(rows []row) []int {
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(i, j int) int {
		a, b := &rows[i], &rows[j]
		if a.count != b.count {
			return b.count - a.count
		}
		if c := strings.Compare(a.route, b.route); c != 0 {
			return c
		}
		return strings.Compare(a.method, b.method)
	})
	return idx
}

// Report is what one run of the pipeline produces.
type Report struct {
	Lines, Bad, Routes int
	Compressed         []byte
}

// Pipeline runs the pipeline; it keeps its compressor from one run to the next, as a service
// would.
type Pipeline struct {
	zw   *flate.Writer
	out  bytes.Buffer
	line []byte
}

// Process runs the pipeline over lines: parse, aggregate, summarize, sort, compress. The
// report's compressed bytes are the Pipeline's until the next run.
func (p *Pipeline) Process(lines []string) (Report, error) {
	agg := newAggregator()
	for _, line := range lines {
		e, ok := parse(line)
		if !ok {
			agg.bad++
			continue
		}
		agg.add(e)
	}
	rows := make([]row, len(agg.order))
	for i, st := range agg.order {
		rows[i] = summarize(st)
	}
	z, err := p.compress(rows, order(rows))
	if err != nil {
		return Report{}, err
	}
	return Report{Lines: len(lines), Bad: agg.bad, Routes: len(rows), Compressed: z}, nil
}

// compress writes the report, a line per row in the order given, with tab-separated columns,
// with DEFLATE.
func (p *Pipeline) compress(rows []row, order []int) ([]byte, error) {
	p.out.Reset()
	if p.zw == nil {
		zw, err := flate.NewWriter(&p.out, flate.BestSpeed)
		if err != nil {
			return nil, err
		}
		p.zw = zw
	} else {
		p.zw.Reset(&p.out)
	}
	zw := p.zw
	if p.line == nil {
		// Room for any line: no allocation while the report is written, and none small
		// enough for the tiny allocator, whose objects are not counted one by one.
		p.line = make([]byte, 0, 512)
	}
	line := p.line
	for _, i := range order {
		r := &rows[i]
		line = append(line[:0], r.method...)
		line = append(line, '\t')
		line = append(line, r.route...)
		line = append(line, '\t')
		line = append(line, strings.Join(r.cols, "\t")...)
		line = append(line, '\n')
		if _, err := zw.Write(line); err != nil {
			return nil, err
		}
	}
	p.line = line
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return p.out.Bytes(), nil
}

// Lines returns n log lines, the same for the same n: a few dozen routes, many of them with
// numeric identifiers, from a few hundred clients, with skewed latencies.
func Lines(n int) []string {
	templates := []string{
		"/", "/index.html", "/static/app.js", "/static/app.css", "/favicon.ico", "/health",
		"/login", "/logout", "/api/search", "/api/cart", "/api/cart/items/%d",
		"/api/users/%d", "/api/users/%d/orders", "/api/users/%d/settings",
		"/api/users/%d/orders/%d", "/api/orders/%d", "/api/orders/%d/items/%d",
		"/api/products/%d", "/api/products/%d/reviews", "/api/products/%d/images/%d",
		"/api/categories/%d/products", "/api/stores/%d/stock/%d", "/admin/reports/%d",
		"/blog/%d", "/blog/%d/comments", "/docs/getting-started", "/docs/api/v2/%d",
	}
	methods := []string{"GET", "GET", "GET", "GET", "POST", "POST", "PUT", "DELETE"}
	statuses := []int{200, 200, 200, 200, 200, 200, 201, 204, 301, 304, 400, 404, 404, 500, 503}
	s := lcg(1)
	out := make([]string, n)
	var b strings.Builder
	for i := range out {
		b.Reset()
		r := s.next()
		if r%5 == 0 {
			b.WriteString("2001:db8::")
			b.WriteString(strconv.FormatUint(s.next()%4096, 16))
		} else {
			b.WriteString("10.")
			b.WriteString(strconv.FormatUint(s.next()%4, 10))
			b.WriteByte('.')
			b.WriteString(strconv.FormatUint(s.next()%16, 10))
			b.WriteByte('.')
			b.WriteString(strconv.FormatUint(s.next()%256, 10))
		}
		b.WriteString(" - - [12/Mar/2026:10:")
		sec := i * 3600 / max(n, 1)
		b.WriteString(strconv.Itoa(10 + sec/60%50))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(10 + sec%50))
		b.WriteString(" +0000] \"")
		t := int(s.next() % uint64(len(templates)))
		b.WriteString(methods[(int(s.next())+t)%len(methods)])
		b.WriteByte(' ')
		for j, part := range strings.Split(templates[t], "%d") {
			if j > 0 {
				b.WriteString(strconv.FormatUint(s.next()%5000, 10))
			}
			b.WriteString(part)
		}
		if s.next()%4 == 0 {
			b.WriteString("?page=")
			b.WriteString(strconv.FormatUint(s.next()%20, 10))
		}
		b.WriteString(" HTTP/1.1\" ")
		b.WriteString(strconv.Itoa(statuses[s.next()%uint64(len(statuses))]))
		b.WriteByte(' ')
		if s.next()%10 == 0 {
			b.WriteByte('-')
		} else {
			b.WriteString(strconv.FormatUint(200+s.next()%60000, 10))
		}
		b.WriteByte(' ')
		// Latencies: a route's base, then a long tail, all below the histogram's last bucket.
		ms := 2 + t*3 + int(s.next()%40)
		if s.next()%8 == 0 {
			ms += int(s.next() % 600)
		}
		b.WriteString(strconv.Itoa(ms))
		out[i] = b.String()
	}
	return out
}

// lcg is a linear congruential generator: the workload is the same in every run.
type lcg uint64

func (s *lcg) next() uint64 {
	*s = *s*6364136223846793005 + 1442695040888963407
	return uint64(*s) >> 33
}
