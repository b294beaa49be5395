package server

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/telemetry"
)

// authConfig is what the server is told about credentials: static tokens (-tokens, a tokens
// file) and JWTs of one issuer. None of them: open mode. docs/security.md describes each.
type authConfig struct {
	tokensSpec string
	tokensFile string
	filePoll   time.Duration
	jwt        access.JWTConfig
	algorithms string

	tokens *access.TokenSet // -tokens, parsed
}

// register adds the credential flags, each with its FORKGRAPH_* variable.
func (a *authConfig) register(fs *flag.FlagSet, env *envReader) {
	fs.StringVar(&a.tokensSpec, "tokens", env.str("FORKGRAPH_TOKENS", ""),
		"API tokens as token=workspace,token=workspace, each with every scope; none (and no -tokens-file or JWT issuer): open development mode (FORKGRAPH_TOKENS)")
	fs.StringVar(&a.tokensFile, "tokens-file", env.str("FORKGRAPH_TOKENS_FILE", ""),
		"file of API tokens (name, token or sha256:hash, workspaces, scopes per line), reloaded on SIGHUP and when it changes (FORKGRAPH_TOKENS_FILE)")
	fs.DurationVar(&a.filePoll, "tokens-file-poll", env.duration("FORKGRAPH_TOKENS_FILE_POLL", access.DefaultTokenFilePoll),
		"how often the tokens file is checked for changes (FORKGRAPH_TOKENS_FILE_POLL)")
	fs.StringVar(&a.jwt.Issuer, "oidc-issuer", env.str("FORKGRAPH_OIDC_ISSUER", ""),
		"accept JWTs of this OpenID Connect issuer (its iss); keys from its discovery document unless -jwks-url (FORKGRAPH_OIDC_ISSUER)")
	fs.StringVar(&a.jwt.JWKSURL, "jwks-url", env.str("FORKGRAPH_JWKS_URL", ""),
		"accept JWTs signed by the keys of this JWKS (FORKGRAPH_JWKS_URL)")
	fs.StringVar(&a.jwt.Audience, "jwt-audience", env.str("FORKGRAPH_JWT_AUDIENCE", ""),
		"the aud JWTs must name: this API's identifier at the identity provider; required with JWTs (FORKGRAPH_JWT_AUDIENCE)")
	fs.StringVar(&a.algorithms, "jwt-algorithms", env.str("FORKGRAPH_JWT_ALGORITHMS", strings.Join(access.DefaultJWTAlgorithms, ",")),
		"JWT signature algorithms accepted, comma-separated; never none or HS* (FORKGRAPH_JWT_ALGORITHMS)")
	fs.DurationVar(&a.jwt.ClockSkew, "jwt-clock-skew", env.duration("FORKGRAPH_JWT_CLOCK_SKEW", access.DefaultJWTClockSkew),
		"how far a JWT's exp, nbf and iat may be off; streams end at exp plus this (FORKGRAPH_JWT_CLOCK_SKEW)")
	fs.StringVar(&a.jwt.WorkspacesClaim, "jwt-workspaces-claim", env.str("FORKGRAPH_JWT_WORKSPACES_CLAIM", access.DefaultWorkspacesClaim),
		"the JWT claim listing the caller's workspaces (a string or an array) (FORKGRAPH_JWT_WORKSPACES_CLAIM)")
	fs.StringVar(&a.jwt.Workspace, "jwt-workspace", env.str("FORKGRAPH_JWT_WORKSPACE", ""),
		"the one workspace every JWT of the issuer reaches, instead of a claim (FORKGRAPH_JWT_WORKSPACE)")
	fs.StringVar(&a.jwt.ScopesClaim, "jwt-scopes-claim", env.str("FORKGRAPH_JWT_SCOPES_CLAIM", access.DefaultScopesClaim),
		"the JWT claim holding the scopes: OAuth2's space-separated scope by default, or an array such as permissions (FORKGRAPH_JWT_SCOPES_CLAIM)")
	fs.StringVar(&a.jwt.ScopePrefix, "jwt-scope-prefix", env.str("FORKGRAPH_JWT_SCOPE_PREFIX", ""),
		"a prefix of forkgraph's scopes in the JWT (e.g. forkgraph: for forkgraph:read); others are ignored (FORKGRAPH_JWT_SCOPE_PREFIX)")
}

