package serve

import (
	_ "embed"

	"github.com/profq/profq/internal/render"
)

// The pages' style and script, and the flame graph's (render's, the same as in profq
// flame's HTML), all served by profq: a page loads nothing from elsewhere.
var (
	//go:embed assets/serve.css
	serveCSS string
	//go:embed assets/serve.js
	serveJS string
)

type asset struct{ contentType, body string }

// assets are the files the pages load, by path.
var assets = map[string]asset{
	"/assets/serve.css": {"text/css; charset=utf-8", serveCSS},
	"/assets/serve.js":  {"text/javascript; charset=utf-8", serveJS},
	"/assets/flame.css": {"text/css; charset=utf-8", render.FlameStyleSheet()},
	"/assets/flame.js":  {"text/javascript; charset=utf-8", render.FlameScript()},
}
