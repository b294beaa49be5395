package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/webhook"
)

// TestDescribeAndProbeAvailability: an adapter that cannot be reached, or answers 5xx, is
// unavailable (a fork requested now is retryable); one that answers 4xx or nonsense has given its
// considered answer (unsupported, unforkable). Both calls follow the same rule.
func TestDescribeAndProbeAvailability(t *testing.T) {
	tests := []struct {
		name            string
		driver          func(t *testing.T) *webhook.Driver
		wantUnavailable bool
	}{
		{name: "UnavailableOnClosedPort", driver: func(t *testing.T) *webhook.Driver {
			d, _ := closedPort(t)
			return d
		}, wantUnavailable: true},
		{name: "UnavailableOnDNSFailure", driver: func(t *testing.T) *webhook.Driver {
			d, _ := dnsFailure(t)
			return d
		}, wantUnavailable: true},
		{name: "UnavailableOnTimeout", driver: func(t *testing.T) *webhook.Driver {
			d, _ := hangingAdapter(t)
			return d
		}, wantUnavailable: true},
		{name: "UnavailableOnDroppedConnection", driver: func(t *testing.T) *webhook.Driver {
			d, _ := droppingAdapter(t)
			return d
		}, wantUnavailable: true},
		{name: "UnavailableOn500", driver: answering(500, `{"error":"panic"}`), wantUnavailable: true},
		{name: "UnavailableOn502", driver: answering(502, `<html>bad gateway</html>`), wantUnavailable: true},
		{name: "UnavailableOn503", driver: answering(503, ``), wantUnavailable: true},
		{name: "UnavailableOn504", driver: answering(504, ``), wantUnavailable: true},
		{name: "ErrOn400", driver: answering(400, `{"error":"unknown session"}`)},
		{name: "ErrOn404", driver: answering(404, `404 page not found`)},
		{name: "ErrOnUndecodable2xx", driver: answering(200, `not json`)},
		{name: "ErrOnBadURL", driver: func(t *testing.T) *webhook.Driver {
			d, _ := badURL(t)
			return d
		}},
		{name: "ErrOnOversizedAnswer", driver: func(t *testing.T) *webhook.Driver {
			d, _ := oversizedAdapter(t)
			return d
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.driver(t)
			_, derr := d.Describe(context.Background(), sourceSession())
			_, perr := d.ProbeTurns(context.Background(), []forkengine.Probe{{Session: sourceSession(), Turn: boundTurn("t1", 1)}})
			for call, err := range map[string]error{"Describe": derr, "ProbeTurns": perr} {
				if err == nil {
					t.Fatalf("%s succeeded, want an error", call)
				}
				if got := errors.Is(err, forkengine.ErrProviderUnavailable); got != tt.wantUnavailable {
					t.Fatalf("%s error %q: unavailable = %v, want %v", call, err, got, tt.wantUnavailable)
				}
			}
		})
	}
}

// answering returns a driver whose adapter answers every call with status and body.
func answering(status int, body string) func(t *testing.T) *webhook.Driver {
	return func(t *testing.T) *webhook.Driver {
		d, _ := adapter(t, webhook.Options{Timeout: 2 * time.Second}, func(w http.ResponseWriter, r *http.Request) {
			reply(w, status, body)
		})
		return d
	}
}
