package main

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/99designs/gqlgen/graphql/handler"

	"github.com/forkgraph/forkgraph/web/playground"
)

// routes serves GraphQL at /graphql (POST, GET, websocket, SSE), liveness at /healthz, readiness
// at /readyz, metrics at /metrics (unless -metrics-addr moves them) and the playground at /, each
// to allowed hosts only.
func routes(cfg config, gql *handler.Server, healthy func(context.Context) error, obs *observability) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/graphql", graphqlEdge(cfg, gql, obs.graphqlHandler))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if err := healthy(r.Context()); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(obs.health("unavailable"))
			return
		}
		_ = json.NewEncoder(w).Encode(obs.health("ok"))
	})
	obs.register(mux)
	mux.Handle("/", playground.Handler("/graphql"))
	return obs.tel.DebugLog(cfg.edge.hosts.Middleware(mux), "/graphql")
}
