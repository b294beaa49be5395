package transports

import (
	"mime"
	"strconv"
	"strings"
)

// Response media types of GraphQL over HTTP.
const (
	mediaGraphQLResponse = "application/graphql-response+json; charset=utf-8"
	mediaJSON            = "application/json; charset=utf-8"
)

// acceptEntry is one media range of an Accept header with its q-value.
type acceptEntry struct {
	mediaType string
	q         float64
	params    map[string]string // lower-case names, q included
}

// acceptEntries parses an Accept header in order, skipping malformed ranges and q-values.
func acceptEntries(accept string) []acceptEntry {
	var entries []acceptEntry
	for _, part := range strings.Split(accept, ",") {
		mediaType, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, has := params["q"]; has {
			if q, err = strconv.ParseFloat(v, 64); err != nil {
				continue
			}
		}
		entries = append(entries, acceptEntry{mediaType, q, params})
	}
	return entries
}

// negotiateMedia picks the response media type from an Accept header: the acceptable type
// with the highest q-value; on a tie application/graphql-response+json wins when named
// explicitly, while wildcards mean application/json. An empty header means application/json.
// ok is false when nothing acceptable is named.
func negotiateMedia(accept string) (media string, ok bool) {
	if strings.TrimSpace(accept) == "" {
		return mediaJSON, true
	}
	bestQ, best := 0.0, ""
	for _, e := range acceptEntries(accept) {
		candidate := ""
		switch e.mediaType {
		case "application/graphql-response+json":
			candidate = mediaGraphQLResponse
		case "application/json", "application/*", "*/*":
			candidate = mediaJSON
		}
		if candidate == "" || e.q <= 0 {
			continue
		}
		if e.q > bestQ || (e.q == bestQ && candidate == mediaGraphQLResponse) {
			bestQ, best = e.q, candidate
		}
	}
	return best, best != ""
}

// prefersEventStream reports whether text/event-stream is the client's first choice: listed
// with the highest q-value before any other type. Clients such as urql list it after the JSON
// types for incremental delivery; they want a plain JSON answer.
func prefersEventStream(accept string) bool {
	bestQ, best := 0.0, ""
	for _, e := range acceptEntries(accept) {
		if e.q > bestQ {
			bestQ, best = e.q, e.mediaType
		}
	}
	return best == "text/event-stream"
}

// acceptsIncremental reports whether the client takes an incremental (@defer) answer:
// multipart/mixed named explicitly with a q-value above zero, and a deferSpec parameter, if
// any, of 20220824, the payload shape forkgraph sends. Wildcards do not count: a client that
// cannot read multipart/mixed must never get it.
func acceptsIncremental(accept string) bool {
	for _, e := range acceptEntries(accept) {
		if e.mediaType != "multipart/mixed" || e.q <= 0 {
			continue
		}
		if spec, has := e.params["deferspec"]; !has || spec == deferSpec {
			return true
		}
	}
	return false
}
