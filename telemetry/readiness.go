package telemetry

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"time"
)

// readyCheckTimeout bounds the database check of one /readyz request.
const readyCheckTimeout = 2 * time.Second

// Readiness is the state /readyz reports: ready when the database answers (check), the
// start-up recovery pass is done (MarkRecovered) and no drain has begun (StartDrain). It is safe
// for concurrent use.
type Readiness struct {
	check     func(context.Context) error
	recovered atomic.Bool
	draining  atomic.Bool
}

// NewReadiness returns a Readiness, not yet recovered, whose database check is check: a read of
// a migrated table, so it fails both when the database is unreachable and when the schema is
// missing.
func NewReadiness(check func(context.Context) error) *Readiness {
	return &Readiness{check: check}
}

// MarkRecovered records that the start-up recovery pass has finished.
func (r *Readiness) MarkRecovered() { r.recovered.Store(true) }

// StartDrain makes the server unready from now on, so load balancers stop sending it work
// while it finishes what it has.
func (r *Readiness) StartDrain() { r.draining.Store(true) }

// Draining reports whether StartDrain was called.
func (r *Readiness) Draining() bool { return r.draining.Load() }

// Ready returns "" when the server is ready, else why it is not: "draining", "recovering" or
// "database unavailable".
func (r *Readiness) Ready(ctx context.Context) (reason string) {
	switch {
	case r.draining.Load():
		return "draining"
	case !r.recovered.Load():
		return "recovering"
	}
	ctx, cancel := context.WithTimeout(ctx, readyCheckTimeout)
	defer cancel()
	if err := r.check(ctx); err != nil {
		return "database unavailable"
	}
	return ""
}

// Handler serves /readyz: 200 {"status":"ready"} or 503 {"status":"unready","reason":...}.
func (r *Readiness) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if reason := r.Ready(req.Context()); reason != "" {
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(map[string]string{"status": "unready", "reason": reason})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "ready"})
	})
}
