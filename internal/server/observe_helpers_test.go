package server_test

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a log sink the server writes to from many goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// scrape reads /metrics and returns the raw exposition and its parsed families.
func scrape(t *testing.T, base string) ([]byte, map[string]*dto.MetricFamily) {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	require.NoError(t, err)
	return raw, families
}

// sample is the value of the series of family name whose labels include want: a counter's or
// gauge's value, a histogram's sample count. A missing series is 0.
func sample(families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := families[name]
	if f == nil {
		return 0
	}
	var total float64
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if labels[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Histogram != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return total
}

// histogramSum is the sum of the histogram series of name whose labels include want.
func histogramSum(families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := families[name]
	if f == nil {
		return 0
	}
	var total float64
	for _, m := range f.GetMetric() {
		ok := true
		for _, l := range m.GetLabel() {
			if v, set := want[l.GetName()]; set && v != l.GetValue() {
				ok = false
			}
		}
		if ok && m.Histogram != nil {
			total += m.GetHistogram().GetSampleSum()
		}
	}
	return total
}

// labels is shorthand for a label set.
func labels(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}
