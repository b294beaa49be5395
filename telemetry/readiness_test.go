package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

func readyz(t *testing.T, r *Readiness) (int, map[string]string) {
	t.Helper()
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	var body map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q: %v", rec.Body.String(), err)
	}
	return rec.Code, body
}

func TestReadiness(t *testing.T) {
	var dbErr error
	r := NewReadiness(func(context.Context) error { return dbErr })
	steps := []struct {
		name   string
		do     func()
		code   int
		reason string
	}{
		{"UnreadyBeforeRecovery", func() {}, http.StatusServiceUnavailable, "recovering"},
		{"ReadyAfterRecovery", r.MarkRecovered, http.StatusOK, ""},
		{"UnreadyWhenTheDatabaseFails", func() { dbErr = errors.New("no such table: sessions") }, http.StatusServiceUnavailable, "database unavailable"},
		{"ReadyWhenItAnswersAgain", func() { dbErr = nil }, http.StatusOK, ""},
		{"UnreadyFromTheStartOfADrain", r.StartDrain, http.StatusServiceUnavailable, "draining"},
	}
	for _, s := range steps {
		s.do()
		code, body := readyz(t, r)
		if code != s.code || body["reason"] != s.reason {
			t.Fatalf("%s: %d %v, want %d reason %q", s.name, code, body, s.code, s.reason)
		}
	}
	if !r.Draining() {
		t.Fatal("Draining() after StartDrain")
	}
}
