package server

import (
	"encoding/json"
	"net/http"

	"github.com/99designs/gqlgen/graphql/handler"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/web/playground"
)

// routes serves GraphQL at /graphql (POST, GET, websocket, SSE), liveness at /healthz, readiness
// at /readyz, metrics at /metrics (unless -metrics-addr moves them) and the playground at /, each
// to allowed hosts only, with the request line and headers within access.MaxHeaderBytes. Every
// refusal is JSON with a code: the mux's and the playground's plain-text 404 and 405 too
// (access.JSONErrors).
//
// /healthz is liveness only: it answers while the process serves HTTP, and reads nothing. The
// database is /readyz's business: an outage makes every instance unready at once, and a liveness
// probe that failed with it would have an orchestrator restart healthy processes for nothing.
//
// /graphql checks the Host and the headers itself, inside its request log and metrics
// (graphqlEdge), so a 403 for a bad Host or a 431 is logged and counted in
// forkgraph_http_responses_total like every other /graphql response; the other routes are
// checked before their mux.
func routes(cfg config, gql *handler.Server, obs *observability) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(obs.health("ok"))
	})
	obs.register(mux)
	mux.Handle("/", playground.Handler("/graphql"))
	root := http.NewServeMux()
	root.Handle("/graphql", graphqlEdge(cfg, gql, obs.graphqlHandler))
	root.Handle("/", access.LimitHeaders(access.MaxHeaderBytes, cfg.edge.hosts.Middleware(access.JSONErrors(mux))))
	return obs.tel.DebugLog(root, "/graphql")
}
