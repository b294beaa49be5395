package server

import (
	"errors"
	"flag"
	"fmt"
	"net/http"

	"github.com/99designs/gqlgen/graphql/handler"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/persisted"
)

// edgeConfig is the HTTP edge policy the server is told: which hosts and browser origins it
// serves, whether open mode may listen beyond loopback, whose X-Forwarded-For to believe, and
// persisted operations. docs/security.md describes each.
type edgeConfig struct {
	allowedHosts     string
	corsOrigins      string
	insecureOpenMode bool
	trustedProxies   string
	apqCache         int64
	trustedDocuments string

	hosts     access.Hosts
	origins   access.Origins
	proxies   access.TrustedProxies
	persisted *persisted.Operations
}

// register adds the edge flags, each with its FORKGRAPH_* variable.
func (e *edgeConfig) register(fs *flag.FlagSet, env *envReader) {
	fs.StringVar(&e.allowedHosts, "allowed-hosts", env.str("FORKGRAPH_ALLOWED_HOSTS", ""),
		"Host header names served, comma-separated (\"*\" any, \"loopback\", \".suffix\"); default: loopback names in open mode, any with tokens (FORKGRAPH_ALLOWED_HOSTS)")
	fs.StringVar(&e.corsOrigins, "cors-origins", env.str("FORKGRAPH_CORS_ORIGINS", ""),
		"browser origins besides the server's own that may use /graphql, e.g. https://app.example.com (FORKGRAPH_CORS_ORIGINS)")
	fs.BoolVar(&e.insecureOpenMode, "insecure-open-mode", env.boolean("FORKGRAPH_INSECURE_OPEN_MODE", false),
		"allow open mode (no tokens) on a non-loopback listen address (FORKGRAPH_INSECURE_OPEN_MODE)")
	fs.StringVar(&e.trustedProxies, "trusted-proxies", env.str("FORKGRAPH_TRUSTED_PROXIES", ""),
		"CIDRs of proxies whose X-Forwarded-For names the client for rate limits (FORKGRAPH_TRUSTED_PROXIES)")
	fs.Int64Var(&e.apqCache, "apq-cache", env.int64("FORKGRAPH_APQ_CACHE", 1000),
		"automatic persisted queries remembered, all clients together, each client's apart; 0 disables APQ (FORKGRAPH_APQ_CACHE)")
	fs.StringVar(&e.trustedDocuments, "trusted-documents", env.str("FORKGRAPH_TRUSTED_DOCUMENTS", ""),
		"JSON manifest of hash → document; when set only those documents run (FORKGRAPH_TRUSTED_DOCUMENTS)")
}

// errOpenModeExposed refuses to serve every workspace without credentials to the network.
var errOpenModeExposed = errors.New("open mode (no -tokens, -tokens-file or JWT issuer) serves every workspace without " +
	"authentication, so it listens on loopback only; configure credentials (docs/security.md), listen on 127.0.0.1, " +
	"or pass -insecure-open-mode (FORKGRAPH_INSECURE_OPEN_MODE) to accept the risk")

// resolve parses the edge flags and checks them against the rest of cfg.
func (e *edgeConfig) resolve(cfg config) error {
	if cfg.auth.open() && !e.insecureOpenMode && !access.IsLoopbackListen(cfg.addr) {
		return fmt.Errorf("-addr %s: %w", cfg.addr, errOpenModeExposed)
	}
	var err error
	switch {
	case e.allowedHosts != "":
		e.hosts, err = access.ParseHosts(e.allowedHosts)
	case cfg.auth.open():
		e.hosts = access.LoopbackHosts()
	default:
		e.hosts = access.AnyHost()
	}
	if err != nil {
		return fmt.Errorf("-allowed-hosts: %w", err)
	}
	if e.origins, err = access.ParseOrigins(e.corsOrigins); err != nil {
		return fmt.Errorf("-cors-origins: %w", err)
	}
	if e.proxies, err = access.ParseTrustedProxies(e.trustedProxies); err != nil {
		return fmt.Errorf("-trusted-proxies: %w", err)
	}
	if e.apqCache < 0 || e.apqCache > 1_000_000 {
		return fmt.Errorf("-apq-cache must be between 0 and 1000000, got %d", e.apqCache)
	}
	// APQ documents are remembered per client, as the rate limit counts them (docs/security.md).
	opts := persisted.Options{APQEntries: int(e.apqCache), Client: access.ContextClientKey}
	if e.trustedDocuments != "" {
		if opts.Trusted, err = persisted.LoadManifest(e.trustedDocuments); err != nil {
			return fmt.Errorf("-trusted-documents: %w", err)
		}
	}
	e.persisted = persisted.New(opts)
	return nil
}

// graphqlEdge wraps the GraphQL handler in the edge policy (access.Edge), observed by observe.
func graphqlEdge(cfg config, gql *handler.Server, observe func(http.Handler) http.Handler) http.Handler {
	return access.Edge{Hosts: cfg.edge.hosts, Origins: cfg.edge.origins, Proxies: cfg.edge.proxies, Authn: cfg.authn,
		PerSecond: cfg.rateLimit, Burst: int(cfg.rateBurst), MaxBody: cfg.maxBody, Observe: observe}.Handler(gql)
}
