// Package chromium drives a headless Chromium through the DevTools protocol, for profq's
// browser tests and benchmarks of the pages it writes.
//
// The protocol runs over a pipe (--remote-debugging-pipe): commands and replies are JSON
// messages separated by NUL bytes on the browser's file descriptors 3 and 4, so no port,
// no WebSocket and no client library are needed. The few commands the tests send are
// wrapped as Page methods; Call sends any other.
//
// Test support: imported by tests only, which is why it may import "testing" (ForTest).
package chromium

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Candidates are the executable names Find looks up on PATH, in order.
var Candidates = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Find returns the path of a Chromium executable: $PROFQ_CHROMIUM when set, else the first
// of Candidates found on PATH.
func Find() (string, error) {
	if p := os.Getenv("PROFQ_CHROMIUM"); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("PROFQ_CHROMIUM: %w", err)
		}
		return p, nil
	}
	for _, name := range Candidates {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Chromium found on PATH (looked for %s; set PROFQ_CHROMIUM)", strings.Join(Candidates, ", "))
}

// Browser is a running headless Chromium.
type Browser struct {
	cmd    *exec.Cmd
	dir    string // the profile directory, removed by Close
	stderr *os.File
	in     io.WriteCloser // the browser reads commands from it
	out    io.ReadCloser  // the browser writes replies and events to it

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan message
	waiters map[waitKey][]chan json.RawMessage
	closed  chan struct{} // closed when the reader stops
	err     error         // why it stopped
}

type waitKey struct{ session, method string }

// message is any message from the browser: a reply (ID set) or an event (Method set).
type message struct {
	ID        int64           `json:"id"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	Result    json.RawMessage `json:"result"`
	Error     *protocolError  `json:"error"`
	SessionID string          `json:"sessionId"`
}

type protocolError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data"`
}

func (e *protocolError) Error() string {
	s := fmt.Sprintf("%s (%d)", e.Message, e.Code)
	if e.Data != "" {
		s += ": " + e.Data
	}
	return s
}

// Start starts the Chromium at path, headless, with a new empty profile, no network
// activity of its own and a device scale factor of 1, so that CSS pixels are screenshot
// pixels.
func Start(path string) (*Browser, error) {
	dir, err := os.MkdirTemp("", "profq-chromium-")
	if err != nil {
		return nil, fmt.Errorf("starting chromium: %w", err)
	}
	b := &Browser{dir: dir, pending: map[int64]chan message{}, waiters: map[waitKey][]chan json.RawMessage{}, closed: make(chan struct{})}
	fail := func(err error) (*Browser, error) {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	// The browser's fd 3 is the read end of the command pipe, fd 4 the write end of the
	// reply pipe.
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	// A file, not a buffer: the browser's helper processes inherit stderr, and a pipe
	// they keep open would make Wait wait for them.
	b.stderr, err = os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		return fail(err)
	}
	b.cmd = exec.Command(path,
		"--headless",
		"--remote-debugging-pipe",
		"--user-data-dir="+filepath.Join(dir, "profile"),
		// Tests run as root in CI containers, where the sandbox cannot start.
		"--no-sandbox",
		"--disable-gpu",
		"--disable-dev-shm-usage",
		"--no-first-run",
		"--no-default-browser-check",
		// Without these, the browser tries the network at start and on the way.
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--disable-extensions",
		"--disable-default-apps",
		"--disable-breakpad",
		"--mute-audio",
		"--hide-scrollbars",
		"--force-device-scale-factor=1",
		"--window-size=1200,800",
		"about:blank",
	)
	b.cmd.Stdout, b.cmd.Stderr = b.stderr, b.stderr
	b.cmd.ExtraFiles = []*os.File{cmdR, repW}
	if err := b.cmd.Start(); err != nil {
		b.stderr.Close()
		cmdR.Close()
		cmdW.Close()
		repR.Close()
		repW.Close()
		return fail(err)
	}
	cmdR.Close()
	repW.Close()
	b.in, b.out = cmdW, repR
	go b.read()
	return b, nil
}

