package transports

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/handler/testserver"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

func newHTTPServer(t *testing.T) string {
	t.Helper()
	ts := testserver.New()
	ts.AddTransport(Websocket{})
	ts.AddTransport(SSE{})
	ts.AddTransport(HTTP{MaxBodyBytes: 1024})
	hs := httptest.NewServer(ts)
	t.Cleanup(hs.Close)
	return hs.URL
}

type httpCase struct {
	name        string
	method      string
	contentType string
	accept      string
	body        string
	query       url.Values
	status      int
	wantType    string // prefix of the response Content-Type
	wantBody    string // substring
	noData      bool   // the body must not contain a data entry
	header      [2]string
	upgrade     string // an Upgrade header that is not a websocket's, e.g. h2c
}

func (tc httpCase) run(t *testing.T, base string) {
	req, err := http.NewRequest(tc.method, base+"?"+tc.query.Encode(), strings.NewReader(tc.body))
	if err != nil {
		t.Fatal(err)
	}
	if tc.contentType != "" {
		req.Header.Set("Content-Type", tc.contentType)
	}
	if tc.accept != "" {
		req.Header.Set("Accept", tc.accept)
	}
	if tc.upgrade != "" {
		req.Header.Set("Upgrade", tc.upgrade)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != tc.status {
		t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tc.status, body)
	}
	if ct := resp.Header.Get("Content-Type"); tc.wantType != "" && !strings.HasPrefix(ct, tc.wantType) {
		t.Fatalf("Content-Type %q, want %q", ct, tc.wantType)
	}
	if !strings.Contains(string(body), tc.wantBody) {
		t.Fatalf("body %s does not contain %s", body, tc.wantBody)
	}
	if tc.noData {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("body %s: %v", body, err)
		}
		if _, has := m["data"]; has {
			t.Fatalf("body %s has a data entry", body)
		}
	}
	if tc.header[0] != "" && resp.Header.Get(tc.header[0]) != tc.header[1] {
		t.Fatalf("%s = %q, want %q", tc.header[0], resp.Header.Get(tc.header[0]), tc.header[1])
	}
}

const (
	gqlResp = "application/graphql-response+json"
	appJSON = "application/json"
)

func TestHTTP_StatusCodesAndNegotiation(t *testing.T) {
	base := newHTTPServer(t)
	q := func(kv ...string) url.Values {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	ok := `{"query":"{ name }"}`
	cases := []httpCase{
		{name: "PostNoAccept", method: "POST", contentType: appJSON, body: ok, status: 200, wantType: appJSON, wantBody: `"data":{"name":"test"}`},
		{name: "PostGraphQLResponse", method: "POST", contentType: appJSON, accept: gqlResp, body: ok, status: 200, wantType: gqlResp},
		{name: "PostWildcard", method: "POST", contentType: appJSON, accept: "*/*", body: ok, status: 200, wantType: appJSON},
		{name: "PostPreferenceByQ", method: "POST", contentType: appJSON, accept: "application/json, application/graphql-response+json;q=0.5", body: ok, status: 200, wantType: appJSON},
		{name: "PostCharsetUTF8", method: "POST", contentType: "application/json; charset=utf-8", body: ok, status: 200},
		{name: "GetQuery", method: "GET", query: q("query", "{ name }"), status: 200, wantBody: `"name":"test"`},
		{name: "GetVariablesJSON", method: "GET", query: q("query", "query($id: Int!) { find(id: $id) }", "variables", `{"id":1}`), status: 200},
		{name: "GetVariablesNotObject", method: "GET", query: q("query", "{ name }", "variables", `[1]`), status: 400},
		{name: "GetMissingQuery", method: "GET", query: q(), status: 400},
		{name: "GetMutation", method: "GET", accept: gqlResp, query: q("query", "mutation { name }"), status: 405, header: [2]string{"Allow", "POST"}},
		{name: "OtherMethod", method: "PUT", contentType: appJSON, body: ok, status: 405, header: [2]string{"Allow", "GET, POST"}},
		{name: "NotAcceptable", method: "POST", contentType: appJSON, accept: "text/html", body: ok, status: 406},
		{name: "TooLarge", method: "POST", contentType: appJSON, body: `{"query":"{ name }` + strings.Repeat(" ", 2000) + `"}`, status: 413},
		{name: "NoContentType", method: "POST", body: ok, status: 415},
		{name: "TextPlain", method: "POST", contentType: "text/plain", body: ok, status: 415},
		{name: "Latin1", method: "POST", contentType: "application/json; charset=latin1", body: ok, status: 415},
		{name: "MalformedJSON", method: "POST", contentType: appJSON, accept: appJSON, body: `{ "not a JSON`, status: 400},
		{name: "MalformedJSONGraphQLResponse", method: "POST", contentType: appJSON, accept: gqlResp, body: `{ "not a JSON`, status: 400, noData: true},
		{name: "EmptyBody", method: "POST", contentType: appJSON, status: 400},
		{name: "BodyArray", method: "POST", contentType: appJSON, body: `[]`, status: 400},
		{name: "QueryNotString", method: "POST", contentType: appJSON, body: `{"query":0}`, status: 400},
		{name: "QueryMissing", method: "POST", contentType: appJSON, body: `{"qeury":"{ name }"}`, status: 400},
		{name: "OperationNameNotString", method: "POST", contentType: appJSON, body: `{"query":"{ name }","operationName":false}`, status: 400},
		{name: "ExtensionsNotObject", method: "POST", contentType: appJSON, body: `{"query":"{ name }","extensions":"x"}`, status: 400},
		{name: "NullParameters", method: "POST", contentType: appJSON, body: `{"query":"{ name }","variables":null,"operationName":null,"extensions":null}`, status: 200},
		{name: "ParseErrorJSON", method: "POST", contentType: appJSON, accept: appJSON, body: `{"query":"{"}`, status: 200, wantBody: `"errors"`},
		{name: "ParseErrorGraphQLResponse", method: "POST", contentType: appJSON, accept: gqlResp, body: `{"query":"{"}`, status: 400, noData: true},
		{name: "ValidationErrorJSON", method: "POST", contentType: appJSON, accept: appJSON, body: `{"query":"{ nope }"}`, status: 200},
		{name: "ValidationErrorGraphQLResponse", method: "POST", contentType: appJSON, accept: gqlResp, body: `{"query":"{ nope }"}`, status: 400, noData: true},
		{name: "CoercionErrorJSON", method: "POST", contentType: appJSON, accept: appJSON, body: `{"query":"query($id: Int!) { find(id: $id) }","variables":{"id":null}}`, status: 200},
		{name: "CoercionErrorGraphQLResponse", method: "POST", contentType: appJSON, accept: gqlResp, body: `{"query":"query($id: Int!) { find(id: $id) }","variables":{"id":null}}`, status: 400, noData: true},
		{name: "SubscriptionOverPlainHTTP", method: "POST", contentType: appJSON, accept: gqlResp, body: `{"query":"subscription { name }"}`, status: 400},
		// curl --http2 offers h2c on every request: that is no websocket, so plain HTTP answers.
		{name: "PostUpgradeH2C", method: "POST", contentType: appJSON, body: ok, upgrade: "h2c", status: 200, wantBody: `"name":"test"`},
		{name: "GetUpgradeH2C", method: "GET", query: q("query", "{ name }"), upgrade: "h2c", status: 200, wantBody: `"name":"test"`},
		{name: "EventStreamUpgradeH2C", method: "POST", contentType: appJSON, accept: "text/event-stream", body: ok, upgrade: "h2c", status: 200, wantType: "text/event-stream", wantBody: `"name":"test"`},
		{name: "Options", method: "OPTIONS", status: 204, header: [2]string{"Allow", "GET, POST, OPTIONS"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, base) })
	}
}

