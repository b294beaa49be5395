package transports

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A reservation's expiry timer may fire at once (a TTL shorter than the PUT's own work): its
// callback must see the timer it stops, so the timer is set before it can fire. Under -race this
// failed when the timer was assigned after time.AfterFunc had started it (a data race on
// reservation.expiry, or a nil timer stopped by the callback).
func TestSSESingle_ExpiryFiringAtOnceSeesItsTimer(t *testing.T) {
	s := &Reservations{TTL: time.Nanosecond, MaxPerClient: 1000}
	const n = 200
	for range n {
		w := httptest.NewRecorder()
		s.reserve(w, httptest.NewRequest(http.MethodPut, "/", nil))
		if w.Code != http.StatusCreated {
			t.Fatalf("PUT = %d, want 201", w.Code)
		}
	}
	waitFor(t, "every reservation to expire", func() bool { return s.Len() == 0 })
}
