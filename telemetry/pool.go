package telemetry

import (
	"database/sql"

	"github.com/prometheus/client_golang/prometheus"
)

// WatchPool registers forkgraph_store_pool_* metrics read from stats at every scrape: the
// database/sql connection pool of the store.
func (m *Metrics) WatchPool(stats func() sql.DBStats) {
	m.Registry.MustRegister(poolCollector{stats: stats})
	m.names = append(m.names, poolNames...)
}

type poolCollector struct{ stats func() sql.DBStats }

var poolNames = []string{"forkgraph_store_pool_max_open_connections", "forkgraph_store_pool_open_connections",
	"forkgraph_store_pool_in_use_connections", "forkgraph_store_pool_idle_connections",
	"forkgraph_store_pool_waits_total", "forkgraph_store_pool_wait_seconds_total"}

var (
	poolMaxOpen = prometheus.NewDesc(poolNames[0],
		"The pool's limit on open database connections (0: none).", nil, nil)
	poolOpen = prometheus.NewDesc(poolNames[1],
		"Open database connections, in use or idle.", nil, nil)
	poolInUse = prometheus.NewDesc(poolNames[2],
		"Database connections in use.", nil, nil)
	poolIdle = prometheus.NewDesc(poolNames[3],
		"Idle database connections.", nil, nil)
	poolWaits = prometheus.NewDesc(poolNames[4],
		"Times a caller waited for a free database connection.", nil, nil)
	poolWaited = prometheus.NewDesc(poolNames[5],
		"Time spent waiting for a free database connection.", nil, nil)
)

// Describe sends the descriptors of the pool metrics.
func (poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolMaxOpen, poolOpen, poolInUse, poolIdle, poolWaits, poolWaited} {
		ch <- d
	}
}

// Collect reads the pool's statistics once.
func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	ch <- prometheus.MustNewConstMetric(poolMaxOpen, prometheus.GaugeValue, float64(s.MaxOpenConnections))
	ch <- prometheus.MustNewConstMetric(poolOpen, prometheus.GaugeValue, float64(s.OpenConnections))
	ch <- prometheus.MustNewConstMetric(poolInUse, prometheus.GaugeValue, float64(s.InUse))
	ch <- prometheus.MustNewConstMetric(poolIdle, prometheus.GaugeValue, float64(s.Idle))
	ch <- prometheus.MustNewConstMetric(poolWaits, prometheus.CounterValue, float64(s.WaitCount))
	ch <- prometheus.MustNewConstMetric(poolWaited, prometheus.CounterValue, s.WaitDuration.Seconds())
}