func TestNegotiateMedia(t *testing.T) {
	cases := map[string]string{
		"":                                  mediaJSON,
		"*/*":                               mediaJSON,
		"application/*":                     mediaJSON,
		"application/graphql-response+json": mediaGraphQLResponse,
		"application/graphql-response+json, application/json;q=0.9": mediaGraphQLResponse,
		"application/json, application/graphql-response+json":       mediaGraphQLResponse,
		"text/html,application/xhtml+xml,*/*;q=0.8":                 mediaJSON,
		"text/html":            "",
		"application/json;q=0": "",
	}
	for accept, want := range map[string]bool{
		"text/event-stream":                         true,
		"text/event-stream, application/json;q=0.5": true,
		"application/graphql-response+json, application/json, text/event-stream, multipart/mixed": false,
		"": false,
	} {
		if got := prefersEventStream(accept); got != want {
			t.Errorf("prefersEventStream(%q) = %v", accept, got)
		}
	}
	for accept, want := range cases {
		got, ok := negotiateMedia(accept)
		if got != want || ok != (want != "") {
			t.Errorf("negotiateMedia(%q) = %q %v, want %q", accept, got, ok, want)
		}
	}
}

// A response whose errors are all UNAVAILABLE (the database could not be reached) is 503 with
// Retry-After under either media type, so proxies and clients' retry policies see "try again";
// a response with any other error keeps its usual status.
func TestHTTP_UnavailableIs503(t *testing.T) {
	for code, status := range map[string]int{"UNAVAILABLE": 503, "INTERNAL_SERVER_ERROR": 200} {
		t.Run(code, func(t *testing.T) {
			ts := testserver.NewError() // its one field fails
			ts.SetErrorPresenter(func(_ context.Context, err error) *gqlerror.Error {
				return &gqlerror.Error{Message: err.Error(), Extensions: map[string]any{"code": code}}
			})
			ts.AddTransport(HTTP{})
			hs := httptest.NewServer(ts)
			t.Cleanup(hs.Close)
			retryAfter := map[int]string{503: "1", 200: ""}[status]
			for _, accept := range []string{appJSON, gqlResp} {
				httpCase{method: "POST", contentType: appJSON, accept: accept, body: `{"query":"{ name }"}`, status: status,
					wantBody: `"code":"` + code + `"`, header: [2]string{"Retry-After", retryAfter}}.run(t, hs.URL)
			}
		})
	}
}
