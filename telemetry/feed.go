package telemetry

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// feedScrapeTimeout bounds the read of the log's head at one scrape.
const feedScrapeTimeout = 2 * time.Second

var feedNames = []string{"forkgraph_event_feed_position", "forkgraph_event_feed_lag_events"}

var (
	feedPosition = prometheus.NewDesc(feedNames[0],
		"Cursor of the last event this instance's feed delivered to its subscribers.", nil, nil)
	feedLag = prometheus.NewDesc(feedNames[1],
		"Events in the durable log this instance's feed has not delivered yet (log head minus feed position).", nil, nil)
)

// WatchFeed registers the event-log follower's position and lag, read at every scrape: position
// is the feed's last delivered cursor, head reads the log's highest cursor. When head fails, the
// lag is left out of that scrape rather than reported wrong.
func (m *Metrics) WatchFeed(position func() int64, head func(context.Context) (int64, error)) {
	m.Registry.MustRegister(feedCollector{position: position, head: head})
	m.names = append(m.names, feedNames...)
}

type feedCollector struct {
	position func() int64
	head     func(context.Context) (int64, error)
}

// Describe sends the descriptors of the feed metrics.
func (feedCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- feedPosition
	ch <- feedLag
}

// Collect reads the feed's position, then the log's head: read in that order, the lag is never
// below the true one at the time of the scrape.
func (c feedCollector) Collect(ch chan<- prometheus.Metric) {
	pos := c.position()
	ch <- prometheus.MustNewConstMetric(feedPosition, prometheus.GaugeValue, float64(pos))
	ctx, cancel := context.WithTimeout(context.Background(), feedScrapeTimeout)
	defer cancel()
	head, err := c.head(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(feedLag, prometheus.GaugeValue, float64(max(head-pos, 0)))
}
