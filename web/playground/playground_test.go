package playground

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The inputs of the front-end build; keep in step with scripts/write-manifest.mjs.
var (
	manifestInputFiles = []string{"index.html", "package.json", "package-lock.json", "vite.config.js"}
	manifestInputDirs  = []string{"src", "scripts", "../../clients/typescript/src"} // the explorer bundles @forkgraph/client from its sources
)

type buildManifest struct {
	Rebuild      string                       `json:"rebuild"`
	SourceSHA256 string                       `json:"sourceSha256"`
	Inputs       []string                     `json:"inputs"`
	Files        map[string]manifestFileEntry `json:"files"`
}

type manifestFileEntry struct {
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
}

func readManifest(t *testing.T) buildManifest {
	t.Helper()
	raw, err := fs.ReadFile(distFS, "dist/build-manifest.json")
	if err != nil {
		t.Fatalf("dist/build-manifest.json missing: rebuild with `npm --prefix web/playground run build`: %v", err)
	}
	var m buildManifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("parse build-manifest.json: %v", err)
	}
	return m
}

// sourceInputs lists the build inputs as slash paths relative to this directory, sorted.
func sourceInputs(t *testing.T) []string {
	t.Helper()
	inputs := append([]string(nil), manifestInputFiles...)
	for _, dir := range manifestInputDirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			inputs = append(inputs, filepath.ToSlash(path))
			return nil
		})
		if err != nil {
			t.Fatalf("walk %s: %v", dir, err)
		}
	}
	sort.Strings(inputs)
	return inputs
}

// sourceDigest is sha256 over "<path>\n<sha256 hex of content>\n" for each input in order.
func sourceDigest(t *testing.T, inputs []string) string {
	t.Helper()
	digest := sha256.New()
	for _, path := range inputs {
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("read build input: %v", err)
		}
		sum := sha256.Sum256(body)
		fmt.Fprintf(digest, "%s\n%s\n", path, hex.EncodeToString(sum[:]))
	}
	return hex.EncodeToString(digest.Sum(nil))
}

func TestCommittedBuildMatchesSources(t *testing.T) {
	m := readManifest(t)
	inputs := sourceInputs(t)
	if got, want := strings.Join(inputs, " "), strings.Join(m.Inputs, " "); got != want {
		t.Errorf("build inputs changed since the last build:\n now:   %s\n built: %s", got, want)
	}
	if got := sourceDigest(t, inputs); got != m.SourceSHA256 {
		t.Fatalf("dist/ is stale: sources hash to %s, the committed build was made from %s; run `%s` and commit dist/",
			got, m.SourceSHA256, m.Rebuild)
	}
}

func TestDistFilesMatchManifest(t *testing.T) {
	m := readManifest(t)
	seen := map[string]bool{}
	err := fs.WalkDir(distFS, "dist", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := strings.TrimPrefix(path, "dist/")
		if name == "build-manifest.json" {
			return nil
		}
		seen[name] = true
		entry, ok := m.Files[name]
		if !ok {
			t.Errorf("dist/%s is not in the build manifest (hand-added?)", name)
			return nil
		}
		body, err := fs.ReadFile(distFS, path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		if hex.EncodeToString(sum[:]) != entry.SHA256 || len(body) != entry.Bytes {
			t.Errorf("dist/%s differs from what the build wrote (hand-edited?)", name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range m.Files {
		if !seen[name] {
			t.Errorf("dist/%s is in the manifest but missing", name)
		}
	}
}

// allowedHosts are the only hosts absolute URLs in the bundle may name: loopback addresses, and
// www.w3.org, whose URLs there are XML namespace identifiers that browsers never fetch.
var allowedHosts = map[string]bool{"127.0.0.1": true, "localhost": true, "[::1]": true, "www.w3.org": true}

// protocolRelative reports a "//host" reference in a place a browser would load it from (CSS url()
// and @import, src and href attributes), or "".
func protocolRelative(body []byte) string {
	lower := bytes.ToLower(body)
	for _, marker := range []string{"url(", "src=", "href=", "@import"} {
		rest := lower
		for {
			i := bytes.Index(rest, []byte(marker))
			if i < 0 {
				break
			}
			rest = rest[i+len(marker):]
			ref := bytes.TrimLeft(rest, " \t\"'")
			if len(ref) > 2 && ref[0] == '/' && ref[1] == '/' && isHostByte(ref[2]) {
				return marker + string(ref[:min(len(ref), 40)])
			}
		}
	}
	return ""
}

func isHostByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '.' || b == '-' || b == '[' || b == ']' || b == ':'
}

// externalHosts returns every host named by an http:// or https:// URL in body that is not allowed.
// A plain scan keeps this fast on the megabyte-sized bundle, also under -race.
func externalHosts(body []byte) []string {
	lower := bytes.ToLower(body)
	var hosts []string
	for _, scheme := range []string{"http://", "https://"} {
		rest := lower
		for {
			i := bytes.Index(rest, []byte(scheme))
			if i < 0 {
				break
			}
			rest = rest[i+len(scheme):]
			end := 0
			for end < len(rest) && isHostByte(rest[end]) {
				end++
			}
			host := string(rest[:end])
			if host == "" {
				continue // a bare scheme, as in URL-handling code, names no host
			}
			if h, _, ok := strings.Cut(strings.TrimPrefix(host, "[::1]"), ":"); ok && !strings.HasPrefix(host, "[") {
				host = h // drop a port
			} else if strings.HasPrefix(host, "[::1]") {
				host = "[::1]"
			}
			if !allowedHosts[host] {
				hosts = append(hosts, host)
			}
		}
	}
	return hosts
}

func TestExternalHostsScan(t *testing.T) {
	body := []byte(`a="http://www.w3.org/2000/svg" b='https://127.0.0.1:8080/x' c=HTTPS://CDN.example.com/y ` +
		`d="http://localhost" e="http://[::1]:9/" f=about:blank#offline/react.dev/errors g="http://evil.test:81"`)
	hosts := externalHosts(body)
	sort.Strings(hosts)
	if got := strings.Join(hosts, " "); got != "cdn.example.com evil.test" {
		t.Fatalf("externalHosts = %q, want the two foreign hosts", got)
	}
	if ref := protocolRelative([]byte(`x <link href="//cdn.example.com/a.css"> y`)); ref == "" {
		t.Fatal("protocolRelative missed a //host stylesheet")
	}
	if ref := protocolRelative([]byte(`a = "//comment"; src=x`)); ref != "" {
		t.Fatalf("protocolRelative flagged %q", ref)
	}
}

func TestDistReferencesNoExternalHost(t *testing.T) {
	err := fs.WalkDir(distFS, "dist", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(distFS, path)
		if err != nil {
			return err
		}
		if ref := protocolRelative(body); ref != "" {
			t.Errorf("%s loads a protocol-relative URL %q: the playground must work offline", path, ref)
		}
		for _, host := range externalHosts(body) {
			t.Errorf("%s references external host %q: the playground must work offline", path, host)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
