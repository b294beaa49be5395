package transports

import (
	"encoding/json"
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
