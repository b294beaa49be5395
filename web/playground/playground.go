package playground

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

//go:embed dist
var distFS embed.FS

// endpointPlaceholder is what the build leaves in index.html's forkgraph-endpoint meta tag; Handler
// swaps it for the real endpoint so the same assets work behind any mount point or proxy.
const endpointPlaceholder = "__FORKGRAPH_ENDPOINT__"

// contentTypes is explicit so responses don't depend on the host's mime tables.
var contentTypes = map[string]string{
	".html":  "text/html; charset=utf-8",
	".js":    "text/javascript; charset=utf-8",
	".mjs":   "text/javascript; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".json":  "application/json",
	".map":   "application/json",
	".svg":   "image/svg+xml",
	".png":   "image/png",
	".ico":   "image/x-icon",
	".woff2": "font/woff2",
	".woff":  "font/woff",
	".ttf":   "font/ttf",
	".txt":   "text/plain; charset=utf-8",
}

// contentSecurityPolicy keeps the browser on this origin: scripts, styles, fonts and GraphQL traffic
// (HTTP and websocket) may only come from 'self', so an accidental CDN reference fails loudly.
// React and CodeMirror set inline style attributes, hence 'unsafe-inline' for styles only.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; " +
	"style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
	"connect-src 'self' ws: wss:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

// asset is one embedded file, prepared once at start-up. Text assets are also served gzipped;
// the compressed copy is made on first request so server start-up stays fast.
type asset struct {
	body        []byte
	contentType string
	etag        string
	immutable   bool

	gzipOnce sync.Once
	gzipped  []byte // nil when compression would not pay off
}

// minGzipSize skips compressing files whose gzip framing would eat the gain.
const minGzipSize = 1024

func (a *asset) compressed() []byte {
	a.gzipOnce.Do(func() {
		if len(a.body) < minGzipSize || !compressible(a.contentType) {
			return
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // the level is valid
		if _, err := zw.Write(a.body); err != nil || zw.Close() != nil {
			return // serve uncompressed rather than fail the request
		}
		if buf.Len() < len(a.body) {
			a.gzipped = buf.Bytes()
		}
	})
	return a.gzipped
}

func compressible(contentType string) bool {
	return strings.HasPrefix(contentType, "text/") || contentType == "application/json" ||
		contentType == "image/svg+xml"
}

type handler struct {
	assets map[string]*asset // keyed by URL path, "/" for index.html
}

// Handler returns an http.Handler that serves the embedded playground at "/" (mount it on the root
// of the server's mux). endpoint is the GraphQL endpoint the browser talks to, relative ("/graphql")
// or absolute; the websocket URL is derived from it. Unknown paths get 404, methods other than GET
// and HEAD get 405.
func Handler(endpoint string) http.Handler {
	assets, err := loadAssets(endpoint)
	if err != nil {
		// The embedded files are fixed at compile time and covered by tests, so this cannot
		// happen in a binary that passed them.
		panic(fmt.Sprintf("playground: %v", err))
	}
	return &handler{assets: assets}
}

func loadAssets(endpoint string) (map[string]*asset, error) {
	root, err := fs.Sub(distFS, "dist")
	if err != nil {
		return nil, fmt.Errorf("open embedded dist: %w", err)
	}
	assets := make(map[string]*asset)
	err = fs.WalkDir(root, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(root, name)
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		urlPath := "/" + name
		if name == "index.html" {
			if !bytes.Contains(body, []byte(endpointPlaceholder)) {
				return fmt.Errorf("index.html lacks the %s placeholder", endpointPlaceholder)
			}
			body = bytes.ReplaceAll(body, []byte(endpointPlaceholder), []byte(html.EscapeString(endpoint)))
			urlPath = "/"
		}
		assets[urlPath] = newAsset(name, body)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, ok := assets["/"]; !ok {
		return nil, fmt.Errorf("embedded dist has no index.html")
	}
	return assets, nil
}

func newAsset(name string, body []byte) *asset {
	sum := sha256.Sum256(body)
	contentType, ok := contentTypes[path.Ext(name)]
	if !ok {
		contentType = "application/octet-stream"
	}
	return &asset{
		body:        body,
		contentType: contentType,
		etag:        `"` + hex.EncodeToString(sum[:16]) + `"`,
		immutable:   strings.HasPrefix(name, "assets/"),
	}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	urlPath := r.URL.Path
	if urlPath == "/index.html" {
		urlPath = "/"
	}
	a, ok := h.assets[urlPath]
	if !ok {
		http.NotFound(w, r)
		return
	}
	header := w.Header()
	header.Set("Content-Type", a.contentType)
	header.Set("X-Content-Type-Options", "nosniff")
	header.Set("ETag", a.etag)
	if a.immutable {
		header.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		header.Set("Cache-Control", "no-cache")
	}
	if urlPath == "/" {
		header.Set("Content-Security-Policy", contentSecurityPolicy)
		header.Set("Referrer-Policy", "no-referrer")
	}
	body := a.body
	if gz := a.compressed(); gz != nil {
		header.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			body = gz
			header.Set("Content-Encoding", "gzip")
			// A different representation needs its own validator.
			header.Set("ETag", strings.TrimSuffix(a.etag, `"`)+`-gz"`)
		}
	}
	// ServeContent answers If-None-Match with 304 and handles HEAD and ranges.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// acceptsGzip reports whether the client lists gzip in Accept-Encoding without refusing it (q=0).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			q := strings.ReplaceAll(params, " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}
