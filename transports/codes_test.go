package transports

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every refusal the transports answer themselves carries extensions.code, under both media
// types, so a client never has to read a message to know what happened.
func TestRequestFailuresCarryCodes(t *testing.T) {
	base := newHTTPServer(t)
	cases := []struct {
		name, method, contentType, accept, body, code string
		status                                        int
	}{
		{"not JSON", "POST", "application/json", "", "{", CodeBadRequest, 400},
		{"empty body", "POST", "application/json", "", "", CodeBadRequest, 400},
		{"query not a string", "POST", "application/json", "", `{"query": 1}`, CodeBadRequest, 400},
		{"other method", "PUT", "application/json", "", `{"query":"{ name }"}`, CodeMethodNotAllowed, 405},
		{"mutation over GET", "GET", "", "", "", CodeMethodNotAllowed, 405},
		{"no acceptable media type", "POST", "application/json", "text/html", `{"query":"{ name }"}`, CodeNotAcceptable, 406},
		{"too large", "POST", "application/json", "", `{"query":"` + strings.Repeat(" ", 2000) + `{ name }"}`, CodeRequestTooLarge, 413},
		{"not JSON media", "POST", "text/plain", "", `{"query":"{ name }"}`, CodeUnsupportedMediaType, 415},
		{"subscription over POST", "POST", "application/json", "", `{"query":"subscription { name }"}`, CodeBadRequest, 200},
		{"subscription over POST, graphql-response+json", "POST", "application/json", "application/graphql-response+json",
			`{"query":"subscription { name }"}`, CodeBadRequest, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := base
			if tc.method == "GET" {
				url += "?query=" + "mutation%20%7B%20name%20%7D"
			}
			req, err := http.NewRequest(tc.method, url, strings.NewReader(tc.body))
			require.NoError(t, err)
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			require.Equal(t, tc.status, resp.StatusCode, "%s", raw)
			var body struct {
				Errors []struct{ Extensions map[string]any }
			}
			require.NoError(t, json.Unmarshal(raw, &body), "%s", raw)
			require.NotEmpty(t, body.Errors, "%s", raw)
			for _, e := range body.Errors {
				require.Equal(t, tc.code, e.Extensions["code"], "%s", raw)
			}
		})
	}
}

// The websocket's own error messages carry codes too: the legacy protocol's connection_error
// and error, an init refusal that carries its own extensions, and a limiter's plain error.
func TestWebsocketErrorsCarryCodes(t *testing.T) {
	refusal := &extError{msg: "a valid bearer token is required", ext: map[string]any{"code": "UNAUTHENTICATED"}}
	_, url := newTestServer(t, Websocket{
		InitFunc: func(ctx context.Context, p map[string]any) (context.Context, *map[string]any, error) {
			if p["refuse"] != nil {
				return ctx, nil, refusal
			}
			return ctx, nil, nil
		},
		OperationLimiter: func(context.Context) error { return errors.New("no more today") },
	})
	codeOf := func(raw json.RawMessage) string {
		var one struct{ Extensions map[string]any }
		if json.Unmarshal(raw, &one) != nil || one.Extensions == nil {
			var list []struct{ Extensions map[string]any }
			require.NoError(t, json.Unmarshal(raw, &list), "%s", raw)
			require.NotEmpty(t, list)
			one = list[0]
		}
		code, _ := one.Extensions["code"].(string)
		return code
	}
	legacy := dial(t, url, SubprotocolLegacyWS)
	legacy.sendRaw("not json")
	require.Equal(t, CodeBadRequest, codeOf(legacy.expect("connection_error", "").Payload))
	legacy.sendRaw(`{"type":"nonsense","id":"1"}`)
	require.Equal(t, CodeBadRequest, codeOf(legacy.expect("error", "1").Payload))
	legacy.send(map[string]any{"type": "connection_init", "payload": map[string]any{"refuse": true}})
	require.Equal(t, "UNAUTHENTICATED", codeOf(legacy.expect("connection_error", "").Payload))

	c := dial(t, url, SubprotocolTransportWS)
	c.initialise()
	c.subscribe("1", "{ name }")
	require.Equal(t, CodeOperationRefused, codeOf(c.expect("error", "1").Payload))
}

type extError struct {
	msg string
	ext map[string]any
}

func (e *extError) Error() string              { return e.msg }
func (e *extError) Extensions() map[string]any { return e.ext }