// resolve parses -tokens and checks the JWT settings, so a mistake stops the start with the
// flag's name. The tokens file is read when the server builds its authenticator.
func (a *authConfig) resolve() error {
	var err error
	if a.tokens, err = access.ParseTokens(a.tokensSpec); err != nil {
		return fmt.Errorf("-tokens: %w", err)
	}
	if a.filePoll <= 0 {
		return fmt.Errorf("-tokens-file-poll must be positive, got %s", a.filePoll)
	}
	switch {
	case a.jwt.ClockSkew < 0 || a.jwt.ClockSkew > 10*time.Minute:
		return fmt.Errorf("-jwt-clock-skew must be between 0 and 10m, got %s", a.jwt.ClockSkew)
	case a.jwt.ClockSkew == 0:
		a.jwt.ClockSkew = -1 // the flag's 0 means none; the verifier's zero means its default
	}
	a.jwt.Algorithms = strings.Split(a.algorithms, ",")
	if a.jwtEnabled() {
		if _, err := access.NewJWTVerifier(a.jwt); err != nil {
			return fmt.Errorf("-oidc-issuer, -jwks-url, -jwt-*: %w", err)
		}
	}
	return nil
}

func (a *authConfig) jwtEnabled() bool { return a.jwt.Issuer != "" || a.jwt.JWKSURL != "" }

// open reports whether no credentials are configured: development mode, on loopback only.
func (a *authConfig) open() bool {
	return a.tokens.Len() == 0 && a.tokensFile == "" && !a.jwtEnabled()
}

// build reads the tokens file and makes the authenticator. Until ctx ends it keeps the file in
// force (reloaded on SIGHUP and when it changes) and the issuer's keys fresh; each reload and
// fetch is logged and counted in forkgraph_credential_refreshes_total. A tokens file that cannot
// be read or parsed stops the start.
func (a *authConfig) build(ctx context.Context, logger *slog.Logger, metrics *telemetry.Metrics) (*access.Authenticator, error) {
	cfg := access.AuthConfig{Tokens: a.tokens}
	if a.open() {
		return access.NewAuthenticator(cfg), nil
	}
	record := metrics.CredentialRefresh
	if a.tokensFile != "" {
		file, err := access.LoadTokenFile(a.tokensFile, a.tokens, func(r access.TokenReload) {
			record("tokens_file", r.Tokens, r.Err)
			if r.Err != nil {
				logger.Error("tokens file refused; the tokens in force stay", "file", a.tokensFile, "err", r.Err)
				return
			}
			logger.Info("tokens file reloaded", "file", a.tokensFile, "tokens", r.Tokens, "revoked", r.Revoked)
		})
		if err != nil {
			return nil, fmt.Errorf("-tokens-file: %w", err)
		}
		record("tokens_file", file.Tokens().Len(), nil)
		logger.Info("tokens file loaded", "file", a.tokensFile, "tokens", file.Tokens().Len())
		go file.Watch(ctx, a.filePoll)
		hangUps := make(chan os.Signal, 1)
		signal.Notify(hangUps, syscall.SIGHUP) // before the server listens: a SIGHUP then must not kill it
		go reloadOnHangUp(ctx, file, hangUps)
		cfg.TokenFile = file
	}
	if a.jwtEnabled() {
		jwtCfg := a.jwt
		var verifier *access.JWTVerifier
		jwtCfg.Keys.OnFetch = func(keys int, err error) {
			inForce := keys
			if err != nil && verifier != nil {
				inForce = verifier.Keys().Len()
			}
			record("jwks", inForce, err)
			if err != nil {
				logger.Warn("JWT issuer's keys could not be fetched; the keys known so far stay in force",
					"issuer", jwtCfg.Issuer, "keysKnown", inForce, "err", err)
				return
			}
			logger.Debug("JWT issuer's keys fetched", "issuer", jwtCfg.Issuer, "keys", keys)
		}
		var err error
		if verifier, err = access.NewJWTVerifier(jwtCfg); err != nil {
			return nil, fmt.Errorf("-oidc-issuer, -jwks-url, -jwt-*: %w", err)
		}
		verifier.Keys().Start(ctx)
		logger.Info("JWT bearer tokens accepted", "issuer", jwtCfg.Issuer, "jwks", jwtCfg.JWKSURL, "audience", jwtCfg.Audience,
			"keys", verifier.Keys().Len())
		cfg.JWT = verifier
	}
	return access.NewAuthenticator(cfg), nil
}

// reloadOnHangUp reloads file at every SIGHUP (hangUps) until ctx ends; its outcome is reported
// by the file's onReload.
func reloadOnHangUp(ctx context.Context, file *access.TokenFile, hangUps chan os.Signal) {
	defer signal.Stop(hangUps)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hangUps:
			_ = file.Reload()
		}
	}
}
