package main

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/99designs/gqlgen/graphql/handler"

	"github.com/forkgraph/forkgraph/resolvers"
	"github.com/forkgraph/forkgraph/web/playground"
)

// routes serves GraphQL at /graphql (POST, GET, websocket, SSE), liveness at /healthz and the
// playground at /.
func routes(cfg config, gql *handler.Server, healthy func(context.Context) error) http.Handler {
	mux := http.NewServeMux()
	limit := resolvers.NewRateLimit(cfg.tokens, cfg.rateLimit, int(cfg.rateBurst))
	if cfg.tokens.Open() {
		limit = nil // development mode: local tools, tests and benchmarks run unthrottled
	}
	mux.Handle("/graphql", withRequestID(limit.HTTPMiddleware(
		cfg.tokens.HTTPMiddleware(gql))))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if err := healthy(r.Context()); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(map[string]string{"status": "unavailable"})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "ok"})
	})
	mux.Handle("/", playground.Handler("/graphql"))
	return mux
}

// withRequestID tags each request with an id (the client's X-Request-Id, or a new one) that the
// error presenter logs beside internal errors and returns to the client.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 64 {
			id = resolvers.NewRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(resolvers.WithRequestID(r.Context(), id)))
	})
}
