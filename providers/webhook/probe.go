package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/forkgraph/forkgraph/forkengine"
)

// ProbeTurns asks the adapter about the whole batch and returns its answers in order. The batch
// goes in one request unless its body would exceed Options.MaxProbeRequestBytes; then it is split,
// in order, into requests that each stay under it (every probe repeats its session, settings
// included, so a page of turns of one session can be many MiB). An empty batch makes no request.
// Any failure of any request, or an answer of the wrong length, is an error, which callers read as
// "no" for every probe; a transport failure or a 5xx wraps forkengine.ErrProviderUnavailable, as
// for Describe.
func (d *Driver) ProbeTurns(ctx context.Context, probes []forkengine.Probe) ([]bool, error) {
	chunks, err := d.probeChunks(probes)
	if err != nil {
		return nil, err
	}
	out := make([]bool, 0, len(probes))
	for _, c := range chunks {
		answers, err := d.probeOnce(ctx, c.body, c.count)
		if err != nil {
			return nil, err
		}
		out = append(out, answers...)
	}
	return out, nil
}

// probeChunk is one /probe request body and how many probes it carries.
type probeChunk struct {
	body  []byte
	count int
}

var (
	probeBodyOpen  = []byte(`{"probes":[`)
	probeBodyClose = []byte(`]}`)
)

// probeChunks encodes each probe once and packs them, in order, into bodies of at most d.maxProbe
// bytes; a probe too large for any body gets one of its own.
func (d *Driver) probeChunks(probes []forkengine.Probe) ([]probeChunk, error) {
	var chunks []probeChunk
	var cur probeChunk
	flush := func() {
		if cur.count > 0 {
			cur.body = append(cur.body, probeBodyClose...)
			chunks = append(chunks, cur)
		}
		cur = probeChunk{}
	}
	for _, p := range probes {
		enc, err := json.Marshal(wireProbe{Session: toWireSession(p.Session), Turn: toWireTurn(p.Turn)})
		if err != nil {
			return nil, fmt.Errorf("encode /probe request: %w", err)
		}
		if cur.count > 0 && int64(len(cur.body)+1+len(enc)+len(probeBodyClose)) > d.maxProbe {
			flush()
		}
		if cur.count == 0 {
			cur.body = append(bytes.Clone(probeBodyOpen), enc...)
		} else {
			cur.body = append(append(cur.body, ','), enc...)
		}
		cur.count++
	}
	flush()
	return chunks, nil
}

// probeOnce sends one /probe body of count probes and returns its answers.
func (d *Driver) probeOnce(ctx context.Context, body []byte, count int) ([]bool, error) {
	r, err := d.send(ctx, "/probe", body, nil)
	if err != nil {
		return nil, r.availability(err)
	}
	if !r.ok() {
		return nil, r.availability(r.statusError("/probe"))
	}
	var out probeResponse
	if err := json.Unmarshal(r.body, &out); err != nil {
		return nil, fmt.Errorf("decode /probe response: %w", err)
	}
	if len(out.Forkable) != count {
		return nil, fmt.Errorf("/probe answered %d values for %d probes", len(out.Forkable), count)
	}
	return out.Forkable, nil
}
