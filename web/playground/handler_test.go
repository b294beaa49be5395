package playground

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func serve(t *testing.T, h http.Handler, method, target string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestIndexInjectsEndpoint(t *testing.T) {
	h := Handler(`/api/graphql?x="<y>"`)
	rec := serve(t, h, http.MethodGet, "/", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET / = %d, want 200", rec.Code)
	}
	body := rec.Body.String()
	want := `name="forkgraph-endpoint" content="/api/graphql?x=&#34;&lt;y&gt;&#34;"`
	if !strings.Contains(body, want) {
		t.Fatalf("index.html lacks escaped endpoint meta %q:\n%s", want, body)
	}
	if strings.Contains(body, endpointPlaceholder) {
		t.Fatalf("index.html still holds the placeholder")
	}
	if got := rec.Header().Get("Content-Type"); got != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q", got)
	}
	if got := rec.Header().Get("Cache-Control"); got != "no-cache" {
		t.Errorf("Cache-Control = %q, want no-cache", got)
	}
	if got := rec.Header().Get("Content-Security-Policy"); !strings.Contains(got, "default-src 'self'") {
		t.Errorf("Content-Security-Policy = %q", got)
	}
}

func TestIndexAliasServesSameDocument(t *testing.T) {
	h := Handler("/graphql")
	root := serve(t, h, http.MethodGet, "/", nil)
	alias := serve(t, h, http.MethodGet, "/index.html", nil)
	if alias.Code != http.StatusOK || alias.Body.String() != root.Body.String() {
		t.Fatalf("/index.html = %d, differs from /", alias.Code)
	}
}

func TestHashedAssetsAreImmutableWithTypes(t *testing.T) {
	h := Handler("/graphql").(*handler)
	var sawJS bool
	for urlPath, a := range h.assets {
		if !strings.HasPrefix(urlPath, "/assets/") {
			continue
		}
		rec := serve(t, h, http.MethodGet, urlPath, nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d", urlPath, rec.Code)
		}
		if got := rec.Header().Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
			t.Errorf("%s Cache-Control = %q", urlPath, got)
		}
		if got := rec.Header().Get("Content-Type"); got != a.contentType || got == "application/octet-stream" {
			t.Errorf("%s Content-Type = %q", urlPath, got)
		}
		if strings.HasSuffix(urlPath, ".js") {
			sawJS = true
			if got := rec.Header().Get("Content-Type"); got != "text/javascript; charset=utf-8" {
				t.Errorf("%s Content-Type = %q", urlPath, got)
			}
		}
	}
	if !sawJS {
		t.Fatal("no JavaScript asset under /assets/")
	}
}

func TestConditionalGetAnswers304(t *testing.T) {
	h := Handler("/graphql")
	first := serve(t, h, http.MethodGet, "/", nil)
	etag := first.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag on index.html")
	}
	again := serve(t, h, http.MethodGet, "/", map[string]string{"If-None-Match": etag})
	if again.Code != http.StatusNotModified {
		t.Fatalf("revalidation = %d, want 304", again.Code)
	}
}

func TestRejectsUnknownPathsAndMethods(t *testing.T) {
	h := Handler("/graphql")
	if rec := serve(t, h, http.MethodGet, "/nope.js", nil); rec.Code != http.StatusNotFound {
		t.Errorf("GET /nope.js = %d, want 404", rec.Code)
	}
	if rec := serve(t, h, http.MethodGet, "/assets/../index.html", nil); rec.Code != http.StatusNotFound {
		t.Errorf("GET traversal = %d, want 404", rec.Code)
	}
	rec := serve(t, h, http.MethodPost, "/", nil)
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST / = %d Allow=%q, want 405 GET, HEAD", rec.Code, rec.Header().Get("Allow"))
	}
	if rec := serve(t, h, http.MethodHead, "/", nil); rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Errorf("HEAD / = %d with %d bytes", rec.Code, rec.Body.Len())
	}
}

func TestTextAssetsAreGzippedOnRequest(t *testing.T) {
	h := Handler("/graphql").(*handler)
	var largest string
	for urlPath, a := range h.assets {
		if strings.HasSuffix(urlPath, ".js") && (largest == "" || len(a.body) > len(h.assets[largest].body)) {
			largest = urlPath
		}
	}
	plain := serve(t, h, http.MethodGet, largest, nil)
	zipped := serve(t, h, http.MethodGet, largest, map[string]string{"Accept-Encoding": "br, gzip"})
	if zipped.Header().Get("Content-Encoding") != "gzip" || zipped.Body.Len() >= plain.Body.Len() {
		t.Fatalf("%s: Content-Encoding=%q, %d gzipped vs %d plain bytes", largest,
			zipped.Header().Get("Content-Encoding"), zipped.Body.Len(), plain.Body.Len())
	}
	if plain.Header().Get("Content-Encoding") != "" || plain.Header().Get("Vary") != "Accept-Encoding" {
		t.Errorf("plain response: Content-Encoding=%q Vary=%q", plain.Header().Get("Content-Encoding"), plain.Header().Get("Vary"))
	}
	if zipped.Header().Get("ETag") == plain.Header().Get("ETag") {
		t.Error("gzipped and plain representations share an ETag")
	}
	zr, err := gzip.NewReader(zipped.Body)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unzipped, plain.Body.Bytes()) {
		t.Fatalf("gzipped body does not decode to the plain body (err %v)", err)
	}
	refused := serve(t, h, http.MethodGet, largest, map[string]string{"Accept-Encoding": "gzip;q=0"})
	if refused.Header().Get("Content-Encoding") != "" {
		t.Error("gzip sent although the client refused it with q=0")
	}
}

func TestWorksUnderPathPrefix(t *testing.T) {
	h := http.StripPrefix("/ui", Handler("/ui/graphql"))
	index := serve(t, h, http.MethodGet, "/ui/", nil)
	if index.Code != http.StatusOK {
		t.Fatalf("GET /ui/ = %d", index.Code)
	}
	// The build references assets relative to the document, so they resolve under the prefix.
	body := index.Body.String()
	start := strings.Index(body, `src="./assets/`)
	if start < 0 {
		t.Fatalf("index.html does not load its script relative to itself:\n%s", body)
	}
	script := body[start+len(`src="./`):]
	script = script[:strings.IndexByte(script, '"')]
	if rec := serve(t, h, http.MethodGet, "/ui/"+script, nil); rec.Code != http.StatusOK {
		t.Fatalf("GET /ui/%s = %d", script, rec.Code)
	}
}