// read dispatches the browser's messages until the pipe closes.
func (b *Browser) read() {
	r := bufio.NewReaderSize(b.out, 1<<20)
	var err error
	for {
		var line []byte
		line, err = r.ReadBytes(0)
		if err != nil {
			break
		}
		var m message
		if err = json.Unmarshal(line[:len(line)-1], &m); err != nil {
			err = fmt.Errorf("decoding a message: %w", err)
			break
		}
		b.mu.Lock()
		if m.Method == "" {
			if ch, ok := b.pending[m.ID]; ok {
				delete(b.pending, m.ID)
				ch <- m
			}
		} else {
			k := waitKey{m.SessionID, m.Method}
			for _, ch := range b.waiters[k] {
				ch <- m.Params
			}
			delete(b.waiters, k)
		}
		b.mu.Unlock()
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("the browser closed the DevTools pipe")
	}
	b.mu.Lock()
	b.err = err
	b.mu.Unlock()
	close(b.closed)
}

// call sends one command (to a page's session when session is set) and decodes its
// result into result unless result is nil.
func (b *Browser) call(ctx context.Context, session, method string, params, result any) error {
	if params == nil {
		params = struct{}{}
	}
	ch := make(chan message, 1)
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	b.pending[id] = ch
	b.mu.Unlock()
	req := struct {
		ID        int64  `json:"id"`
		Method    string `json:"method"`
		Params    any    `json:"params"`
		SessionID string `json:"sessionId,omitempty"`
	}{id, method, params, session}
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if _, err := b.in.Write(append(data, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("%s: %w", method, m.Error)
		}
		if result != nil {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("%s: decoding the result: %w", method, err)
			}
		}
		return nil
	case <-b.closed:
		return fmt.Errorf("%s: %w\n%s", method, b.err, b.Log())
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// expect returns a channel that receives the parameters of the next event named method
// in session. Call it before the command that causes the event.
func (b *Browser) expect(session, method string) <-chan json.RawMessage {
	ch := make(chan json.RawMessage, 1)
	b.mu.Lock()
	k := waitKey{session, method}
	b.waiters[k] = append(b.waiters[k], ch)
	b.mu.Unlock()
	return ch
}

// Call sends a browser-level command (Browser.*, Target.*).
func (b *Browser) Call(ctx context.Context, method string, params, result any) error {
	return b.call(ctx, "", method, params, result)
}

// Version is the browser's product and version, e.g. "Chrome/148.0.7778.167".
func (b *Browser) Version(ctx context.Context) (string, error) {
	var v struct {
		Product string `json:"product"`
	}
	err := b.Call(ctx, "Browser.getVersion", nil, &v)
	return v.Product, err
}

// Log is what the browser has written to its standard error so far.
func (b *Browser) Log() string {
	data, _ := os.ReadFile(b.stderr.Name())
	return string(data)
}

// Close asks the browser to quit, waits for it (killing it if it has not quit after ten
// seconds) and removes its profile directory.
func (b *Browser) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = b.Call(ctx, "Browser.close", nil, nil)
	exited := make(chan error, 1)
	go func() { exited <- b.cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-ctx.Done():
		_ = b.cmd.Process.Kill()
		err = <-exited
	}
	b.in.Close()
	<-b.closed
	b.out.Close()
	b.stderr.Close()
	if rmErr := os.RemoveAll(b.dir); err == nil {
		err = rmErr
	}
	return err
}

// Page is one browser tab, attached through its own DevTools session.
type Page struct {
	b       *Browser
	target  string
	session string
}

// NewPage opens a blank tab of width by height CSS pixels.
func (b *Browser) NewPage(ctx context.Context, width, height int) (*Page, error) {
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.Call(ctx, "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return nil, err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		return nil, err
	}
	p := &Page{b: b, target: target.TargetID, session: attached.SessionID}
	if err := p.Call(ctx, "Page.enable", nil, nil); err != nil {
		return nil, err
	}
	// A tab in the background is not painted, and records no paint timing.
	if err := p.Call(ctx, "Page.bringToFront", nil, nil); err != nil {
		return nil, err
	}
	if err := p.SetViewport(ctx, width, height); err != nil {
		return nil, err
	}
	return p, nil
}

// Call sends a command to the page's session.
func (p *Page) Call(ctx context.Context, method string, params, result any) error {
	return p.b.call(ctx, p.session, method, params, result)
}

// Close closes the tab.
func (p *Page) Close(ctx context.Context) error {
	return p.b.Call(ctx, "Target.closeTarget", map[string]any{"targetId": p.target}, nil)
}

// SetViewport sets the page's size in CSS pixels, at a device scale factor of 1.
func (p *Page) SetViewport(ctx context.Context, width, height int) error {
	return p.Call(ctx, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false,
	}, nil)
}

