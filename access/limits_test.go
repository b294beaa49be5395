package access

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLimitBody(t *testing.T) {
	t.Parallel()
	var read int
	var readErr error
	h := LimitBody(10, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		read, readErr = len(b), err
	}))

	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(strings.Repeat("x", 11))))
	require.Equal(t, http.StatusRequestEntityTooLarge, w.Code, "a declared length over the limit is refused unread")
	require.Equal(t, CodeRequestTooLarge, errorCode(t, w))

	r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(strings.Repeat("x", 100)))
	r.ContentLength = -1 // chunked: the length is not known up front
	h.ServeHTTP(httptest.NewRecorder(), r)
	var tooLarge *http.MaxBytesError
	require.True(t, errors.As(readErr, &tooLarge), "the handler cannot read past the limit: %v", readErr)
	require.LessOrEqual(t, read, 10)

	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader("0123456789")))
	require.NoError(t, readErr)
	require.Equal(t, 10, read)
}

func TestRequestIDs(t *testing.T) {
	t.Parallel()
	var seen string
	h := RequestIDs(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { seen = RequestID(r.Context()) }))
	for given, kept := range map[string]bool{
		"abc-123": true, "": false, strings.Repeat("x", 65): false, "with space": false, "new\nline": false, "ünï": false,
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header["X-Request-Id"] = []string{given}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, seen, w.Header().Get("X-Request-Id"))
		if kept {
			require.Equal(t, given, seen)
		} else {
			require.NotEqual(t, given, seen, "%q is replaced", given)
			require.Len(t, seen, 16)
		}
	}
}
