package chromium

import (
	"bytes"
	"context"
	"image/png"
	"net/url"
	"testing"
	"time"
)

// TestPage drives a small page through every Page method: the click and the key presses
// reach the page's handlers as trusted events, and the screenshot is the viewport.
func TestPage(t *testing.T) {
	b := ForTest(t)
	// A deadline against a hung browser only; nothing here is timed.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if v, err := b.Version(ctx); err != nil || v == "" {
		t.Fatalf("Version: %q, %v", v, err)
	}
	p, err := b.NewPage(ctx, 400, 300)
	if err != nil {
		t.Fatal(err)
	}
	const page = `<!DOCTYPE html><body style="margin:0;background:#fff">
<button id="b" style="position:absolute;left:10px;top:20px;width:100px;height:40px;background:#f00;border:0">go</button>
<input id="i" style="position:absolute;left:10px;top:100px">
<script>
window.log = [];
document.getElementById("b").addEventListener("click", e => log.push("click " + e.isTrusted + " " + e.clientX + "," + e.clientY));
document.getElementById("i").addEventListener("input", e => log.push("input " + e.isTrusted + " " + e.target.value));
</script>`
	if err := p.Navigate(ctx, "data:text/html,"+url.PathEscape(page)); err != nil {
		t.Fatal(err)
	}
	if err := p.Click(ctx, 60, 40); err != nil {
		t.Fatal(err)
	}
	if err := p.Click(ctx, 20, 110); err != nil { // focuses the input
		t.Fatal(err)
	}
	if err := p.Type(ctx, "a.b"); err != nil {
		t.Fatal(err)
	}
	var log []string
	if err := p.Eval(ctx, "window.log", &log); err != nil {
		t.Fatal(err)
	}
	want := []string{"click true 60,40", "input true a", "input true a.", "input true a.b"}
	if len(log) != len(want) {
		t.Fatalf("events: %q, want %q", log, want)
	}
	for i := range want {
		if log[i] != want[i] {
			t.Errorf("event %d: %q, want %q", i, log[i], want[i])
		}
	}
	if err := p.Eval(ctx, "undefinedName.x", nil); err == nil {
		t.Error("Eval of a throwing expression: no error")
	}
	data, err := p.Screenshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if sz := img.Bounds().Size(); sz.X != 400 || sz.Y != 300 {
		t.Errorf("screenshot is %v, want 400x300", sz)
	}
	// The button's red, and the white page around it.
	if r, g, bl, _ := img.At(60, 30).RGBA(); r>>8 != 255 || g>>8 != 0 || bl>>8 != 0 {
		t.Errorf("pixel (60,30) is %d,%d,%d, want the button's red", r>>8, g>>8, bl>>8)
	}
	if r, g, bl, _ := img.At(300, 250).RGBA(); r>>8 != 255 || g>>8 != 255 || bl>>8 != 255 {
		t.Errorf("pixel (300,250) is %d,%d,%d, want white", r>>8, g>>8, bl>>8)
	}
	if err := p.Close(ctx); err != nil {
		t.Error(err)
	}
}
