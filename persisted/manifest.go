package persisted

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// Manifest is the set of trusted documents, by the id clients name them with.
type Manifest struct {
	documents map[string]string
}

// Len returns the number of documents.
func (m *Manifest) Len() int { return len(m.documents) }

// Document returns the document with id.
func (m *Manifest) Document(id string) (string, bool) {
	doc, ok := m.documents[id]
	return doc, ok
}

// apolloManifest is Apollo's persisted query manifest (generate-persisted-query-manifest).
type apolloManifest struct {
	Format     string `json:"format"`
	Version    int    `json:"version"`
	Operations []struct {
		ID   string `json:"id"`
		Body string `json:"body"`
	} `json:"operations"`
}

const apolloFormat = "apollo-persisted-query-manifest"

// LoadManifest reads a manifest file: a JSON object of id → document, as Relay's persisted
// queries (persisted_queries.json) and GraphQL Code Generator's client preset
// (persisted-documents.json) write, or Apollo's persisted query manifest.
func LoadManifest(path string) (*Manifest, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read trusted documents: %w", err)
	}
	m, err := ParseManifest(raw)
	if err != nil {
		return nil, fmt.Errorf("trusted documents %s: %w", path, err)
	}
	return m, nil
}

// ParseManifest decodes a manifest (see LoadManifest). Every id and document must be a
// non-empty string, and there must be at least one document.
func ParseManifest(raw []byte) (*Manifest, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("want a JSON object of id → document: %w", err)
	}
	docs := map[string]string{}
	if format, ok := probe["format"]; ok && string(format) == `"`+apolloFormat+`"` {
		var am apolloManifest
		if err := json.Unmarshal(raw, &am); err != nil {
			return nil, fmt.Errorf("apollo manifest: %w", err)
		}
		if am.Version != 1 {
			return nil, fmt.Errorf("apollo manifest version %d: only 1 is known", am.Version)
		}
		for i, op := range am.Operations {
			if op.ID == "" || op.Body == "" {
				return nil, fmt.Errorf("operation %d needs an id and a body", i)
			}
			docs[op.ID] = op.Body
		}
	} else {
		for id, value := range probe {
			var doc string
			if json.Unmarshal(value, &doc) != nil || doc == "" || id == "" {
				return nil, fmt.Errorf("entry %q: want a non-empty id mapped to a document string", id)
			}
			docs[id] = doc
		}
	}
	if len(docs) == 0 {
		return nil, errors.New("the manifest has no documents")
	}
	return &Manifest{documents: docs}, nil
}
