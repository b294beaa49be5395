package playground

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The inputs of the front-end build; keep in step with scripts/write-manifest.mjs.
var (
	manifestInputFiles = []string{"index.html", "package.json", "package-lock.json", "vite.config.js"}
	manifestInputDirs  = []string{"src", "scripts"}
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

// allowedURL matches the only absolute URLs the bundle may contain: loopback addresses and XML
// namespace identifiers, which browsers never fetch. protocolRelative catches "//host" references
// in the places a browser would load them from.
var (
	absoluteURL      = regexp.MustCompile(`(?i)https?://[a-z0-9.\-\[\]:]+`)
	allowedURL       = regexp.MustCompile(`(?i)^https?://(?:127\.0\.0\.1|localhost|\[::1\]|www\.w3\.org)(?::\d+)?$`)
	protocolRelative = regexp.MustCompile(`(?i)(?:url\(|src=|href=|@import)\s*["']?//[a-z0-9]`)
)

func TestDistReferencesNoExternalHost(t *testing.T) {
	err := fs.WalkDir(distFS, "dist", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(distFS, path)
		if err != nil {
			return err
		}
		if ref := protocolRelative.FindString(string(body)); ref != "" {
			t.Errorf("%s loads a protocol-relative URL %q: the playground must work offline", path, ref)
		}
		for _, ref := range absoluteURL.FindAllString(string(body), -1) {
			if !allowedURL.MatchString(ref) {
				t.Errorf("%s references external %q: the playground must work offline", path, ref)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