// Navigate loads url and returns once the page's load event has fired.
func (p *Page) Navigate(ctx context.Context, url string) error {
	loaded := p.b.expect(p.session, "Page.loadEventFired")
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := p.Call(ctx, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return err
	}
	if nav.ErrorText != "" {
		return fmt.Errorf("navigating to %s: %s", url, nav.ErrorText)
	}
	select {
	case <-loaded:
		return nil
	case <-p.b.closed:
		return fmt.Errorf("navigating to %s: %w", url, p.b.err)
	case <-ctx.Done():
		return fmt.Errorf("navigating to %s: waiting for the load event: %w", url, ctx.Err())
	}
}

// Eval evaluates the JavaScript expression expr in the page, awaiting it when it is a
// promise, and decodes its value (as JSON) into result unless result is nil. An exception
// is an error.
func (p *Page) Eval(ctx context.Context, expr string, result any) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err := p.Call(ctx, "Runtime.evaluate", map[string]any{
		"expression": expr, "returnByValue": true, "awaitPromise": true,
	}, &r)
	if err != nil {
		return err
	}
	if e := r.ExceptionDetails; e != nil {
		return fmt.Errorf("evaluating %q: %s %s", expr, e.Text, e.Exception.Description)
	}
	if result != nil {
		if len(r.Result.Value) == 0 {
			return fmt.Errorf("evaluating %q: no value", expr)
		}
		if err := json.Unmarshal(r.Result.Value, result); err != nil {
			return fmt.Errorf("evaluating %q: %w", expr, err)
		}
	}
	return nil
}

// Click clicks the left mouse button at (x, y), in CSS pixels from the viewport's top
// left corner, as a user does: the pointer moves there, then the button goes down and up.
// The page receives trusted mouse events.
func (p *Page) Click(ctx context.Context, x, y float64) error {
	for _, ev := range []map[string]any{
		{"type": "mouseMoved", "x": x, "y": y},
		{"type": "mousePressed", "x": x, "y": y, "button": "left", "buttons": 1, "clickCount": 1},
		{"type": "mouseReleased", "x": x, "y": y, "button": "left", "buttons": 0, "clickCount": 1},
	} {
		if err := p.Call(ctx, "Input.dispatchMouseEvent", ev, nil); err != nil {
			return err
		}
	}
	return nil
}

// Type types text into the focused element, one key press per character, as a keyboard
// does: each character fires keydown, beforeinput, input and keyup.
func (p *Page) Type(ctx context.Context, text string) error {
	for _, r := range text {
		s := string(r)
		for _, ev := range []map[string]any{
			{"type": "keyDown", "text": s, "key": s, "unmodifiedText": s},
			{"type": "keyUp", "key": s},
		} {
			if err := p.Call(ctx, "Input.dispatchKeyEvent", ev, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// Screenshot captures the viewport as a PNG.
func (p *Page) Screenshot(ctx context.Context) ([]byte, error) {
	var shot struct {
		Data string `json:"data"`
	}
	if err := p.Call(ctx, "Page.captureScreenshot", map[string]any{"format": "png"}, &shot); err != nil {
		return nil, err
	}
	data, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		return nil, fmt.Errorf("decoding the screenshot: %w", err)
	}
	return data, nil
}

// RequireEnv is the environment variable that makes a missing Chromium a test failure
// instead of a skip: CI sets PROFQ_BROWSER_TEST=1, having installed Chromium.
const RequireEnv = "PROFQ_BROWSER_TEST"

// ForTest starts a Chromium for tb and closes it when tb ends. Without a Chromium it skips
// tb, or fails it when $PROFQ_BROWSER_TEST is 1 or $PROFQ_CHROMIUM names no executable.
func ForTest(tb testing.TB) *Browser {
	tb.Helper()
	path, err := Find()
	if err != nil {
		if os.Getenv(RequireEnv) == "1" || os.Getenv("PROFQ_CHROMIUM") != "" {
			tb.Fatalf("%s=1 but %v", RequireEnv, err)
		}
		tb.Skipf("browser test: %v (install Debian's chromium package; %s=1 makes this a failure)", err, RequireEnv)
	}
	b, err := Start(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := b.Close(); err != nil {
			tb.Logf("closing chromium: %v", err)
		}
	})
	return b
}
