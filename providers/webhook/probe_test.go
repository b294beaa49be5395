package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/webhook"
)

// probeAdapter answers /probe like the reference adapter, within its 8 MiB request limit: a turn
// is forkable when its sequence is odd, so the order of the answers is checked too. It records
// the size of every body and how many probes it held.
type probeAdapter struct {
	mu     sync.Mutex
	sizes  []int
	counts []int
	fail   int // answer 503 to this request (1-based); 0: never
}

func (a *probeAdapter) serve(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Probes []struct {
			Turn struct {
				Sequence int64 `json:"sequence"`
			} `json:"turn"`
		} `json:"probes"`
	}
	n := &countingReader{r: http.MaxBytesReader(w, r.Body, 8<<20)}
	err := json.NewDecoder(n).Decode(&in)
	a.mu.Lock()
	a.sizes, a.counts = append(a.sizes, n.n), append(a.counts, len(in.Probes))
	nth := len(a.sizes)
	a.mu.Unlock()
	switch {
	case err != nil:
		reply(w, 400, fmt.Sprintf(`{"error":%q}`, err.Error()))
		return
	case nth == a.fail:
		reply(w, 503, ``)
		return
	}
	answers := make([]bool, len(in.Probes))
	for i, p := range in.Probes {
		answers[i] = p.Turn.Sequence%2 == 1
	}
	body, _ := json.Marshal(map[string][]bool{"forkable": answers})
	reply(w, 200, string(body))
}

type countingReader struct {
	r interface{ Read([]byte) (int, error) }
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// pageOfLargeSession is one page of turns (first: 200, the API's maximum) of a session whose
// settings are as large as reportSession allows.
func pageOfLargeSession() []forkengine.Probe {
	s := sourceSession()
	s.Settings = json.RawMessage(`{"notes":"` + strings.Repeat("x", forkengine.MaxJSONBytes-100) + `"}`)
	probes := make([]forkengine.Probe, 200)
	for i := range probes {
		probes[i] = forkengine.Probe{Session: s, Turn: boundTurn(fmt.Sprintf("t%d", i+1), int64(i+1))}
	}
	return probes
}

// Every probe repeats its session, so a page of 200 turns of a session with 64 KiB of settings is
// about 13 MiB: more than the reference adapter reads. The driver splits it into requests under
// MaxProbeRequestBytes, in order, and every turn is answered.
func TestProbeTurnsSplitsABatchTooLargeForOneRequest(t *testing.T) {
	for name, opts := range map[string]webhook.Options{
		"DefaultBudget": {},
		"SmallBudget":   {MaxProbeRequestBytes: 1 << 20},
	} {
		t.Run(name, func(t *testing.T) {
			budget := opts.MaxProbeRequestBytes
			if budget == 0 {
				budget = webhook.DefaultMaxProbeRequestBytes
			}
			a := &probeAdapter{}
			d, hits := adapter(t, opts, a.serve)
			probes := pageOfLargeSession()
			got, err := d.ProbeTurns(context.Background(), probes)
			if err != nil {
				t.Fatalf("ProbeTurns of one page: %v (every turn reads as unforkable)", err)
			}
			for i, ok := range got {
				if ok != (probes[i].Turn.Sequence%2 == 1) {
					t.Fatalf("answer %d = %v: answers out of order", i, ok)
				}
			}
			total := 0
			for i, size := range a.sizes {
				if int64(size) > budget {
					t.Fatalf("request %d is %d bytes, over the budget of %d", i, size, budget)
				}
				total += a.counts[i]
			}
			if hits.Load() < 2 || total != len(probes) {
				t.Fatalf("%d requests carried %d probes; want the %d probes split over several", hits.Load(), total, len(probes))
			}
		})
	}
}

// A probe larger than the budget on its own still goes, alone; a small batch is still one request.
func TestProbeTurnsSendsAnOversizedProbeAlone(t *testing.T) {
	a := &probeAdapter{}
	d, hits := adapter(t, webhook.Options{MaxProbeRequestBytes: 1 << 10}, a.serve)
	probes := pageOfLargeSession()[:3]
	got, err := d.ProbeTurns(context.Background(), probes)
	if err != nil || len(got) != 3 || !got[0] || got[1] || !got[2] {
		t.Fatalf("ProbeTurns = %v, %v; want [true false true]", got, err)
	}
	if hits.Load() != 3 {
		t.Fatalf("%d requests for 3 probes each over the budget, want 3", hits.Load())
	}
}

// One failed request of a split batch fails the whole batch: forkability fails closed.
func TestProbeTurnsFailsTheWholeBatchWhenOneRequestFails(t *testing.T) {
	a := &probeAdapter{fail: 2}
	d, _ := adapter(t, webhook.Options{MaxProbeRequestBytes: 1 << 20}, a.serve)
	if got, err := d.ProbeTurns(context.Background(), pageOfLargeSession()); err == nil {
		t.Fatalf("ProbeTurns = %v with the second request answered 503, want an error", got)
	}
}
