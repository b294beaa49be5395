package transports

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// FuzzHTTPRequestDecoder feeds arbitrary bodies, media types and query strings to the GraphQL
// over HTTP request decoder. It must never panic; every refusal has a 4xx status and a coded
// error; an accepted POST keeps the query it was sent and names a document when it has none.
func FuzzHTTPRequestDecoder(f *testing.F) {
	f.Add("POST", "application/json", []byte(`{"query":"{ a }","variables":{"x":1},"operationName":"A"}`), "")
	f.Add("POST", "application/json; charset=utf-8", []byte(`{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"ab"}}}`), "")
	f.Add("POST", "application/json", []byte(`{"documentId":"abc","variables":null}`), "")
	f.Add("POST", "application/json", []byte(`{"query":1}`), "")
	f.Add("POST", "text/plain", []byte(`{"query":"{ a }"}`), "")
	f.Add("POST", "application/json", []byte(`[]`), "")
	f.Add("POST", "application/json", []byte("{\"query\":\"\xff\"}"), "")
	f.Add("GET", "", []byte(nil), "query=%7B+a+%7D&variables=%7B%7D")
	f.Add("GET", "", []byte(nil), "extensions=%7B%22persistedQuery%22%3A1%7D")
	f.Add("GET", "", []byte(nil), "documentId=")
	f.Add("PUT", "", []byte(nil), "")
	f.Fuzz(func(t *testing.T, method, contentType string, body []byte, rawQuery string) {
		if _, err := url.ParseQuery(rawQuery); err != nil {
			rawQuery = ""
		}
		if !validMethod(method) {
			method = http.MethodPost
		}
		r := httptest.NewRequest(method, "/graphql", bytes.NewReader(body))
		r.URL.RawQuery = rawQuery
		r.Header.Set("Content-Type", contentType)
		params, failure := readParams(r, 1<<16)
		if failure != nil {
			if failure.status < 400 || failure.status > 499 {
				t.Fatalf("status %d for a request failure", failure.status)
			}
			for _, e := range failure.errs {
				if e.Extensions["code"] == nil {
					t.Fatalf("uncoded error %q", e.Message)
				}
			}
			return
		}
		if params == nil {
			t.Fatal("neither params nor a failure")
		}
		if params.Query == "" && !namesDocument(params) && method == http.MethodPost {
			var probe map[string]json.RawMessage
			if json.Unmarshal(body, &probe) == nil && isAbsent(probe["query"]) {
				t.Fatalf("accepted a body without query or document: %s", body)
			}
		}
	})
}

func validMethod(m string) bool {
	if m == "" || len(m) > 16 {
		return false
	}
	for i := range len(m) {
		if m[i] < 'A' || m[i] > 'Z' {
			return false
		}
	}
	return true
}

// FuzzWebsocketMessageDecoder feeds arbitrary frames to the websocket message and subscribe
// payload decoders: never a panic, and an accepted subscribe payload has a query or names a
// persisted document.
func FuzzWebsocketMessageDecoder(f *testing.F) {
	f.Add([]byte(`{"type":"connection_init","payload":{"authorization":"Bearer x"}}`))
	f.Add([]byte(`{"id":"1","type":"subscribe","payload":{"query":"subscription { a }","variables":{"n":1.5e300}}}`))
	f.Add([]byte(`{"id":"1","type":"subscribe","payload":{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"x"}}}}`))
	f.Add([]byte(`{"id":"1","type":"start","payload":{"documentId":7}}`))
	f.Add([]byte(`{"id":1,"type":"subscribe","payload":[]}`))
	f.Add([]byte(`{"type":""}`))
	f.Add([]byte(`nul`))
	f.Add([]byte("{\"type\":\"ping\",\"payload\":\"\xfe\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		msg, err := decodeInbound(data)
		if err != nil {
			return
		}
		_, _ = messageID(msg)
		_, _ = optionalObject(msg.Payload)
		params, err := decodeParams(msg.Payload)
		if err != nil {
			return
		}
		if params.Query == "" && !namesDocument(params) {
			var p subscribePayload
			if json.Unmarshal(msg.Payload, &p) == nil && isAbsent(p.Query) {
				t.Fatalf("accepted a subscribe without query or document: %s", msg.Payload)
			}
		}
	})
}
