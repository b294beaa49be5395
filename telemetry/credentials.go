package telemetry

import "github.com/prometheus/client_golang/prometheus"

// credentialSources are the sources of credentials that refresh: the tokens file and the JWT
// issuer's key set.
var credentialSources = []string{"tokens_file", "jwks"}

// registerCredentials registers forkgraph_credential_refreshes_total{source,outcome} (a reload of
// the tokens file, a fetch of the JWT issuer's key set: source tokens_file or jwks; outcome ok,
// or error when the credentials in force stay as they were) and forkgraph_credential_keys
// {source} (the tokens, or the issuer's keys, in force), every series at 0 from the start.
func (m *Metrics) registerCredentials() {
	m.credentialRefreshes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forkgraph_credential_refreshes_total",
		Help: "Reloads of the tokens file and fetches of the JWT issuer's keys, by source (tokens_file, jwks) and outcome (ok; error: the credentials in force stay)."},
		[]string{"source", "outcome"})
	m.credentialKeys = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "forkgraph_credential_keys",
		Help: "Static tokens of the tokens file, or JWT signing keys, in force, by source (tokens_file, jwks)."}, []string{"source"})
	m.Registry.MustRegister(m.credentialRefreshes, m.credentialKeys)
	m.names = append(m.names, "forkgraph_credential_refreshes_total", "forkgraph_credential_keys")
	for _, source := range credentialSources {
		m.credentialRefreshes.WithLabelValues(source, "ok")
		m.credentialRefreshes.WithLabelValues(source, "error")
		m.credentialKeys.WithLabelValues(source)
	}
}

// CredentialRefresh records one reload of the tokens file or fetch of the JWT issuer's keys
// (source tokens_file or jwks; err nil when it worked) and how many credentials are in force
// after it.
func (m *Metrics) CredentialRefresh(source string, inForce int, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.credentialRefreshes.WithLabelValues(source, outcome).Inc()
	m.credentialKeys.WithLabelValues(source).Set(float64(inForce))
}
