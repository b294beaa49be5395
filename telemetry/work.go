package telemetry

import "github.com/prometheus/client_golang/prometheus"

var workNames = []string{"forkgraph_fork_leases_held", "forkgraph_store_transaction_retries_total"}

// WatchWork registers, read at every scrape, how many fork operations this instance is driving
// right now (the leases it holds and renews) and how many store transactions were run again
// after the database aborted them to break a deadlock or a serialisation conflict (PostgreSQL).
func (m *Metrics) WatchWork(leasesHeld func() int, retries func() int64) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: workNames[0],
		Help: "Fork operations this instance is driving now, whose leases it renews."},
		func() float64 { return float64(leasesHeld()) }))
	m.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: workNames[1],
		Help: "Store transactions run again after the database aborted them for a deadlock or a serialisation conflict."},
		func() float64 { return float64(retries()) }))
	m.names = append(m.names, workNames...)
}

const statementsName = "forkgraph_store_statements_total"

// WatchStatements registers forkgraph_store_statements_total, read at every scrape: the SQL
// statements the store has run (store.DB.Statements), so a benchmark or a dashboard can tell how
// many statements a unit of work costs from two readings.
func (m *Metrics) WatchStatements(statements func() int64) {
	m.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: statementsName,
		Help: "SQL statements the store has run (queries and execs, inside transactions too; BEGIN and COMMIT not counted)."},
		func() float64 { return float64(statements()) }))
	m.names = append(m.names, statementsName)
}
