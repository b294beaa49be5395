package telemetry

import "github.com/prometheus/client_golang/prometheus"

var credentialNames = []string{"forkgraph_credential_refreshes_total", "forkgraph_credential_keys"}

// CredentialRefreshes registers forkgraph_credential_refreshes_total{source,outcome} (a reload
// of the tokens file, a fetch of the JWT issuer's key set: source tokens_file or jwks; outcome
// ok or error, when the credentials in force stay as they were) and forkgraph_credential_keys
// {source} (the tokens, or the issuer's keys, in force), and returns the function that records
// one refresh and how many credentials are in force after it. Call it once.
func (m *Metrics) CredentialRefreshes() func(source string, inForce int, err error) {
	refreshes := prometheus.NewCounterVec(prometheus.CounterOpts{Name: credentialNames[0],
		Help: "Reloads of the tokens file and fetches of the JWT issuer's keys, by source (tokens_file, jwks) and outcome (ok; error: the credentials in force stay)."},
		[]string{"source", "outcome"})
	keys := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: credentialNames[1],
		Help: "Static tokens, or JWT signing keys, in force, by source (tokens_file, jwks)."}, []string{"source"})
	m.Registry.MustRegister(refreshes, keys)
	m.names = append(m.names, credentialNames...)
	return func(source string, inForce int, err error) {
		outcome := "ok"
		if err != nil {
			outcome = "error"
		}
		refreshes.WithLabelValues(source, outcome).Inc()
		keys.WithLabelValues(source).Set(float64(inForce))
	}
}
